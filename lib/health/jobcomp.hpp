// loom health: what jobcomp/health keeps about a finished job, its options,
// the drain cap, and the backlog file (all Slurm-free; the plugin only fills
// JobRecord from Slurm's job_record_t).
#pragma once

#include "lib/exchange/job_note.hpp"
#include "lib/health/classify.hpp"
#include "lib/health/xid_table.hpp"
#include "lib/util/config.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

struct json_object;

namespace loom::health {

// JobCompParams ("restart_budget=3,max_drains=4,drain_window=1h", Slurm's
// comma convention) or JobCompLoc words separated by spaces; parsed
// fail-closed. Values cannot hold commas.
struct JobcompOptions {
	int64_t restart_budget = 3;  // requeues per job (SLURM_RESTART_COUNT)
	int64_t max_drains = 4;      // nodes loom may drain per drain_window; past it: log only
	int64_t drain_window = 3600; // seconds
	bool drain = true, requeue = true;
	// Restart an infrastructure failure on its healthy nodes plus spares of
	// the same domains (lib/health/spares.hpp), in a reservation of its own.
	bool spares = true;
	std::string spare_file;    // select/topo's pool; default StateSaveLocation/loom-spares.json
	std::string state_dir;     // default: StateSaveLocation
	std::string stats_publish; // also write the failure statistics here (absolute path; "" = no)
	std::string scontrol = "scontrol";
	int64_t scontrol_timeout = 10;
	uint64_t log_max_bytes = 8u << 20; // tail of each output file scanned
	int64_t max_backlog = 10000;       // queued jobs kept; past it the oldest are dropped (logged)
	// How Xid lines in job output are judged: NVIDIA's mapping, as health.conf's
	// default (JobCompParams has no key for it; health.conf is not read here).
	XidTable xids = XidTable::nvidia_default();
};
// JobCompParams' keys, bound to 'o'; read before parsing, its values are the
// defaults (jobcomp_health(8) OPTIONS is their spec).
ConfigSchema jobcomp_schema(JobcompOptions &o);
expected<JobcompOptions> parse_jobcomp_options(std::string_view words, const std::string &where);

// A finished job as the worker needs it.
struct JobRecord {
	JobEnd end;
	uint32_t uid = 0;
	std::string user, job_name, work_dir, std_out_pattern, std_err_pattern;
	uint32_t array_job_id = 0, array_task_id = 0;
	std::string gpu_class;          // from the job's GPU request ("h100"), "gpu", or ""
	bool already_requeued = false;  // Slurm requeued it itself (NODE_FAIL with JobRequeue)
	int64_t ckpt_max_restarts = -1; // LOOM_CKPT_MAX_RESTARTS of a --ckpt job (-1: none)
	int64_t time_limit_s = 0;       // 0: none (the partition's, or unlimited)
	bool pinned = false;            // -w/--nodelist: the job names its nodes
	exchange::JobNote placed;       // select/topo's note in its SystemComment: class, tier, price
	std::string admin_comment;      // its AdminComment when it ended (lib/util/admin_comment.hpp)
};

std::string job_record_json(const JobRecord &r);
expected<JobRecord> job_record_from_json(json_object *o, const std::string &where);

// The GPU type a job asked for: "gres:gpu:h100:8", "gres/gpu:h100=8" -> "h100";
// "gres:gpu:8" -> "gpu"; no GPU request -> "".
std::string gpu_class_of_request(std::string_view tres_per_node);

// At most max drains in any window of 'window' seconds.
class DrainLimiter {
public:
	DrainLimiter(int64_t max, int64_t window) : max_(max), window_(window) {}
	bool allow(int64_t now);
	void record(int64_t now) { times_.push_back(now); }
	const std::deque<int64_t> &times() const { return times_; }
	void restore(std::deque<int64_t> t) { times_ = std::move(t); }

private:
	void expire(int64_t now);
	int64_t max_, window_;
	std::deque<int64_t> times_;
};

// The backlog file: jobs not yet handled and recent drain times, so that a
// slurmctld restart neither loses work nor resets the drain cap.
struct Backlog {
	std::vector<JobRecord> pending;
	std::deque<int64_t> drains;
};
std::string backlog_json(const Backlog &b);
expected<Backlog> load_backlog(const std::string &path); // missing file: empty

} // namespace loom::health
