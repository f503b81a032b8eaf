// loom sim: the timeline's samples and the run's summary (sim_engine.hpp).
#include "lib/sim/sim_engine.hpp"

namespace loom::sim::detail {

void Sim::reservation(int64_t gpus, int64_t &shadow, int64_t &extra)
{
	std::vector<std::pair<int64_t, uint32_t>> ends;
	std::vector<std::pair<int64_t, uint32_t>> keep;
	for (const auto &e : running_end_) // an entry of an earlier run of a requeued job is stale
		if (live_[e.second].st == St::running &&
		    live_[e.second].start_s + live_[e.second].job->limit_s == e.first) {
			keep.push_back(e);
			ends.push_back(e);
		}
	running_end_ = std::move(keep);
	std::sort(ends.begin(), ends.end());
	int64_t free = state_.total().free_gpus;
	shadow = now_;
	for (const auto &[t, i] : ends) {
		if (free >= gpus)
			break;
		free += live_[i].job->gpus();
		shadow = t;
	}
	if (free < gpus)
		shadow = INT64_MAX / 4;
	extra = std::max<int64_t>(0, free - gpus);
}

void Sim::sample()
{
	Sample s;
	s.t = now_;
	s.busy_gpus = busy_gpus_;
	s.available_gpus = avail_gpus_;
	s.idle_nodes = state_.total().idle;
	for (topo::Index d : leaves_) {
		const topo::Domain &dom = c_.domains[static_cast<size_t>(d)];
		if (state_.domain(d).idle == dom.direct_end - dom.node_begin && dom.node_end == dom.direct_end)
			s.idle_leaves++;
	}
	for (size_t v = 0; v < c_.nvlink_domains.size(); v++)
		if (state_.nvlink(static_cast<topo::Index>(v)).idle ==
		    static_cast<int32_t>(c_.nvlink_domains[v].nodes.size()))
			s.idle_nvlink++;
	for (uint32_t i : pending_)
		if (live_[i].st == St::pending) {
			s.pending_jobs++;
			s.pending_gpus += live_[i].job->gpus();
		}
	s.drained_nodes = drained_;
	s.spare_nodes = static_cast<int64_t>(spare_list_.size());
	timeline_.push_back(s);
}

void Sim::summarize(RunResult &r)
{
	Summary &s = r.summary;
	s.jobs = r.jobs.size();
	std::vector<double> waits;
	double jct = 0, leaves = 0, factor = 0, ettr = 0, heavy_factor = 0;
	size_t multi = 0, heavy = 0;
	for (const JobResult &j : r.jobs) {
		if (j.first_start_s >= 0) {
			s.started++;
			waits.push_back(static_cast<double>(j.first_start_s - j.submit_s) / 3600);
			if (j.nodes > 1) {
				multi++;
				leaves += j.leaves;
				factor += j.step_factor;
				if (j.comm == place::Comm::heavy) {
					heavy++;
					heavy_factor += j.step_factor;
				}
			}
			if (j.gpus >= cfg_.large_gpus) {
				s.large_jobs++;
				ettr += j.ettr();
			}
		}
		if (j.state == "COMPLETED") {
			s.completed++;
			jct += static_cast<double>(j.end_s - j.submit_s) / 3600;
		}
		s.timeouts += j.state == "TIMEOUT";
		s.failed += j.state == "FAILED";
		s.lost_gpu_h += j.lost_gpu_s / 3600;
	}
	double sum = 0;
	for (double w : waits)
		sum += w;
	s.wait_mean_h = waits.empty() ? 0 : sum / static_cast<double>(waits.size());
	s.wait_p95_h = pct(waits, 0.95);
	s.jct_mean_h = s.completed ? jct / static_cast<double>(s.completed) : 0;
	s.multi_leaves_mean = multi ? leaves / static_cast<double>(multi) : 0;
	s.multi_step_factor = multi ? factor / static_cast<double>(multi) : 0;
	s.heavy_step_factor = heavy ? heavy_factor / static_cast<double>(heavy) : 0;
	s.degraded_leaves = degraded_leaves_;
	s.ettr_large = s.large_jobs ? ettr / static_cast<double>(s.large_jobs) : 0;
	s.sim_end_s = now_;
	s.utilization = now_ > 0 ? busy_gs_ / (static_cast<double>(cluster_gpus_) * static_cast<double>(now_)) : 0;
	s.utilization_available = avail_gs_ > 0 ? busy_gs_ / avail_gs_ : 0;
	s.failures = failures_n_;
	s.job_failures = job_failures_;
	s.drains = drains_;
	s.requeues = requeues_;
	s.holds = holds_;
	s.warnings = warnings_;
	s.replacements = replacements_;
	s.spare_misses = spare_misses_;
	s.migrations = migrations_;
	s.migrations_to_spares = migrations_to_spares_;
	s.in_alloc_restarts = in_alloc_restarts_;
	s.standby_gpu_h = standby_gpu_s_ / 3600;
	s.replace_wait_mean_s = replacements_ ? replace_wait_s_ / static_cast<double>(replacements_) : 0;
	s.rejected = rejected_;
	double il = 0;
	for (const Sample &x : r.timeline)
		il += static_cast<double>(x.idle_leaves);
	s.idle_leaves_mean = r.timeline.empty() ? 0 : il / static_cast<double>(r.timeline.size());
	double sp = 0;
	for (const Sample &x : r.timeline)
		sp += static_cast<double>(x.spare_nodes);
	s.spare_nodes_mean = r.timeline.empty() ? 0 : sp / static_cast<double>(r.timeline.size());
	s.decisions = decisions_;
	s.engine_s = engine_s_;
}

} // namespace loom::sim::detail
