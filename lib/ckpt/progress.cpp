// loom ckpt: hangs and stragglers from the ranks' progress (progress.hpp).
#include "lib/ckpt/progress.hpp"

#include <algorithm>
#include <cstdio>

namespace loom::ckpt {

namespace {

double median(std::vector<double> v)
{
	if (v.empty())
		return 0;
	std::sort(v.begin(), v.end());
	size_t n = v.size();
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string ranks_text(const std::vector<int> &ranks)
{
	std::string s;
	for (int r : ranks)
		s += (s.empty() ? "" : ",") + std::to_string(r);
	return s;
}

} // namespace

const char *progress_name(Progress p)
{
	switch (p) {
	case Progress::unknown:
		return "unknown";
	case Progress::starting:
		return "starting";
	case Progress::running:
		return "running";
	case Progress::hang:
		return "hang";
	}
	return "?";
}

double ProgressJudge::limit() const
{
	std::vector<double> v(recent_.begin(), recent_.end());
	return std::max(rule_.k * median(v), rule_.floor_s);
}

ProgressVerdict ProgressJudge::judge(const std::vector<RankProgress> &ranks, double now)
{
	ProgressVerdict v;
	if (ranks.empty()) {
		v.why = "no rank reports its progress";
		return v;
	}
	const RankProgress *newest = &ranks.front();
	std::vector<double> times;
	for (const RankProgress &r : ranks) {
		if (r.step_time > newest->step_time)
			newest = &r;
		if (r.step >= 0)
			times.push_back(r.step_s);
	}
	if (newest->step < 0) {
		v.state = Progress::starting;
		v.why = "no step completed yet";
		return v;
	}
	double med = median(times);
	if (newest->step > newest_seen_) {
		newest_seen_ = newest->step;
		recent_.push_back(med);
		while (recent_.size() > rule_.window)
			recent_.pop_front();
	}
	watch_stragglers(ranks, med, v);
	v.idle_s = now - newest->step_time;
	v.limit_s = limit();
	char buf[160];
	if (v.idle_s <= v.limit_s) {
		v.state = Progress::running;
		std::snprintf(buf, sizeof buf, "step %lld %.0f s ago (hang after %.0f s)",
			      static_cast<long long>(newest->step), v.idle_s, v.limit_s);
		v.why = buf;
		return v;
	}
	v.state = Progress::hang;
	v.culprits = name_culprits(ranks, now);
	std::snprintf(buf, sizeof buf, "no step for %.0f s (limit %.0f s: %.3g x the recent step time, floor %.0f s)",
		      v.idle_s, v.limit_s, rule_.k, rule_.floor_s);
	v.why = buf;
	if (!v.culprits.empty())
		v.why += "; stopped: rank " + ranks_text(v.culprits);
	return v;
}

// The ranks whose heartbeat stopped; else, when the others are alive, those
// at the lowest step if not every rank is there; else none.
std::vector<int> ProgressJudge::name_culprits(const std::vector<RankProgress> &ranks, double now) const
{
	std::vector<int> dead;
	int64_t lo = ranks.front().step, hi = ranks.front().step;
	for (const RankProgress &r : ranks) {
		if (now - r.beat > rule_.beat_stale_s)
			dead.push_back(r.rank);
		lo = std::min(lo, r.step);
		hi = std::max(hi, r.step);
	}
	if (!dead.empty() || lo == hi)
		return dead;
	std::vector<int> behind;
	for (const RankProgress &r : ranks)
		if (r.step == lo)
			behind.push_back(r.rank);
	return behind;
}

// A rank counts as slow on each new step whose time is over the factor
// times its peers' median; a step at the normal pace resets it.
void ProgressJudge::watch_stragglers(const std::vector<RankProgress> &ranks, double median_s, ProgressVerdict &v)
{
	for (const RankProgress &r : ranks) {
		auto seen = last_step_.find(r.rank);
		bool fresh = r.step >= 0 && (seen == last_step_.end() || r.step > seen->second);
		last_step_[r.rank] = r.step;
		if (fresh && ranks.size() > 1)
			slow_[r.rank] = r.step_s > rule_.straggler_factor * median_s ? slow_[r.rank] + 1 : 0;
		if (slow_[r.rank] >= rule_.straggler_reports)
			v.stragglers.push_back(r.rank);
	}
}

} // namespace loom::ckpt
