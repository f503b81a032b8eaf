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
	double mtbf_s = 86400;     // the job's MTBF (auto intervals)
	double cost_default_s = 60;
	int64_t margin_min_s = 120;
	bool requeue_on_time_limit = true;
	bool may_requeue = true; // the restart budget has room
};

struct Observation {
	double now = 0;
	double end_time = 0;       // 0: no time limit known
	int64_t newest_step = -1;  // -1: no checkpoint
	double newest_created = 0;
	double newest_write_s = 0; // 0: not measured
	double suspect_mtime = 0;  // 0: no flag
};

enum class Ask { none, interval, time_limit, suspect };
const char *ask_name(Ask a);

struct Decision {
	Ask signal = Ask::none;
	bool requeue = false;
	std::string why;
};

class CoordinatorLogic {
public:
	CoordinatorLogic(CoordinatorPlan plan, double start_time) : plan_(plan), start_(start_time) {}
	Decision next(const Observation &o);
	// The interval in force after the last observation.
	int64_t interval() const { return interval_; }

private:
	CoordinatorPlan plan_;
	double start_;
	int64_t interval_ = 0;
	double last_signal_ = 0;
	bool tl_signalled_ = false;
	double tl_signal_time_ = 0;
	int64_t tl_step_ = -1;
	bool requeued_ = false;
	double suspect_seen_ = -1; // mtime of the flag already acted on
};

struct CoordinatorHooks {
	std::function<Observation()> observe;
	std::function<void(Ask, const std::string &why)> signal;
	std::function<void(const std::string &why)> requeue;
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
