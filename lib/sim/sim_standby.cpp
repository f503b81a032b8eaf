// loom sim: standby nodes inside a job's allocation, and the restart in place
// when one of its nodes fails (sim_engine.hpp, RunConfig::standby).
#include "lib/sim/sim_engine.hpp"

#include "lib/ckpt/standby.hpp"

namespace loom::sim::detail {

int Sim::standby_for(const Job &j) const
{
	if (!j.ckpt || cfg_.standby == 0 || j.gpus() < cfg_.standby_min_gpus)
		return 0;
	if (cfg_.standby > 0)
		return static_cast<int>(cfg_.standby);
	// --ckpt-standby=auto: at submit, over the job's time limit.
	return ckpt::standby_count(j.nodes, static_cast<double>(j.limit_s), prior_mtbf_s_, cfg_.standby_p,
				   cfg_.standby_max)
		.nodes;
}

void Sim::account_standby(Live &l)
{
	if (l.standby > 0 && !l.gpus.empty())
		standby_gpu_s_ += static_cast<double>(now_ - l.standby_since_s) * l.standby * l.job->gpus_per_node;
	l.standby_since_s = now_;
}

// The node at l.nodes[k] leaves the job (Slurm removes a failed node from a
// --no-kill job): its GPUs go back to the State, the job off its list.
void Sim::drop_node(Live &l, size_t k)
{
	size_t n = static_cast<size_t>(l.nodes[k]);
	(void)state_.release(l.nodes[k], l.gpus[k], 0);
	busy_gpus_ -= l.gpus[k];
	auto &v = node_jobs_[n];
	uint32_t i = static_cast<uint32_t>(&l - live_.data());
	v.erase(std::remove(v.begin(), v.end(), i), v.end());
	l.nodes.erase(l.nodes.begin() + static_cast<std::ptrdiff_t>(k));
	l.gpus.erase(l.gpus.begin() + static_cast<std::ptrdiff_t>(k));
	dirty_ = true;
	// As release() does for each node: a run in a replacement's reservation
	// frees its share of it; a hold waiting for this node may go on.
	if (l.in_resv && --resv_[n] == 0)
		pool_dirty_ = true;
	if (held_by_[n] >= 0)
		try_hold(static_cast<uint32_t>(held_by_[n]));
}

bool Sim::recover_in_allocation(uint32_t i, const FailCtx &fc, const Outcome &o)
{
	Live &l = live_[i];
	auto at = std::find(l.nodes.begin(), l.nodes.end(), fc.node);
	if (l.standby_req == 0 || at == l.nodes.end())
		return false;
	size_t k = static_cast<size_t>(at - l.nodes.begin());
	account_standby(l);
	if (k >= static_cast<size_t>(l.job->nodes)) { // a standby failed: the step goes on
		drop_node(l, k);
		l.standby--;
		return true;
	}
	// What jobcomp/health would requeue: a culprit it drains is replaced by
	// a standby; without one named (a hang, a network error), or the job's
	// own error, the step starts again on the same nodes, as torchrun's
	// restarts would, but only after progress since its last start (spank_ckpt's
	// rule against a restart loop: a bug that strikes before the next
	// checkpoint commits is not restarted again).
	bool replace = !o.drain.empty();
	if (!(o.requeue || o.cls == health::FailureClass::user_error) || (replace && l.standby == 0))
		return false;
	auto [committed, done] = progress_at(l, fc.fault_s);
	(void)done;
	committed = std::max(committed, l.warn_commit);
	if (!replace && committed <= 0)
		return false;
	job_failures_++;
	l.res.productive_s += committed / l.speed;
	l.res.lost_gpu_s += (static_cast<double>(now_ - l.start_s) - committed / l.speed) * l.job->gpus();
	l.remaining -= committed;
	record_in_place(l, o);
	if (replace) {
		// The standby takes the culprit's rank: the first standby, next in
		// the fabric's order to the job's own nodes.
		size_t s = static_cast<size_t>(l.job->nodes);
		std::swap(l.nodes[k], l.nodes[s]);
		std::swap(l.gpus[k], l.gpus[s]);
		drop_node(l, s);
		l.standby--;
	}
	refresh_health();
	restart_in_place(i);
	return true;
}

// The failure in the statistics, as jobcomp/health records a job's end.
void Sim::record_in_place(const Live &l, const Outcome &o)
{
	health::Classification cls;
	cls.cls = o.cls;
	cls.culprits = o.drain;
	health::JobEnd je;
	je.job_id = l.job->id;
	je.nodes = names(l.nodes);
	je.start_time = l.start_s;
	je.end_time = now_;
	health::record_job(stats_, je, cls, class_of_, now_);
}

// The step starts again on the job's nodes: detection to running again is
// in_alloc_s, then the restart's restore; no requeue, no queue wait.
void Sim::restart_in_place(uint32_t i)
{
	Live &l = live_[i];
	l.serial++;
	l.res.restarts++;
	l.in_place++;
	in_alloc_restarts_++;
	l.start_s = now_;
	l.restore_s = cfg_.in_alloc_s + cfg_.ckpt.restart_s;
	l.warn_commit = 0;
	Span sp = placement_cost(c_, active_nodes(l), l.job->comm, cost_);
	l.speed = sp.speed / sp.step_factor;
	schedule_end(i);
}

} // namespace loom::sim::detail
