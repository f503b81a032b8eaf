// loom health: the jobcomp/health worker. slurmctld's job-completion callback
// only hands a JobRecord to enqueue() (a lock, a push, a notify: no I/O, no
// RPC); this worker's thread does everything else: reads the job's output
// files, asks Slurm for its nodes' state, classifies, drains culprits under
// the drain cap, requeues, and keeps the backlog and the failure statistics
// files in the state directory up to date (both written atomically).
//
// Slurm is reached only through JobcompActions, so that the worker is tested
// without a running Slurm; ScontrolActions runs scontrol with a deadline.
#pragma once

#include "lib/health/drain.hpp"
#include "lib/health/failure_stats.hpp"
#include "lib/health/jobcomp.hpp"
#include "lib/health/subprocess.hpp"

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

// A stop that cuts scontrol calls short (JobcompWorker::stop): 'requested'
// makes calls give up at once; 'cut' counts the calls it cut short.
struct Cancel {
	std::atomic<bool> requested{false};
	std::atomic<uint64_t> cut{0};
};

class JobcompActions {
public:
	virtual ~JobcompActions() = default;
	virtual expected<std::map<std::string, SlurmNodeState>> node_states(const std::vector<std::string> &nodes) = 0;
	virtual status drain(const std::string &node, const std::string &reason) = 0;
	virtual status requeue(uint32_t job_id) = 0;
	// While c->requested reads true, calls give up at once and count in c->cut.
	virtual void set_cancel(Cancel *c) { (void)c; }
};

class ScontrolActions : public JobcompActions {
public:
	ScontrolActions(std::string scontrol, int timeout_s) : scontrol_(std::move(scontrol)), timeout_(timeout_s) {}
	expected<std::map<std::string, SlurmNodeState>> node_states(const std::vector<std::string> &nodes) override;
	status drain(const std::string &node, const std::string &reason) override;
	status requeue(uint32_t job_id) override;
	void set_cancel(Cancel *c) override { cancel_ = c; }

private:
	expected<CommandResult> run(const std::vector<std::string> &argv);
	std::string scontrol_;
	int timeout_;
	Cancel *cancel_ = nullptr;
};

// Every "NodeName=" record of `scontrol show node` output.
std::map<std::string, SlurmNodeState> parse_scontrol_nodes(std::string_view text);

struct JobOutcome {
	Classification cls;
	JobDecision decision;
	std::vector<std::string> drained, capped; // capped: would have drained, cap reached
	bool requeued = false;
};

// Handle one finished job. 'slurm_state_save' is StateSaveLocation (where
// Slurm keeps the job's environment); logs are read from the job's files.
JobOutcome handle_job(JobRecord rec, const JobcompOptions &opt, const std::string &slurm_state_save,
		      JobcompActions &slurm, DrainLimiter &limiter, FailureStats &stats, int64_t now);

class JobcompWorker {
public:
	// state_dir: where loom-jobcomp-backlog.json and failure-stats.json live.
	JobcompWorker(JobcompOptions opt, std::string slurm_state_save, std::unique_ptr<JobcompActions> slurm);
	~JobcompWorker();

	// Load the backlog and statistics, start the thread.
	status start();
	// From the callback: never blocks on I/O, never throws.
	void enqueue(JobRecord r) noexcept;
	// Stop at once: a scontrol call in flight is cancelled (slurmctld calls
	// this at reconfigure and shutdown holding its locks, and could not answer
	// it), the job in hand stays in the backlog and is handled again at the
	// next start; save, join.
	void stop();
	size_t pending() const;
	// For tests: wait until the queue is empty (true) or timeout.
	bool wait_idle(int timeout_ms) const;

	std::string backlog_path() const;
	std::string stats_path() const;

private:
	void run();
	void save_backlog_locked_copy();

	JobcompOptions opt_;
	std::string slurm_state_save_;
	std::unique_ptr<JobcompActions> slurm_;
	DrainLimiter limiter_;
	FailureStats stats_;
	mutable std::mutex mu_;
	mutable std::condition_variable cv_, idle_cv_;
	std::deque<JobRecord> queue_;
	bool stopping_ = false, busy_ = false, dirty_ = false;
	Cancel cancel_;
	std::thread thread_;
};

} // namespace loom::health
