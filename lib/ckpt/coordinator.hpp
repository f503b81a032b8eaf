// loom ckpt: the in-job coordinator that asks the application to checkpoint.
//
// CoordinatorLogic is the pure decision: given what was observed (time, the
// job's end time, the newest committed checkpoint, the node's suspect flag),
// it says whether to signal the application and whether to requeue the job.
// Coordinator runs it on a thread every poll period; the hooks do the I/O
// (observe as the job's user, signal, requeue). stop() wakes the thread at
// once and joins it: the coordinator ends with the step.
#pragma once

#include "lib/ckpt/policy.hpp"

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace loom::ckpt {

struct CoordinatorPlan {
	bool interval_auto = true;
	int64_t interval_s = 3600; // when not auto
	IntervalBounds bounds;
	double mtbf_s = 86400; // the job's MTBF (auto intervals)
	double cost_default_s = 60;
	int64_t margin_min_s = 120;
	// The time-limit ask is repeated this often until a checkpoint commits
	// after it: a program that started after the first one (a resumed run
	// still loading, a restarted worker) took that one as already seen.
	int64_t reask_s = 15;
	bool requeue_on_time_limit = true;
	bool may_requeue = true; // the restart budget has room
	// Proactive migration: once the checkpoint asked for by a suspect mark is
	// committed, requeue the job off the node (jobcomp/health gives it spares),
	// at most once per migrate_window_s, and only when staying would lose
	// more work than moving.
	bool migrate = true;
	int64_t migrate_window_s = 3600;
};

struct Observation {
	double now = 0;
	double end_time = 0;      // 0: no time limit known
	int64_t newest_step = -1; // -1: no checkpoint
	double newest_created = 0;
	double newest_write_s = 0; // 0: not measured
	double suspect_mtime = 0;  // 0: no flag
	double suspect_eta_s = 0;  // the flag's predicted seconds to failure, from its mtime (0: none)
	double last_migration = 0; // when the job last moved off a suspect node (0: never)
};

enum class Ask { none, interval, time_limit, suspect };
const char *ask_name(Ask a);

struct Decision {
	Ask signal = Ask::none;
	bool requeue = false;
	bool migrate = false; // the requeue moves the job off a suspect node
	std::string why;
	std::string note; // a decision not to act, for the log
};

// Work (seconds) a job loses by moving off a suspect node now, and by
// staying: moving loses the work since the newest checkpoint ('age') and a
// restart; staying loses nothing when the job ends before the predicted
// failure, else the work from that checkpoint to the failure (at most one
// interval, when the next checkpoint would come first) and a restart. An
// unknown failure time counts as half an interval away.
struct MigrationCost {
	double move = 0, stay = 0;
	bool worth() const { return stay > move; }
};
MigrationCost migration_cost(double age_s, double eta_left_s, double remaining_s, double interval_s, double restart_s);

class CoordinatorLogic {
public:
	CoordinatorLogic(CoordinatorPlan plan, double start_time) : plan_(plan), start_(start_time) {}
	Decision next(const Observation &o);
	// The interval in force after the last observation.
	int64_t interval() const { return interval_; }

private:
	// The steps of next(), in order; each but the last returns true when it
	// decided (d says what).
	bool requeue_before_time_limit(const Observation &o, Decision &d);
	bool move_off_suspect(const Observation &o, double cost, Decision &d);
	bool ask_for_suspect(const Observation &o, Decision &d);
	bool ask_before_time_limit(const Observation &o, Decision &d);
	void ask_at_interval(const Observation &o, Decision &d);

	CoordinatorPlan plan_;
	double start_;
	int64_t interval_ = 0;
	double last_signal_ = 0;
	bool tl_signalled_ = false;
	double tl_signal_time_ = 0, tl_last_ask_ = 0;
	int64_t tl_step_ = -1;
	bool requeued_ = false;
	double suspect_seen_ = -1; // mtime of the flag already acted on
	// The suspect ask in flight: migrate once the checkpoint it asked for commits.
	bool susp_pending_ = false;
	int64_t susp_step_ = -1;
	double susp_asked_ = 0, susp_mtime_ = 0, susp_eta_ = 0;
};

struct CoordinatorHooks {
	std::function<Observation()> observe;
	std::function<void(Ask, const std::string &why)> signal;
	std::function<void(const std::string &why, bool migrate)> requeue;
};

class Coordinator {
public:
	Coordinator() = default;
	~Coordinator() { stop(); }
	Coordinator(const Coordinator &) = delete;
	Coordinator &operator=(const Coordinator &) = delete;

	void start(CoordinatorPlan plan, CoordinatorHooks hooks, double start_time, int poll_s);
	void stop(); // idempotent; joins the thread
	bool running() const { return thread_.joinable(); }

private:
	void run(CoordinatorPlan plan, double start_time, int poll_s);
	CoordinatorHooks hooks_;
	std::thread thread_;
	std::mutex mu_;
	std::condition_variable cv_;
	bool stop_ = false;
};

} // namespace loom::ckpt
