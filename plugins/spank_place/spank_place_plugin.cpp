// spank_place: the placement options select/topo has no Slurm field for.
//
//   sbatch --comm=heavy ...          communication-heavy gang: tightest, least loaded domain
//   sbatch --locality=leaf:strict    the gang must fit under one leaf switch (waits otherwise)
//   sbatch --gpu-tier=value          a need instead of a model: value, balanced, fast or a
//                                    site tier (loom-topo.conf gpu_tier.NAME), with
//                                    --gpu-min-class=CLASS, --gpu-mem=SIZE, --gpu-workload=train|infer
//
// Tier and class names are checked at submit against the site's table
// (loom-topo.conf beside slurm.conf: lib/place/tiers.hpp): an unknown one, or
// bounds no class meets, is refused with the names the site has; --help lists
// the site's tiers.
//
// Values are checked where the user typed them (sbatch, salloc, srun): a bad
// value is refused at submit time naming the option, the value and the words
// allowed (lib/place/hints.hpp: the same words as `loom place --request` and
// --explain). Slurm carries accepted options to slurmctld in the job's SPANK
// environment, where select/topo reads them (plugins/common/place_hints.hpp).
//
// In slurmstepd (each task of a batch or srun step), the task learns the rank
// order select/topo's engine uses, consecutive ranks closest on the fabric
// (lib/place/ranks.hpp), from the fabric select/topo reads (loom-topo.conf,
// else topology.conf/topology.yaml beside slurm.conf):
//
//   LOOM_NODE_RANK       this node's place in that order (0 first)
//   LOOM_HOSTFILE        the step's nodes in that order, one per line
//                        (torchrun --node_rank, mpirun --hostfile)
//   LOOM_TASK_HOSTFILE   one line per task in that order, for
//                        SLURM_HOSTFILE=... srun --distribution=arbitrary
//   LOOM_RANK_ORDER_ERROR  instead, when the order cannot be known (no
//                        fabric file, a node list it cannot read): why
//
// plugstack.conf arguments: rank_order=yes|no (default yes), conf_dir=DIR
// (slurm.conf's directory; default: the directory of SLURM_CONF as slurmstepd
// or the job sees it, else the one Slurm was built for), fabric_module=PATH
// (default: loom_fabric.so beside this plugin; fabric_module.hpp).
//
// Here: the options, one table and one callback, and the hooks, each inside
// one exception guard (no exception reaches Slurm). The slurmstepd side, the
// step's files and the task's environment, is step_env.cpp.
#include "lib/place/tiers.hpp"
#include "lib/util/config.hpp"
#include "plugins/common/place_hints.hpp"
#include "plugins/common/spank_guard.hpp"
#include "plugins/spank_place/step_env.hpp"

#include <cstring>
#include <exception>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/spank.h>
}

namespace {

using namespace loom;
namespace pl = loom::spank_place;

const char *const prefix = "spank_place";

struct State {
	pl::Site site;
	bool comm_env = false; // this job asked for --comm-env=auto
	place::Need need;      // --gpu-tier, --gpu-min-class, --gpu-mem, --gpu-workload, --gpu-mixed, as given
	std::string tier_words = place::builtin_tier_words; // --help: the site's tiers too
	pl::StepEnv step;                                   // slurmstepd: this step on this node
};
State g;

// The site's GPU classes and tiers (loom-topo.conf beside slurm.conf).
expected<place::TierTable> site_tiers(spank_t sp)
{
	return place::read_tier_table(pl::conf_dir(g.site, sp) + "/loom-topo.conf");
}

// A value that parsed into the field it sets, or the parser's error (which
// names the option, the value and the words allowed).
template <typename T, typename Field>
status store(expected<T> v, Field &field)
{
	if (!v)
		return unexpected(v.error());
	field = std::move(*v);
	return ok();
}

// A value that only has to parse: select/topo reads it from the job's SPANK
// environment (plugins/common/place_hints.hpp).
template <typename T>
status checked(const expected<T> &v)
{
	if (!v)
		return unexpected(v.error());
	return ok();
}

status comm_env_option(std::string_view v)
{
	if (v != "auto" && v != "off")
		return unexpected("--comm-env: bad value '" + std::string(v) + "': expected auto or off");
	g.comm_env = v == "auto";
	if (g.comm_env && !g.site.comm_env && spank_context() != S_CTX_REMOTE)
		return unexpected("--comm-env=auto: this site has not enabled it (comm_env=yes on spank_place's "
				  "plugstack.conf line)");
	return ok();
}

status gpu_mixed_option(std::string_view)
{
	g.need.mixed = true;
	return ok();
}

// One option: what sbatch --help shows, and what its value does. Each value
// is judged alone, its syntax; the tier and class names are checked against
// the site's table once all are in (slurm_spank_init_post_opt).
struct Option {
	const char *name;
	const char *arginfo;
	const char *usage;
	int has_arg;
	status (*apply)(std::string_view value);
};

const Option table[] = {
	{plugin::opt_comm, place::comm_words,
	 "[loom] communication intensity of the job: heavy gets the tightest, least loaded part of the fabric "
	 "(default: normal)",
	 1, [](std::string_view v) { return checked(plugin::comm_option(v)); }},
	{plugin::opt_locality, place::locality_words,
	 "[loom] fit the whole job under one fabric domain of this kind (leaf, pod, nvlink, ...); strict: wait "
	 "until it fits, prefer: best effort (default)",
	 1, [](std::string_view v) { return checked(plugin::locality_option(v)); }},
	{"comm-env", "auto|off",
	 "[loom] NCCL settings from the fabric in each task: NCCL_TOPO_FILE and NCCL_IB_HCA, never over the "
	 "job's own (default: off)",
	 1, comm_env_option},
	{plugin::opt_gpu_tier, place::builtin_tier_words,
	 "[loom] a GPU tier instead of a model: value = lowest price per unit of work, fast = highest throughput "
	 "free now, balanced = between; or a site tier",
	 1, [](std::string_view v) { return store(plugin::gpu_name_option(plugin::opt_gpu_tier, v), g.need.tier); }},
	{plugin::opt_gpu_min_class, "CLASS", "[loom] with --gpu-tier: only GPU classes at least as fast as CLASS", 1,
	 [](std::string_view v) {
		 return store(plugin::gpu_name_option(plugin::opt_gpu_min_class, v), g.need.min_class);
	 }},
	{plugin::opt_gpu_mem, "SIZE", "[loom] only GPU classes with at least SIZE of memory per GPU (80G)", 1,
	 [](std::string_view v) { return store(plugin::gpu_mem_option(v), g.need.min_mem); }},
	{plugin::opt_gpu_workload, place::workload_words,
	 "[loom] which throughput of a class counts for --gpu-tier (default: the class's own)", 1,
	 [](std::string_view v) { return store(plugin::gpu_workload_option(v), g.need.workload); }},
	{plugin::opt_gpu_mixed, nullptr,
	 "[loom] with --gpu-tier: the gang may span GPU classes when no one class of the tier holds it (it runs "
	 "at the pace of its slowest GPU)",
	 0, gpu_mixed_option},
};

// The one callback: val is the option's place in the table.
int option_cb(int val, const char *optarg, int /*remote*/)
{
	if (val < 0 || static_cast<size_t>(val) >= std::size(table))
		return -1;
	const Option &o = table[val];
	try {
		if (auto st = o.apply(optarg ? optarg : ""); !st) {
			slurm_error("loom: %s", st.error().str().c_str());
			return -1;
		}
		return 0;
	} catch (...) {
		slurm_error("loom: --%s: unexpected failure", o.name);
		return -1;
	}
}

// The table as Slurm registers it, --gpu-tier's words with the site's tiers.
struct spank_option registered[std::size(table)];

void fill_registered()
{
	for (size_t i = 0; i < std::size(table); i++) {
		const Option &o = table[i];
		const char *arginfo = std::strcmp(o.name, plugin::opt_gpu_tier) == 0 ? g.tier_words.c_str() : o.arginfo;
		registered[i] = {const_cast<char *>(o.name),  const_cast<char *>(arginfo),
				 const_cast<char *>(o.usage), o.has_arg,
				 static_cast<int>(i),         option_cb};
	}
}

// Every hook runs in here (plugins/common/spank_guard.hpp): -1 where the job
// can still be refused, 0 in the task's hooks, which never fail a task.
template <typename F>
int guarded(const char *hook, int failed, F &&fn)
{
	return loom::plugin::spank_guarded(prefix, hook, failed, std::forward<F>(fn));
}

// Its arguments, fail-closed: an unknown word (meant for another plugin?) is
// refused, not ignored.
status parse_site(int ac, char **av)
{
	auto site = place::parse_site_args(ac, av, "plugstack.conf: spank_place");
	if (!site)
		return unexpected(site.error());
	g.site = std::move(*site);
	return ok();
}

// Never fails the task: a job that cannot learn loom's order runs in
// Slurm's, one without NCCL settings with NCCL's own discovery, and each
// says why.
void remote_task_init(spank_t sp)
{
	if (g.site.rank_order)
		if (auto st = g.step.set_rank_env(g.site, sp); !st) {
			slurm_error("%s: rank order: %s", prefix, st.error().str().c_str());
			(void)spank_unsetenv(sp, "LOOM_NODE_RANK");
			(void)spank_unsetenv(sp, "LOOM_HOSTFILE");
			(void)spank_unsetenv(sp, "LOOM_TASK_HOSTFILE");
			(void)spank_setenv(sp, "LOOM_RANK_ORDER_ERROR", st.error().str().c_str(), 1);
		}
	if (!g.comm_env)
		return;
	if (!g.site.comm_env)
		(void)spank_setenv(sp, "LOOM_COMM_ENV_ERROR",
				   "this site has not enabled --comm-env (spank_place comm_env=yes)", 1);
	else if (auto st = g.step.set_comm_env(g.site, sp); !st) {
		slurm_error("%s: --comm-env: %s", prefix, st.error().str().c_str());
		pl::StepEnv::drop_inherited_comm_env(sp);
		(void)spank_setenv(sp, "LOOM_COMM_ENV_ERROR", st.error().str().c_str(), 1);
	}
}

} // namespace

#pragma GCC visibility push(default)
extern "C" {

extern const char plugin_name[];
extern const char plugin_type[];
extern const unsigned int plugin_version;
const char plugin_name[] = "loom_place";
const char plugin_type[] = "spank";
const unsigned int plugin_version = SLURM_VERSION_NUMBER;

int slurm_spank_init(spank_t sp, int ac, char **av);
int slurm_spank_init_post_opt(spank_t sp, int ac, char **av);
int slurm_spank_user_init(spank_t sp, int ac, char **av);
int slurm_spank_task_init(spank_t sp, int ac, char **av);
int slurm_spank_exit(spank_t sp, int ac, char **av);

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	return guarded("init", -1, [&] {
		if (auto st = parse_site(ac, av); !st) {
			slurm_error("%s: %s", prefix, st.error().str().c_str());
			return -1;
		}
		// The site's tiers in --help (sbatch, salloc, srun only).
		if (!spank_remote(sp))
			if (auto t = site_tiers(sp); t && !t->site_tiers.empty())
				g.tier_words = t->tier_words();
		fill_registered();
		// Slurm 22.05's sbatch/salloc ignore a static spank_options table:
		// register in every context.
		for (auto &o : registered) {
			spank_err_t rc = spank_option_register(sp, &o);
			if (rc != ESPANK_SUCCESS) {
				slurm_error("loom: cannot register --%s: %s", o.name, spank_strerror(rc));
				return -1;
			}
		}
		return 0;
	});
}

// Once every option is in (sbatch, salloc, srun): the need against the
// site's table. An unknown tier or class, or bounds that no class meets,
// refuse the job here, naming what the site has.
int slurm_spank_init_post_opt(spank_t sp, int, char **)
{
	return guarded("init_post_opt", -1, [&] {
		if (spank_remote(sp))
			return 0;
		if (g.need.mixed && !g.need.given()) {
			slurm_error("loom: --gpu-mixed: only with --gpu-tier, --gpu-min-class or --gpu-mem (a job "
				    "without them may already get any class)");
			return -1;
		}
		if (!g.need.given())
			return 0;
		auto t = site_tiers(sp);
		if (!t) {
			slurm_error("loom: cannot check --gpu-tier: %s", t.error().str().c_str());
			return -1;
		}
		auto plan = place::plan_tier(*t, g.need, 0);
		if (!plan) {
			slurm_error("loom: %s", plan.error().str().c_str());
			return -1;
		}
		if (plan->eligible == 0) {
			slurm_error("loom: no GPU class meets --gpu-tier/--gpu-min-class/--gpu-mem: %s",
				    place::describe_plan(*plan).c_str());
			return -1;
		}
		return 0;
	});
}

// slurmstepd, once per step and node: the hostfile's name, loom_fabric.so.
int slurm_spank_user_init(spank_t sp, int, char **)
{
	return guarded("user_init", 0, [&] {
		if (!spank_remote(sp) || (!g.site.rank_order && !g.comm_env))
			return 0;
		if (auto st = g.step.name_hostfile(sp); !st)
			slurm_error("%s: %s", prefix, st.error().str().c_str());
		else if (g.step.has_hostfile())
			g.step.open_fabric_module(g.site);
		return 0;
	});
}

// Each task, before it runs: the job's environment is complete only then.
int slurm_spank_task_init(spank_t sp, int, char **)
{
	return guarded("task_init", 0, [&] {
		if (spank_remote(sp) && g.step.has_hostfile())
			remote_task_init(sp);
		return 0;
	});
}

int slurm_spank_exit(spank_t sp, int, char **)
{
	return guarded("exit", 0, [&] {
		if (spank_remote(sp))
			g.step.remove_files();
		return 0;
	});
}

} // extern "C"
#pragma GCC visibility pop
