// spank_ckpt: the symbols Slurm's SPANK loader looks up, and the dispatch
// by context. Option values and plugin arguments go to lib/ckpt to be
// judged; the remote side (slurmstepd) goes to job.cpp. Every hook catches
// everything: no exception reaches Slurm.
#include "lib/ckpt/options.hpp"
#include "lib/ckpt/standby_plan.hpp"
#include "lib/exchange/ckpt_job_env.hpp"
#include "lib/util/config.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/log.hpp"
#include "plugins/common/slurm_log.hpp"
#include "plugins/common/spank_guard.hpp"
#include "plugins/spank_ckpt/job.hpp"
#include "plugins/spank_ckpt/slurm_api.hpp"
#include "plugins/spank_ckpt/spank_options.hpp"
#include "plugins/spank_ckpt/standby_keeper.hpp"
#include "plugins/spank_ckpt/standby_setup.hpp"
#include "plugins/spank_ckpt/standby_srun.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <grp.h>
#include <optional>
#include <pwd.h>
#include <string>
#include <unistd.h>
#include <vector>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/spank.h>
}

namespace {

using namespace loom;
namespace sc = loom::spank_ckpt;

const char *const prefix = "spank_ckpt";

struct State {
	std::optional<ckpt::SiteConfig> site;
	ckpt::JobOptions opts;
	bool opts_bad = false;
	sc::JobFacts facts;
	std::optional<sc::JobSetup> setup;
	sc::JobCoordinator coordinator;
	// A job with standbys (job_submit/loom): its layout, the batch script's
	// environment that keeps its steps off the standbys, and their keeper.
	std::optional<sc::KeeperConfig> standby;
	std::vector<std::pair<std::string, std::string>> standby_env;
	std::string standby_notice; // --ckpt-standby given, no standbys added: the job's output says so
	sc::StandbyKeeper keeper;
	bool held = false;       // this start was held: the batch script must not run
	std::string hold_reason; // why, for the job's Comment
	std::string refused;     // the user's setup was refused: the script must not run, the job fails
	// The restart count slurmctld has (the S_SLURM_RESTART_COUNT item reads 0
	// in a batch step); -1 when it could not be asked, with the reason.
	int64_t slurm_restarts = -1;
	std::string slurm_restarts_error;
};
State g;

// The job's options (spank_options.hpp) go into g.opts, judged against the site's.
sc::OptionTarget option_target{&g.site, &g.opts, &g.opts_bad};

std::string getenv_job(spank_t sp, const char *name)
{
	char buf[8192];
	if (spank_getenv(sp, name, buf, sizeof(buf)) != ESPANK_SUCCESS)
		return {};
	return buf;
}

template <typename T>
bool item(spank_t sp, spank_item_t it, T *out)
{
	return spank_get_item(sp, it, out) == ESPANK_SUCCESS;
}

status gather_facts(spank_t sp, sc::JobFacts &f)
{
	uint32_t job = 0, step = 0, restarts = 0;
	uid_t uid = 0;
	gid_t gid = 0;
	if (!item(sp, S_JOB_ID, &job) || !item(sp, S_JOB_STEPID, &step) || !item(sp, S_JOB_UID, &uid) ||
	    !item(sp, S_JOB_GID, &gid))
		return unexpected("cannot read the job's id, step, uid or gid from Slurm");
	if (!item(sp, S_SLURM_RESTART_COUNT, &restarts))
		restarts = 0;
	f.job_id = job;
	f.batch_step = step == SLURM_BATCH_SCRIPT;
	f.cred.uid = uid;
	f.cred.gid = gid;
	gid_t *groups = nullptr;
	int ngroups = 0;
	if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &groups, &ngroups) == ESPANK_SUCCESS && groups)
		f.cred.groups.assign(groups, groups + ngroups);
	// The item reads 0 in a batch step's slurmstepd: slurmctld was asked at
	// init_post_opt.
	if (int64_t n = g.slurm_restarts; n > static_cast<int64_t>(restarts))
		restarts = static_cast<uint32_t>(n);
	else if (n < 0)
		slurm_info("%s: job %u: restart count unknown (%s)", prefix, job, g.slurm_restarts_error.c_str());
	f.restart_count = restarts;
	struct passwd pw, *res = nullptr;
	std::vector<char> buf(16384);
	if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &res) == 0 && res)
		f.user = pw.pw_name;
	else
		f.user = std::to_string(uid);
	// The job's environment gets SLURMD_NODENAME only at task setup, after
	// user_init; slurmstepd's own environment has it from its start.
	f.node = getenv_job(sp, "SLURMD_NODENAME");
	if (const char *n = std::getenv("SLURMD_NODENAME"); f.node.empty() && n)
		f.node = n;
	f.nodelist = getenv_job(sp, "SLURM_JOB_NODELIST");
	return ok();
}

// The batch step of a job job_submit/loom gave standbys (standby_setup.hpp).
void plan_standbys(spank_t sp)
{
	auto plan = sc::plan_standby_job(*g.site, g.opts, g.facts, g.setup->dir,
					 [sp](const char *name) { return getenv_job(sp, name); });
	if (!plan.error.empty())
		slurm_error("%s: job %u: no standbys: %s", prefix, g.facts.job_id, plan.error.c_str());
	if (plan.keeper)
		slurm_info("%s: job %u: active nodes %s, standby %s", prefix, g.facts.job_id,
			   hostlist_compress(plan.keeper->layout.active).c_str(),
			   hostlist_compress(plan.keeper->layout.standby).c_str());
	g.standby_notice = plan.notice;
	g.standby_env = std::move(plan.env);
	g.standby = std::move(plan.keeper);
}

// slurmstepd, before the tasks start: directory, restore point, budget, environment.
int remote_user_init(spank_t sp)
{
	if (!g.opts.enabled)
		return 0;
	// A step inside a batch job inherits the batch step's environment.
	if (!getenv_job(sp, "LOOM_CKPT_DIR").empty())
		return 0;
	if (auto st = gather_facts(sp, g.facts); !st) {
		slurm_error("%s: %s", prefix, st.error().str().c_str());
		return -1;
	}
	auto setup = sc::prepare_job(*g.site, g.opts, g.facts);
	if (!setup) {
		// The user's doing (a planted symlink, a directory outside the roots):
		// failing the launch would make slurmctld drain the node, which a user
		// must never be able to do. The job fails instead, before its script
		// runs (task_init_privileged), with the reason in its output.
		g.refused = "checkpoint directory: " + setup.error().str();
		slurm_error("%s: job %u: %s", prefix, g.facts.job_id, g.refused.c_str());
		return 0;
	}
	if (setup->decision.verdict != ckpt::StartVerdict::run) {
		slurm_error("%s: job %u: %s: holding the job", prefix, g.facts.job_id, setup->decision.reason.c_str());
		// The job is requeued and held from task_init_privileged: here the
		// step runs as the user with Slurm's client API locked (23.02 on,
		// a call deadlocks). Failing here would be a launch failure, and
		// slurmctld drains the node for that: the step goes on, and the
		// task stops before it executes the script while slurmctld ends
		// the step.
		g.held = true;
		g.hold_reason = setup->decision.reason;
		return 0;
	}
	for (const auto &[k, v] : setup->env)
		if (spank_setenv(sp, k.c_str(), v.c_str(), 1) != ESPANK_SUCCESS)
			slurm_error("%s: job %u: cannot set %s", prefix, g.facts.job_id, k.c_str());
	slurm_info("%s: job %u on %s: checkpoints in %s, %s, interval %llds, restart %lld of %lld", prefix,
		   g.facts.job_id, g.facts.node.empty() ? "(node unknown)" : g.facts.node.c_str(), setup->dir.c_str(),
		   setup->latest.empty() ? "first start" : ("resuming from " + setup->latest).c_str(),
		   static_cast<long long>(setup->interval_s), static_cast<long long>(g.facts.restart_count),
		   static_cast<long long>(g.opts.max_restarts));
	g.setup = std::move(*setup);
	if (g.facts.batch_step)
		plan_standbys(sp);
	return 0;
}

// In each task's process, after the fork and before the script is executed.
int remote_task_init_privileged()
{
	if (!g.refused.empty()) {
		// The task's stderr is the job's error output: the user reads why.
		std::fprintf(stderr, "%s: job %u refused: %s\n", prefix, g.facts.job_id, g.refused.c_str());
		std::fflush(stderr);
		return -1; // slurmstepd ends the task (exit status 1) without executing it
	}
	if (!g.held) {
		if (!g.standby_notice.empty() && g.facts.batch_step) {
			std::fprintf(stderr, "%s: job %u: %s\n", prefix, g.facts.job_id, g.standby_notice.c_str());
			std::fflush(stderr);
		}
		if (g.setup && g.facts.batch_step)
			if (auto notice = sc::foreign_notice(*g.setup); !notice.empty()) {
				std::fprintf(stderr, "%s: job %u: %s\n", prefix, g.facts.job_id, notice.c_str());
				std::fflush(stderr);
				slurm_info("%s: job %u: %s", prefix, g.facts.job_id, notice.c_str());
			}
		return 0;
	}
	// As root, with the client API usable: requeue and hold the job.
	std::string err;
	if (!sc::hold_job(g.facts.job_id, g.hold_reason, &err))
		slurm_error("%s: job %u: hold failed: %s: the batch script is not started", prefix, g.facts.job_id,
			    err.c_str());
	else
		slurm_info("%s: job %u: held: the batch script is not started", prefix, g.facts.job_id);
	return -1; // slurmstepd ends the task (exit status 1) without executing it
}

// In the batch script's process, after Slurm set its environment: the
// active nodes' counts.
int remote_task_init(spank_t sp)
{
	for (const auto &[k, v] : g.standby_env)
		if (spank_setenv(sp, k.c_str(), v.c_str(), 1) != ESPANK_SUCCESS)
			slurm_error("%s: job %u: cannot set %s", prefix, g.facts.job_id, k.c_str());
	return 0;
}

int remote_task_post_fork(spank_t sp)
{
	if (g.standby && !g.keeper.running())
		g.keeper.start(*g.standby);
	if (!g.setup || !g.facts.batch_step || g.coordinator.running())
		return 0;
	pid_t pid = 0;
	if (spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS || pid <= 0) {
		slurm_error("%s: job %u: no batch script pid: no checkpoint coordinator", prefix, g.facts.job_id);
		return 0;
	}
	g.coordinator.start(*g.site, g.opts, g.facts, *g.setup, pid);
	return 0;
}

template <typename F>
int guarded(const char *hook, F &&fn)
{
	return loom::plugin::spank_guarded(prefix, hook, -1, std::forward<F>(fn));
}

} // namespace

#pragma GCC visibility push(default)
extern "C" {

extern const char plugin_name[];
extern const char plugin_type[];
extern const unsigned int plugin_version;
extern const unsigned int spank_plugin_version;
SPANK_PLUGIN(spank_ckpt, 1)

int slurm_spank_init(spank_t sp, int ac, char **av);
int slurm_spank_init_post_opt(spank_t sp, int ac, char **av);
int slurm_spank_user_init(spank_t sp, int ac, char **av);
int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av);
int slurm_spank_task_init(spank_t sp, int ac, char **av);
int slurm_spank_task_post_fork(spank_t sp, int ac, char **av);
int slurm_spank_local_user_init(spank_t sp, int ac, char **av);
int slurm_spank_exit(spank_t sp, int ac, char **av);

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	return guarded("init", [&] {
		spank_context_t ctx = spank_context();
		if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR && ctx != S_CTX_REMOTE)
			return 0;
		loom::plugin::install_slurm_log_sink(prefix);
		auto site = ckpt::SiteConfig::from_args(ac, av, "plugstack.conf: spank_ckpt");
		if (!site) {
			slurm_error("%s: %s", prefix, site.error().str().c_str());
			return -1; // fail closed: a misconfigured site refuses jobs, loudly
		}
		g.site = std::move(*site);
		for (auto &o : sc::ckpt_options(option_target))
			if (spank_option_register(sp, &o) != ESPANK_SUCCESS) {
				slurm_error("%s: cannot register --%s", prefix, o.name);
				return -1;
			}
		return 0;
	});
}

int slurm_spank_init_post_opt(spank_t sp, int, char **)
{
	return guarded("init_post_opt", [&] {
		if (g.opts_bad)
			return -1;
		if (!g.site || !g.opts.enabled)
			return 0;
		if (auto st = ckpt::finalize(g.opts, *g.site); !st) {
			slurm_error("%s: %s", prefix, st.error().str().c_str());
			return -1;
		}
		// sbatch/salloc/srun creating the job: the resolved request travels
		// with the job (lib/exchange/ckpt_job_env.hpp), for jobcomp/health.
		spank_context_t ctx = spank_context();
		if (ctx == S_CTX_ALLOCATOR || (ctx == S_CTX_LOCAL && !std::getenv("SLURM_JOB_ID")))
			for (const auto &[k, v] : exchange::job_control_env(ckpt::job_request(g.opts)))
				if (spank_job_control_setenv(sp, k.c_str(), v.c_str(), 1) != ESPANK_SUCCESS)
					slurm_error("%s: cannot set %s for the job", prefix, k.c_str());
		// slurmstepd runs this as root before it drops privileges: the
		// one place before user_init where Slurm's client API may be used.
		// Only a batch step restarts (one RPC per job start, not per step).
		uint32_t job = 0, step = 0;
		if (spank_remote(sp) && item(sp, S_JOB_ID, &job) && item(sp, S_JOB_STEPID, &step) &&
		    step == SLURM_BATCH_SCRIPT)
			g.slurm_restarts = sc::job_restart_count(job, &g.slurm_restarts_error);
		return 0;
	});
}

int slurm_spank_user_init(spank_t sp, int, char **)
{
	return guarded("user_init", [&] { return spank_remote(sp) ? remote_user_init(sp) : 0; });
}

int slurm_spank_task_init_privileged(spank_t sp, int, char **)
{
	return guarded("task_init_privileged", [&] { return spank_remote(sp) ? remote_task_init_privileged() : 0; });
}

int slurm_spank_task_init(spank_t sp, int, char **)
{
	return guarded("task_init", [&] { return spank_remote(sp) ? remote_task_init(sp) : 0; });
}

// srun launching a step: a step of a job with standbys starts again in the
// allocation when the batch step says so (standby_srun.hpp).
int slurm_spank_local_user_init(spank_t sp, int, char **)
{
	return guarded("local_user_init", [&] {
		uint32_t job = 0, step = 0;
		if (spank_context() == S_CTX_LOCAL && item(sp, S_JOB_ID, &job) && item(sp, S_JOB_STEPID, &step))
			sc::arm_standby_relaunch(job, step);
		return 0;
	});
}

int slurm_spank_task_post_fork(spank_t sp, int, char **)
{
	return guarded("task_post_fork", [&] { return spank_remote(sp) ? remote_task_post_fork(sp) : 0; });
}

int slurm_spank_exit(spank_t sp, int, char **)
{
	return guarded("exit", [&] {
		(void)sp;
		g.keeper.stop();
		g.coordinator.stop();
		return 0;
	});
}

} // extern "C"
#pragma GCC visibility pop
