// jobcomp/health: the plugin's identity, init/fini, and what it does when
// Slurm sets its location and reports a job's end. The entry points of each
// family of Slurm releases are in that family's adapter (jobcomp_api_v*.cpp).
// A job's end only converts the record and enqueues it; the worker thread
// (lib/health/jobcomp_worker) started at set_location does the rest and is
// joined in fini. Options come from JobCompParams (and JobCompLoc), see
// jobcomp_health(8).
#include "lib/exchange/suspect_mark.hpp"
#include "lib/health/jobcomp_worker.hpp"
#include "lib/util/log.hpp"
#include "plugins/common/slurm_internal.hpp"
#include "plugins/common/slurm_log.hpp"
#include "plugins/jobcomp_health/job_record.hpp"
#include "plugins/jobcomp_health/jobcomp_api.hpp"

#include <exception>
#include <memory>
#include <mutex>
#include <string>

namespace {

std::mutex g_mu;
std::unique_ptr<loom::health::JobcompWorker> g_worker;
bool g_started = false; // a worker has run in this slurmctld

int start_worker(const char *location)
{
	// JobCompLoc: the state directory (an absolute path), or key=value words;
	// JobCompParams: key=value words. Both are parsed fail-closed.
	std::string loc = location ? location : "";
	std::string words = slurm_conf.job_comp_params ? slurm_conf.job_comp_params : "";
	std::string loc_dir;
	if (loc.find('=') != std::string::npos)
		words = loc + " " + words;
	else if (!loc.empty() && loc[0] == '/')
		loc_dir = loc;
	else if (!loc.empty())
		verbose("jobcomp/health: ignoring JobCompLoc '%s' (neither a directory nor key=value options)",
			loc.c_str());
	auto opt = loom::health::parse_jobcomp_options(words, "JobCompParams");
	if (!opt) {
		error("jobcomp/health: %s", opt.error().str().c_str());
		return SLURM_ERROR;
	}
	std::string save = slurm_conf.state_save_location ? slurm_conf.state_save_location : "";
	if (opt->state_dir.empty())
		opt->state_dir = loc_dir.empty() ? save : loc_dir;
	if (opt->spare_file.empty() && !save.empty())
		opt->spare_file = save + "/loom-spares.json";
	if (opt->state_dir.empty()) {
		error("jobcomp/health: no StateSaveLocation and no state_dir= option");
		return SLURM_ERROR;
	}
	// A reconfigure whose new state directory is unusable keeps the running
	// worker: checked before that worker is stopped.
	if (auto st = loom::health::JobcompWorker::preflight(*opt); !st) {
		error("jobcomp/health: %s", st.error().str().c_str());
		return SLURM_ERROR;
	}
	std::lock_guard<std::mutex> g(g_mu);
	if (g_worker) {
		// A worker that would not stop (a blocked read) is left behind, not
		// waited for: slurmctld holds its locks here.
		if (!g_worker->stop())
			(void)g_worker.release();
		g_worker.reset();
	}
	auto actions =
		std::make_unique<loom::health::ScontrolOps>(opt->scontrol, static_cast<int>(opt->scontrol_timeout));
	auto w = std::make_unique<loom::health::JobcompWorker>(*opt, std::move(actions));
	if (auto st = w->start(); !st) {
		error("jobcomp/health: %s", st.error().str().c_str());
		return SLURM_ERROR;
	}
	g_worker = std::move(w);
	g_started = true;
	verbose("jobcomp/health: worker started (restart_budget=%lld max_drains=%lld per %lld s, state in %s)",
		static_cast<long long>(opt->restart_budget), static_cast<long long>(opt->max_drains),
		static_cast<long long>(opt->drain_window), opt->state_dir.c_str());
	return SLURM_SUCCESS;
}

} // namespace

#pragma GCC visibility push(default)
extern "C" {

extern const char plugin_name[];
extern const char plugin_type[];
extern const uint32_t plugin_version;

const char plugin_name[] = "Job completion: classify failures, drain culprits, requeue (loom)";
const char plugin_type[] = "jobcomp/health";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

int init(void);
int fini(void);
int init(void)
{
	try {
		loom::plugin::install_slurm_log_sink(plugin_type);
		return SLURM_SUCCESS;
	} catch (...) {
		return SLURM_ERROR;
	}
}

int fini(void)
{
	try {
		std::lock_guard<std::mutex> g(g_mu);
		if (g_worker) {
			if (!g_worker->stop())
				(void)g_worker.release(); // left behind (see above)
			g_worker.reset();
		}
	} catch (...) {
	}
	loom::plugin::remove_slurm_log_sink();
	return SLURM_SUCCESS;
}

} // extern "C"
#pragma GCC visibility pop

namespace loom::jobcomp_health {

int on_set_location(const char *location)
{
	int rc = SLURM_ERROR;
	try {
		rc = start_worker(location);
	} catch (const std::exception &e) {
		error("jobcomp/health: %s", e.what());
	} catch (...) {
		error("jobcomp/health: set_location failed");
	}
	if (rc == SLURM_SUCCESS)
		return rc;
	// No worker at all: at slurmctld's start (22.05 does not stop on this
	// error, later releases do), a slurmctld without its failure handling
	// would run on as if healthy. At a reconfigure the running worker stays.
	bool started = true, running = false; // nothing may throw into Slurm from here
	try {
		std::lock_guard<std::mutex> g(g_mu);
		started = g_started;
		running = g_worker != nullptr;
	} catch (...) {
	}
	if (!started)
		fatal("jobcomp/health: cannot start (see the error above); fix JobCompParams/JobCompLoc");
	if (running)
		error("jobcomp/health: the new configuration is refused; the running one stays in use");
	else
		error("jobcomp/health: no worker is running: failed jobs are not handled until a reconfigure succeeds");
	return rc;
}

// A node of the job carries loom's suspect mark (lib/exchange/suspect_mark.hpp).
bool on_suspect_node(const job_record_t *job)
{
	auto has = [](const char *s) { return s && exchange::is_loom_suspect_mark(s); };
	if (!job->node_bitmap)
		return false;
	int64_t last = bit_fls(job->node_bitmap);
	for (int64_t i = bit_ffs(job->node_bitmap); i >= 0 && i <= last && i < node_record_count; i++)
		if (bit_test(job->node_bitmap, i))
			if (node_record_t *n = node_record_table_ptr[i]; n && (has(n->extra) || has(n->comment)))
				return true;
	return false;
}

int on_job_end(job_record_t *job_ptr)
{
	if (!job_ptr)
		return SLURM_SUCCESS;
	// A running job that changed size (scontrol update JobId= NodeList=, as
	// spank_ckpt does when it replaces a node by a standby) is reported for
	// the part that ended: the job goes on, nothing failed that is ours.
	if ((job_ptr->job_state & JOB_RESIZING) || (job_ptr->job_state & JOB_STATE_BASE) == JOB_RUNNING)
		return SLURM_SUCCESS;
	// Slurm also reports a job it has just requeued (state PENDING): nothing
	// ended there, and the failure before it was already handled; unless a
	// node of the job is marked suspect, when it is a --ckpt job that
	// spank_ckpt moves off that node (proactive migration, the worker decides).
	bool requeued = (job_ptr->job_state & JOB_STATE_BASE) == JOB_PENDING;
	if (requeued && !on_suspect_node(job_ptr))
		return SLURM_SUCCESS;
	try {
		health::JobRecord r = to_job_record(job_ptr);
		if (requeued && !r.end.checkpointed)
			return SLURM_SUCCESS;
		std::lock_guard<std::mutex> g(g_mu);
		if (g_worker)
			g_worker->enqueue(std::move(r));
	} catch (...) {
		error("jobcomp/health: job %u: could not queue its record", job_ptr->job_id);
	}
	return SLURM_SUCCESS;
}

} // namespace loom::jobcomp_health
