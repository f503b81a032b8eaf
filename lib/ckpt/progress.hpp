// loom ckpt: is a training job still making progress, and which rank stopped.
//
// The SDKs report each rank's progress (its last completed step, when, how
// long it took) and a heartbeat from a thread beside training. ProgressJudge
// is the pure decision spank_ckpt's coordinator will run on those reports:
//  - a hang: no rank has completed a step for max(k x the job's recent step
//    time, floor) seconds. The ranks named are those whose heartbeat stopped
//    (a stopped or dead process), else those furthest behind; none named
//    when every rank is alive at the same step (a collective stuck in the
//    fabric);
//  - a straggler: a rank whose step time is over 'straggler_factor' times
//    the median of its peers' in 'straggler_reports' consecutive new steps.
// Before the first step no judgement is made (loading is not a hang), and
// with no reports at all the state is unknown, never running.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace loom::ckpt {

struct RankProgress {
	int rank = 0;
	std::string node;
	int64_t step = -1;    // the last completed step; -1: none yet
	double step_time = 0; // when it completed (unix seconds)
	double step_s = 0;    // how long it took
	double beat = 0;      // the reporter's last heartbeat (unix seconds)
};

struct HangRule {
	double k = 10;            // times the job's recent step time
	double floor_s = 60;      // never a hang sooner
	double beat_stale_s = 30; // a heartbeat older than this: the process stopped
	double straggler_factor = 1.5;
	int straggler_reports = 5; // consecutive new steps that slow
	size_t window = 20;        // recent step times kept (the job's median of each report)
};

enum class Progress { unknown, starting, running, hang };
const char *progress_name(Progress p);

struct ProgressVerdict {
	Progress state = Progress::unknown;
	double idle_s = 0;           // since the newest completed step
	double limit_s = 0;          // the hang threshold in force
	std::vector<int> culprits;   // hang: the ranks named
	std::vector<int> stragglers; // consistently slower than their peers
	std::string why;
};

class ProgressJudge {
public:
	explicit ProgressJudge(HangRule rule = {}) : rule_(rule) {}
	ProgressVerdict judge(const std::vector<RankProgress> &ranks, double now);

private:
	double limit() const;
	void watch_stragglers(const std::vector<RankProgress> &ranks, double median_s, ProgressVerdict &v);
	std::vector<int> name_culprits(const std::vector<RankProgress> &ranks, double now) const;

	HangRule rule_;
	std::deque<double> recent_;        // median step time of each new report
	int64_t newest_seen_ = -1;         // the newest step already in recent_
	std::map<int, int64_t> last_step_; // per rank: its step at the last judgement
	std::map<int, int> slow_;          // per rank: consecutive slow new steps
};

} // namespace loom::ckpt
