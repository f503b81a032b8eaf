// The C++ SDK's progress reports (lib/exchange/progress_report.hpp): this
// rank's last completed step, at most once a second from should_checkpoint(),
// and a heartbeat every 5 s from a thread of its own, for spank_ckpt's keeper
// in a job with standby nodes (LOOM_CKPT_PROGRESS=1). Internal to the SDK.
#pragma once

#include "lib/exchange/progress_report.hpp"

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace loom::sdk {

class ProgressReporter {
public:
	static constexpr double every_s = 1.0, beat_s = 5.0;
	// <dir>/.loom-progress/rank.<rank>; the directory is made if needed.
	ProgressReporter(const std::string &dir, int rank, int world, std::string node);
	~ProgressReporter();
	ProgressReporter(const ProgressReporter &) = delete;
	ProgressReporter &operator=(const ProgressReporter &) = delete;
	// A step completed, taking step_s seconds.
	void step(int64_t step, double step_s);
	const std::string &path() const { return path_; }

private:
	void write();
	void beat();

	std::string path_;
	exchange::ProgressReport r_;
	double written_ = 0;
	std::mutex mu_;
	std::condition_variable cv_;
	bool stop_ = false;
	std::thread thread_;
};

} // namespace loom::sdk
