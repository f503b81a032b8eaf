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
#include "lib/util/config.hpp"
#include "plugins/common/place_hints.hpp"
#include "plugins/spank_place/fabric_module.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <exception>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#include <vector>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/spank.h>
}

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
}
#pragma GCC visibility pop

namespace {

struct Site {
	bool rank_order = true;
	bool comm_env = false; // jobs may ask for --comm-env=auto
	std::string conf_dir;
	std::string fabric_module;
};
Site g_site;
bool g_comm_env = false; // this job asked for --comm-env=auto
loom::place::Need g_need; // --gpu-tier, --gpu-min-class, --gpu-mem, --gpu-workload, --gpu-mixed, as given
std::string g_tier_words = loom::place::builtin_tier_words; // --help: the site's tiers too

int opt_comm(int, const char *optarg, int)
{
	try {
		auto c = loom::plugin::comm_option(optarg ? optarg : "");
		if (!c) {
			slurm_error("loom: %s", c.error().str().c_str());
			return -1;
		}
		return 0;
	} catch (...) {
		return -1;
	}
}

int opt_locality(int, const char *optarg, int)
{
	try {
		auto h = loom::plugin::locality_option(optarg ? optarg : "");
		if (!h) {
			slurm_error("loom: %s", h.error().str().c_str());
			return -1;
		}
		return 0;
	} catch (...) {
		return -1;
	}
}

int opt_comm_env(int, const char *optarg, int)
{
	try {
		std::string v = optarg ? optarg : "";
		if (v != "auto" && v != "off") {
			slurm_error("loom: --comm-env: bad value '%s': expected auto or off", v.c_str());
			return -1;
		}
		g_comm_env = v == "auto";
		if (g_comm_env && !g_site.comm_env && spank_context() != S_CTX_REMOTE) {
			slurm_error("loom: --comm-env=auto: this site has not enabled it (comm_env=yes on spank_place's "
				    "plugstack.conf line)");
			return -1;
		}
		return 0;
	} catch (...) {
		return -1;
	}
}

// Each option alone: its syntax (the names against the site's table once all
// are in: slurm_spank_init_post_opt).
int opt_gpu_tier(int, const char *optarg, int)
{
	try {
		auto t = loom::plugin::gpu_name_option(loom::plugin::opt_gpu_tier, optarg ? optarg : "");
		if (!t) {
			slurm_error("loom: %s", t.error().str().c_str());
			return -1;
		}
		g_need.tier = *t;
		return 0;
	} catch (...) {
		return -1;
	}
}

int opt_gpu_min_class(int, const char *optarg, int)
{
	try {
		auto t = loom::plugin::gpu_name_option(loom::plugin::opt_gpu_min_class, optarg ? optarg : "");
		if (!t) {
			slurm_error("loom: %s", t.error().str().c_str());
			return -1;
		}
		g_need.min_class = *t;
		return 0;
	} catch (...) {
		return -1;
	}
}

int opt_gpu_mem(int, const char *optarg, int)
{
	try {
		auto m = loom::plugin::gpu_mem_option(optarg ? optarg : "");
		if (!m) {
			slurm_error("loom: %s", m.error().str().c_str());
			return -1;
		}
		g_need.min_mem = *m;
		return 0;
	} catch (...) {
		return -1;
	}
}

int opt_gpu_workload(int, const char *optarg, int)
{
	try {
		auto w = loom::plugin::gpu_workload_option(optarg ? optarg : "");
		if (!w) {
			slurm_error("loom: %s", w.error().str().c_str());
			return -1;
		}
		g_need.workload = *w;
		return 0;
	} catch (...) {
		return -1;
	}
}

int opt_gpu_mixed(int, const char *, int)
{
	g_need.mixed = true;
	return 0;
}

struct spank_option g_options[] = {
	{const_cast<char *>(loom::plugin::opt_comm), const_cast<char *>(loom::place::comm_words),
	 const_cast<char *>("[loom] communication intensity of the job: heavy gets the tightest, least "
			    "loaded part of the fabric (default: normal)"),
	 1, 0, opt_comm},
	{const_cast<char *>(loom::plugin::opt_locality), const_cast<char *>(loom::place::locality_words),
	 const_cast<char *>("[loom] fit the whole job under one fabric domain of this kind (leaf, pod, "
			    "nvlink, ...); strict: wait until it fits, prefer: best effort (default)"),
	 1, 0, opt_locality},
	{const_cast<char *>("comm-env"), const_cast<char *>("auto|off"),
	 const_cast<char *>("[loom] NCCL settings from the fabric in each task: NCCL_TOPO_FILE and NCCL_IB_HCA, "
			    "never over the job's own (default: off)"),
	 1, 0, opt_comm_env},
	{const_cast<char *>(loom::plugin::opt_gpu_tier), const_cast<char *>(loom::place::builtin_tier_words),
	 const_cast<char *>("[loom] a GPU tier instead of a model: value = lowest price per unit of work, "
			    "fast = highest throughput free now, balanced = between; or a site tier"),
	 1, 0, opt_gpu_tier},
	{const_cast<char *>(loom::plugin::opt_gpu_min_class), const_cast<char *>("CLASS"),
	 const_cast<char *>("[loom] with --gpu-tier: only GPU classes at least as fast as CLASS"), 1, 0,
	 opt_gpu_min_class},
	{const_cast<char *>(loom::plugin::opt_gpu_mem), const_cast<char *>("SIZE"),
	 const_cast<char *>("[loom] only GPU classes with at least SIZE of memory per GPU (80G)"), 1, 0, opt_gpu_mem},
	{const_cast<char *>(loom::plugin::opt_gpu_workload), const_cast<char *>(loom::place::workload_words),
	 const_cast<char *>("[loom] which throughput of a class counts for --gpu-tier (default: the class's own)"), 1, 0,
	 opt_gpu_workload},
	{const_cast<char *>(loom::plugin::opt_gpu_mixed), nullptr,
	 const_cast<char *>("[loom] with --gpu-tier: the gang may span GPU classes when no one class of the tier "
			    "holds it (it runs at the pace of its slowest GPU)"),
	 0, 0, opt_gpu_mixed},
	SPANK_OPTIONS_TABLE_END};

// This step's hostfile on this node, named in user_init (slurmstepd), written
// by each task before it runs (task_init: the job's environment is complete
// only then), removed at exit.
std::string g_hostfile;
// loom_fabric.so, opened in user_init (once per step and node).
loom_fabric_step_ranks_fn g_step_ranks = nullptr;
loom_fabric_free_fn g_free = nullptr;
loom_fabric_nccl_env_fn g_nccl_env = nullptr;
loom_fabric_free_nccl_fn g_free_nccl = nullptr;
std::string g_module_error;

std::string job_env(spank_t sp, const char *name)
{
	std::vector<char> buf(1 << 16);
	if (spank_getenv(sp, name, buf.data(), static_cast<int>(buf.size())) != ESPANK_SUCCESS)
		return {};
	return buf.data();
}

std::string dir_of(const std::string &path)
{
	size_t slash = path.find_last_of('/');
	return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::string conf_dir(spank_t sp)
{
	if (!g_site.conf_dir.empty())
		return g_site.conf_dir;
	if (const char *c = std::getenv("SLURM_CONF"); c && *c)
		return dir_of(c);
	if (std::string c = job_env(sp, "SLURM_CONF"); !c.empty())
		return dir_of(c);
	return LOOM_SLURM_SYSCONFDIR;
}

// The site's GPU classes and tiers (loom-topo.conf beside slurm.conf).
loom::expected<loom::place::TierTable> site_tiers(spank_t sp)
{
	return loom::place::read_tier_table(conf_dir(sp) + "/loom-topo.conf");
}

// One line per name, written as the job's user (tasks run with its
// privileges), never through a link, and whole: the tasks of a node each
// write the same file, so each writes its own and renames it into place.
loom::status write_lines(const std::string &path, const std::vector<std::string> &lines)
{
	std::string tmp = path + ".tmp." + std::to_string(::getpid());
	int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return loom::unexpected(tmp + ": " + std::strerror(errno));
	std::string text;
	for (const std::string &l : lines)
		text += l + "\n";
	size_t off = 0;
	int err = 0;
	while (off < text.size()) {
		ssize_t n = ::write(fd, text.data() + off, text.size() - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			break;
		}
		off += static_cast<size_t>(n);
	}
	if (::close(fd) != 0 && err == 0)
		err = errno;
	if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0)
		err = errno;
	if (err != 0) {
		(void)::unlink(tmp.c_str());
		return loom::unexpected(path + ": " + std::strerror(err));
	}
	return {};
}

void open_fabric_module()
{
	std::string path = g_site.fabric_module;
	if (path.empty()) {
		Dl_info self{};
		if (::dladdr(reinterpret_cast<void *>(&open_fabric_module), &self) == 0 || !self.dli_fname) {
			g_module_error = "cannot tell where spank_place.so is (dladdr)";
			return;
		}
		path = dir_of(self.dli_fname) + "/loom_fabric.so";
	}
	void *h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = ::dlerror();
		g_module_error = "cannot load " + path + ": " + (e ? e : "unknown error");
		return;
	}
	auto abi = reinterpret_cast<loom_fabric_abi_fn>(::dlsym(h, "loom_fabric_abi"));
	auto ranks = reinterpret_cast<loom_fabric_step_ranks_fn>(::dlsym(h, "loom_fabric_step_ranks"));
	auto release = reinterpret_cast<loom_fabric_free_fn>(::dlsym(h, "loom_fabric_free"));
	auto nccl = reinterpret_cast<loom_fabric_nccl_env_fn>(::dlsym(h, "loom_fabric_nccl_env"));
	auto release_nccl = reinterpret_cast<loom_fabric_free_nccl_fn>(::dlsym(h, "loom_fabric_free_nccl"));
	if (!abi || !ranks || !release || !nccl || !release_nccl || abi() != LOOM_FABRIC_ABI) {
		g_module_error = path + " is not loom_fabric.so of interface " + std::to_string(LOOM_FABRIC_ABI) +
				 " (another loom's?)";
		::dlclose(h);
		return;
	}
	g_step_ranks = ranks;
	g_free = release;
	g_nccl_env = nccl;
	g_free_nccl = release_nccl;
}

// user_init: where this step's hostfile goes on this node (the job, the
// step and the node's place in it name it: one per node even where nodes
// share a TMPDIR, as the slurmd of one test host do).
loom::status name_hostfile(spank_t sp)
{
	uint32_t job = 0, step = 0, nodeid = 0;
	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_NODEID, &nodeid) != ESPANK_SUCCESS)
		return loom::unexpected("cannot read the job, step and node ids from Slurm");
	if (step == SLURM_EXTERN_CONT)
		return {};
	std::string tmp = job_env(sp, "TMPDIR");
	if (tmp.empty() || tmp[0] != '/' || ::access(tmp.c_str(), W_OK | X_OK) != 0)
		tmp = "/tmp";
	// slurmstepd's pid too: job ids repeat across clusters, and a TMPDIR may
	// be shared by several (test clusters on one host do).
	g_hostfile = tmp + "/loom-hosts." + std::to_string(job) + "." +
		     (step == SLURM_BATCH_SCRIPT ? std::string("batch") : std::to_string(step)) + "." +
		     std::to_string(nodeid) + "." + std::to_string(::getpid());
	return {};
}

// task_init: the order, from the environment Slurm gave the task.
loom::status set_rank_env(spank_t sp)
{
	uint32_t step = 0;
	if (spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS)
		return loom::unexpected("cannot read the step id from Slurm");
	bool batch = step == SLURM_BATCH_SCRIPT;
	std::string nodes = batch ? job_env(sp, "SLURM_JOB_NODELIST") : job_env(sp, "SLURM_STEP_NODELIST");
	if (nodes.empty())
		nodes = job_env(sp, "SLURM_JOB_NODELIST");
	std::string tasks = batch ? job_env(sp, "SLURM_TASKS_PER_NODE") : job_env(sp, "SLURM_STEP_TASKS_PER_NODE");
	std::string me = job_env(sp, "SLURMD_NODENAME");
	if (nodes.empty())
		return loom::unexpected("the task's environment has no SLURM_JOB_NODELIST");
	if (me.empty())
		return loom::unexpected("the task's environment has no SLURMD_NODENAME");
	if (!g_step_ranks)
		return loom::unexpected(g_module_error);
	std::string dir = conf_dir(sp);
	loom_step_ranks out{};
	int rc = g_step_ranks(dir.c_str(), SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0), nodes.c_str(), me.c_str(),
			      tasks.c_str(), &out);
	std::string why = out.error ? out.error : "";
	std::string order_text = out.order ? out.order : "", task_text = out.task_hosts ? out.task_hosts : "";
	unsigned node_rank = out.node_rank;
	g_free(&out);
	if (rc != 0)
		return loom::unexpected(why.empty() ? std::string("the fabric module failed") : why);
	auto split = [](const std::string &t) {
		std::vector<std::string> v;
		size_t b = 0;
		for (size_t e; (e = t.find('\n', b)) != std::string::npos; b = e + 1)
			v.push_back(t.substr(b, e - b));
		return v;
	};
	std::vector<std::string> order = split(order_text), task_hosts = split(task_text);
	if (auto st = write_lines(g_hostfile, order); !st)
		return st;
	if (spank_setenv(sp, "LOOM_HOSTFILE", g_hostfile.c_str(), 1) != ESPANK_SUCCESS ||
	    spank_setenv(sp, "LOOM_NODE_RANK", std::to_string(node_rank).c_str(), 1) != ESPANK_SUCCESS)
		return loom::unexpected("cannot set LOOM_NODE_RANK and LOOM_HOSTFILE in the job's environment");
	if (!task_hosts.empty()) {
		std::string tf = g_hostfile + ".tasks";
		if (auto st = write_lines(tf, task_hosts); !st)
			return st;
		if (spank_setenv(sp, "LOOM_TASK_HOSTFILE", tf.c_str(), 1) != ESPANK_SUCCESS)
			return loom::unexpected("cannot set LOOM_TASK_HOSTFILE in the job's environment");
	}
	return {};
}

// NCCL settings loom made in the batch step and a step inherited: they
// name another node's file and HCAs; gone when this node's cannot be given.
void drop_inherited_comm_env(spank_t sp)
{
	for (auto [var, mark] : {std::pair{"NCCL_TOPO_FILE", "LOOM_NCCL_TOPO_FILE"},
				 std::pair{"NCCL_IB_HCA", "LOOM_NCCL_IB_HCA"}}) {
		std::string v = job_env(sp, var);
		if (!v.empty() && v == job_env(sp, mark))
			(void)spank_unsetenv(sp, var);
		(void)spank_unsetenv(sp, mark);
	}
}

// task_init with --comm-env=auto: NCCL_TOPO_FILE (written beside the
// hostfile) and NCCL_IB_HCA, each only where the job has not set it; what
// was set, or why nothing could be, in LOOM_COMM_ENV / LOOM_COMM_ENV_ERROR.
loom::status set_comm_env(spank_t sp)
{
	if (!g_nccl_env)
		return loom::unexpected(g_module_error);
	std::string me = job_env(sp, "SLURMD_NODENAME");
	if (me.empty())
		return loom::unexpected("the task's environment has no SLURMD_NODENAME");
	std::string dir = conf_dir(sp);
	loom_nccl_env out{};
	int rc = g_nccl_env(dir.c_str(), SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0), me.c_str(), &out);
	std::string why = out.error ? out.error : "", xml = out.topo_xml ? out.topo_xml : "",
		    no_topo = out.no_topo ? out.no_topo : "", hca = out.ib_hca ? out.ib_hca : "";
	g_free_nccl(&out);
	if (rc != 0)
		return loom::unexpected(why.empty() ? std::string("the fabric module failed") : why);
	// The job's own setting is one loom did not make: a step inherits the
	// batch step's values (another node's file), and LOOM_NCCL_* say which
	// those were, so they are replaced, not kept.
	auto own = [&](const char *var, const char *mark) {
		std::string v = job_env(sp, var);
		return !v.empty() && v != job_env(sp, mark);
	};
	std::vector<std::string> set, kept, notes;
	if (own("NCCL_TOPO_FILE", "LOOM_NCCL_TOPO_FILE")) {
		kept.push_back("NCCL_TOPO_FILE");
	} else if (xml.empty()) {
		notes.push_back("no NCCL_TOPO_FILE: " + no_topo);
		(void)spank_unsetenv(sp, "NCCL_TOPO_FILE"); // another node's, if inherited
		(void)spank_unsetenv(sp, "LOOM_NCCL_TOPO_FILE");
	} else {
		std::string path = g_hostfile + ".nccl-topo.xml";
		std::vector<std::string> lines;
		size_t b = 0;
		for (size_t e; (e = xml.find('\n', b)) != std::string::npos; b = e + 1)
			lines.push_back(xml.substr(b, e - b));
		if (b < xml.size())
			lines.push_back(xml.substr(b));
		if (auto st = write_lines(path, lines); !st)
			return st;
		if (spank_setenv(sp, "NCCL_TOPO_FILE", path.c_str(), 1) != ESPANK_SUCCESS ||
		    spank_setenv(sp, "LOOM_NCCL_TOPO_FILE", path.c_str(), 1) != ESPANK_SUCCESS)
			return loom::unexpected("cannot set NCCL_TOPO_FILE in the job's environment");
		set.push_back("NCCL_TOPO_FILE");
	}
	if (own("NCCL_IB_HCA", "LOOM_NCCL_IB_HCA")) {
		kept.push_back("NCCL_IB_HCA");
	} else if (hca.empty()) {
		notes.push_back("no NCCL_IB_HCA: the fabric lists no HCA of " + me);
		(void)spank_unsetenv(sp, "NCCL_IB_HCA");
		(void)spank_unsetenv(sp, "LOOM_NCCL_IB_HCA");
	} else {
		if (spank_setenv(sp, "NCCL_IB_HCA", hca.c_str(), 1) != ESPANK_SUCCESS ||
		    spank_setenv(sp, "LOOM_NCCL_IB_HCA", hca.c_str(), 1) != ESPANK_SUCCESS)
			return loom::unexpected("cannot set NCCL_IB_HCA in the job's environment");
		set.push_back("NCCL_IB_HCA");
	}
	auto join = [](const std::vector<std::string> &v, const char *sep) {
		std::string s;
		for (const std::string &x : v)
			s += (s.empty() ? "" : sep) + x;
		return s;
	};
	std::string summary = "set: " + (set.empty() ? std::string("none") : join(set, " "));
	if (!kept.empty())
		summary += "; the job's own: " + join(kept, " ");
	if (!notes.empty())
		summary += "; " + join(notes, "; ");
	(void)spank_setenv(sp, "LOOM_COMM_ENV", summary.c_str(), 1);
	return {};
}

} // namespace

extern "C" int slurm_spank_init(spank_t sp, int ac, char **av)
{
	try {
		// Its arguments, fail-closed: an unknown word (meant for another
		// plugin?) is refused, not ignored.
		Site site;
		loom::ConfigSchema schema;
		schema.boolean("rank_order", &site.rank_order, "LOOM_NODE_RANK and LOOM_HOSTFILE in each step")
			.boolean("comm_env", &site.comm_env, "jobs may ask for NCCL settings from the fabric (--comm-env)")
			.string("conf_dir", &site.conf_dir, "slurm.conf's directory, where the fabric files are")
			.string("fabric_module", &site.fabric_module, "loom_fabric.so (default: beside spank_place.so)");
		if (auto st = schema.parse_args(ac, av, "plugstack.conf: spank_place"); !st) {
			slurm_error("spank_place: %s", st.error().str().c_str());
			return -1;
		}
		g_site = std::move(site);
		// The site's tiers in --help (sbatch, salloc, srun only).
		if (!spank_remote(sp))
			if (auto t = site_tiers(sp); t && !t->site_tiers.empty()) {
				g_tier_words = t->tier_words();
				for (struct spank_option *o = g_options; o->name; o++)
					if (!std::strcmp(o->name, loom::plugin::opt_gpu_tier))
						o->arginfo = const_cast<char *>(g_tier_words.c_str());
			}
		// Slurm 22.05's sbatch/salloc ignore a static spank_options table:
		// register in every context.
		for (struct spank_option *o = g_options; o->name; o++) {
			spank_err_t rc = spank_option_register(sp, o);
			if (rc != ESPANK_SUCCESS) {
				slurm_error("loom: cannot register --%s: %s", o->name, spank_strerror(rc));
				return -1;
			}
		}
		return 0;
	} catch (...) {
		return -1;
	}
}

// Once every option is in (sbatch, salloc, srun): the need against the
// site's table. An unknown tier or class, or bounds that no class meets,
// refuse the job here, naming what the site has.
extern "C" int slurm_spank_init_post_opt(spank_t sp, int, char **)
{
	try {
		if (spank_remote(sp))
			return 0;
		if (g_need.mixed && !g_need.given()) {
			slurm_error("loom: --gpu-mixed: only with --gpu-tier, --gpu-min-class or --gpu-mem (a job "
				    "without them may already get any class)");
			return -1;
		}
		if (!g_need.given())
			return 0;
		auto t = site_tiers(sp);
		if (!t) {
			slurm_error("loom: cannot check --gpu-tier: %s", t.error().str().c_str());
			return -1;
		}
		auto plan = loom::place::plan_tier(*t, g_need, 0);
		if (!plan) {
			slurm_error("loom: %s", plan.error().str().c_str());
			return -1;
		}
		if (plan->eligible == 0) {
			slurm_error("loom: no GPU class meets --gpu-tier/--gpu-min-class/--gpu-mem: %s",
				    loom::place::describe_plan(*plan).c_str());
			return -1;
		}
		return 0;
	} catch (...) {
		return -1;
	}
}

extern "C" int slurm_spank_user_init(spank_t sp, int, char **)
{
	try {
		if (!spank_remote(sp) || (!g_site.rank_order && !g_comm_env))
			return 0;
		if (auto st = name_hostfile(sp); !st)
			slurm_error("spank_place: %s", st.error().str().c_str());
		else if (!g_hostfile.empty() && !g_step_ranks && g_module_error.empty())
			open_fabric_module();
		return 0;
	} catch (...) {
		return 0;
	}
}

// Never fails the task: a job that cannot learn loom's order runs in
// Slurm's, one without NCCL settings with NCCL's own discovery, and each
// says why.
extern "C" int slurm_spank_task_init(spank_t sp, int, char **)
{
	try {
		if (!spank_remote(sp) || g_hostfile.empty())
			return 0;
		if (g_site.rank_order)
			if (auto st = set_rank_env(sp); !st) {
				slurm_error("spank_place: rank order: %s", st.error().str().c_str());
				(void)spank_unsetenv(sp, "LOOM_NODE_RANK");
				(void)spank_unsetenv(sp, "LOOM_HOSTFILE");
				(void)spank_unsetenv(sp, "LOOM_TASK_HOSTFILE");
				(void)spank_setenv(sp, "LOOM_RANK_ORDER_ERROR", st.error().str().c_str(), 1);
			}
		if (g_comm_env) {
			if (!g_site.comm_env)
				(void)spank_setenv(sp, "LOOM_COMM_ENV_ERROR",
						   "this site has not enabled --comm-env (spank_place comm_env=yes)", 1);
			else if (auto st = set_comm_env(sp); !st) {
				slurm_error("spank_place: --comm-env: %s", st.error().str().c_str());
				drop_inherited_comm_env(sp);
				(void)spank_setenv(sp, "LOOM_COMM_ENV_ERROR", st.error().str().c_str(), 1);
			}
		}
		return 0;
	} catch (...) {
		return 0;
	}
}

extern "C" int slurm_spank_exit(spank_t sp, int, char **)
{
	try {
		if (spank_remote(sp) && !g_hostfile.empty())
			for (const char *suffix : {"", ".tasks", ".nccl-topo.xml"})
				(void)::unlink((g_hostfile + suffix).c_str());
		return 0;
	} catch (...) {
		return 0;
	}
}
