// loom sim: faults, failed jobs, suspect marks and the moves they cause (sim_engine.hpp).
#include "lib/sim/sim_engine.hpp"

namespace loom::sim::detail {

void Sim::fault(uint32_t fi)
{
	const Failure &f = failures_[fi];
	if (static_cast<size_t>(f.node) >= c_.nodes.size() || !up_[static_cast<size_t>(f.node)] ||
	    f.cause >= cfg_.failures.causes.size())
		return;
	failures_n_++;
	const Cause &cause = cfg_.failures.causes[f.cause];
	for (uint32_t j : node_jobs_[static_cast<size_t>(f.node)]) {
		Live &l = live_[j];
		fails_.push_back({j, l.serial, f.cause, f.node, now_});
		push(now_ + cause.detect_s, ev_jobfail, static_cast<uint32_t>(fails_.size() - 1));
	}
	if (cause.hardware)
		push(now_ + cause.detect_s, ev_drain, static_cast<uint32_t>(f.node), fi);
}

void Sim::job_failed(const FailCtx &fc)
{
	Live &l = live_[fc.live];
	if (l.st != St::running || l.serial != fc.serial)
		return;
	const Cause &cause = cfg_.failures.causes[fc.cause];
	Outcome o = judge_failure(cause, l.job->id, names(l.nodes), c_.nodes[static_cast<size_t>(fc.node)].name,
				  l.job->ckpt, l.requeue_count(), budget(l));
	if (recover_in_allocation(fc.live, fc, o))
		return;
	job_failures_++;
	auto [committed, done] = progress_at(l, fc.fault_s);
	(void)done;
	committed = std::max(committed, l.warn_commit);
	if (!l.job->ckpt)
		committed = 0; // nothing saved: a requeued job starts over
	l.res.productive_s += committed / l.speed;
	l.res.lost_gpu_s += (static_cast<double>(now_ - l.start_s) - committed / l.speed) * l.job->gpus();
	l.remaining -= committed;
	bool fresh = l.job->ckpt ? committed > 0 || l.res.restarts == 0 : true;
	health::Classification cls;
	cls.cls = o.cls;
	cls.culprits = o.drain;
	std::vector<topo::Index> old = l.nodes;
	release(fc.live, cls);
	refresh_health();
	if (o.requeue && fresh) {
		if (spares_on_ && !o.drain.empty() && replace(fc.live, old, o.drain, now_))
			return;
		requeue(fc.live, cfg_.sched.requeue_delay_s);
	} else if (o.requeue || o.cls == health::FailureClass::user_error) {
		// Held after a failure without a new checkpoint (spank_ckpt's
		// rule), or not requeued by loom at all (the job's own error):
		// its user releases or resubmits it.
		holds_++;
		requeue(fc.live, cfg_.failures.user_resubmit_s);
	} else {
		finish(fc.live, "FAILED");
	}
}

void Sim::warn(const Failure &f)
{
	size_t n = static_cast<size_t>(f.node);
	if (n >= c_.nodes.size() || !up_[n] || suspect_[n])
		return;
	suspect_[n] = true;
	warnings_++;
	place::update_health(state_, f.node, hist_[n], true);
	pool_dirty_ = true;
	for (uint32_t j : node_jobs_[n]) {
		Live &l = live_[j];
		if (!l.job->ckpt)
			continue;
		l.warn_commit = std::max(l.warn_commit, progress_at(l, now_).second);
		if (cfg_.migrate && (l.last_migration_s < 0 || now_ - l.last_migration_s >= cfg_.migrate_window_s)) {
			moves_.push_back({j, l.serial, f.node, f.t});
			push(now_ + std::max<int64_t>(1, static_cast<int64_t>(std::ceil(cfg_.ckpt.cost_s))), ev_migrate,
			     static_cast<uint32_t>(moves_.size() - 1));
		}
	}
}

void Sim::migrate(const Move &m)
{
	Live &l = live_[m.live];
	size_t n = static_cast<size_t>(m.node);
	if (l.st != St::running || l.serial != m.serial || !up_[n] ||
	    std::find(l.nodes.begin(), l.nodes.end(), m.node) == l.nodes.end())
		return;
	double left = std::max(0.0, (l.remaining - l.warn_commit) / l.speed);
	ckpt::MigrationCost mc =
		ckpt::migration_cost(0, static_cast<double>(m.fail_s - now_), left, static_cast<double>(l.interval_s),
				     static_cast<double>(cfg_.ckpt.restart_s));
	if (!mc.worth())
		return;
	double committed = l.warn_commit;
	l.res.productive_s += committed / l.speed;
	l.res.lost_gpu_s += (static_cast<double>(now_ - l.start_s) - committed / l.speed) * l.job->gpus();
	l.remaining -= committed;
	l.last_migration_s = now_;
	std::vector<topo::Index> old = l.nodes;
	release(m.live, {});
	migrations_++;
	if (spares_on_ && replace(m.live, old, {c_.nodes[n].name}, now_)) {
		migrations_to_spares_++;
		return;
	}
	requeue(m.live, cfg_.sched.requeue_delay_s);
}

} // namespace loom::sim::detail
