// loom health: the jobcomp/health worker. slurmctld's job-completion callback
// only hands a JobRecord to enqueue() (a lock, a push, a notify: no I/O, no
// RPC); this worker's thread does everything else: reads the job's output
// files, asks Slurm for its nodes' state, classifies, drains culprits under
// the drain cap, requeues, and keeps the backlog and the failure statistics
// files in the state directory up to date (both written atomically).
//
// Slurm is reached only through SlurmOps (lib/health/slurm_ops), the same
// module `loom health check --drain` uses, so that the worker is tested
// without a running Slurm; ScontrolOps runs scontrol with a deadline.
#pragma once

#include "lib/health/failure_stats.hpp"
#include "lib/health/jobcomp.hpp"
#include "lib/health/slurm_ops.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace loom::health {

struct JobOutcome {
	Classification cls;
	JobDecision decision;
	std::vector<std::string> drained, capped; // capped: would have drained, cap reached
	bool requeued = false;
	// Restarted on spares: the reservation, and culprit -> spare.
	std::string reservation;
	std::vector<std::pair<std::string, std::string>> spares;
	std::string no_spares; // why a requeue went without spares ("" when it had them or none was tried)
	bool migrated = false; // requeued by spank_ckpt off a suspect node (proactive migration)
};

// Handle one finished job; logs are read from the job's files. A job is
// checkpointed when it carries LOOM_CKPT (lib/exchange/ckpt_job_env.hpp), and then its
// restart budget is the one it carries; restart_budget is for the others.
JobOutcome handle_job(JobRecord rec, const JobcompOptions &opt, SlurmOps &slurm, DrainLimiter &limiter,
		      exchange::FailureStats &stats, int64_t now);

class JobcompWorker {
public:
	// state_dir: where loom-jobcomp-backlog.json and failure-stats.json live.
	JobcompWorker(JobcompOptions opt, std::unique_ptr<SlurmOps> slurm);
	~JobcompWorker();

	// Load the backlog and statistics, start the thread.
	status start();
	// What start() would refuse, checked without touching a running worker:
	// the state directory can be made, the backlog and statistics read. A
	// reconfigure checks the new options with it before it stops the old
	// worker, so that a bad new configuration leaves the old one running.
	static status preflight(const JobcompOptions &opt);
	// From the callback: never blocks on I/O, never throws.
	void enqueue(JobRecord r) noexcept;
	// Stop at once: a scontrol call in flight is cancelled (slurmctld calls
	// this at reconfigure and shutdown holding its locks, and could not answer
	// it), the job in hand stays in the backlog and is handled again at the
	// next start; save, join. A thread that does not end within wait_ms
	// (a read of a job's output blocked on a hung file system cannot be
	// interrupted) is left behind: stop() returns false (and so does every
	// later stop() until the thread ends), the thread writes nothing more,
	// and the caller must not destroy this object: its destructor would wait
	// for the thread (slurmctld must not block on it; the next worker owns
	// the state directory).
	bool stop(int wait_ms = 5000);
	size_t pending() const;
	// For tests: wait until the queue is empty (true) or timeout.
	bool wait_idle(int timeout_ms) const;

	std::string backlog_path() const;
	std::string stats_path() const;

private:
	void run();
	void save_backlog_locked_copy();

	JobcompOptions opt_;
	std::unique_ptr<SlurmOps> slurm_;
	DrainLimiter limiter_;
	exchange::FailureStats stats_;
	mutable std::mutex mu_;
	mutable std::condition_variable cv_, idle_cv_;
	std::deque<JobRecord> queue_;
	bool stopping_ = false, busy_ = false, dirty_ = false, exited_ = false;
	std::atomic<bool> abandoned_{false};
	std::atomic<bool> cancel_{false};
	std::thread thread_;
};

} // namespace loom::health
