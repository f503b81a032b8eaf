// loom sim: the scheduler loop (simulate()), over the steps of sim_engine.hpp.
#include "lib/sim/simulator.hpp"

#include "lib/sim/sim_engine.hpp"

namespace loom::sim {

double JobResult::ettr() const
{
	if (first_start_s < 0 || end_s <= first_start_s)
		return 0;
	return std::min(1.0, productive_s / static_cast<double>(end_s - first_start_s));
}

namespace detail {

Sim::Sim(const topo::Cluster &c, const std::vector<Job> &jobs, const std::vector<Failure> &failures,
	 const RunConfig &cfg, std::unique_ptr<Placer> placer)
	: c_(c), failures_(failures), cfg_(cfg), cost_(cfg.cost), placer_(std::move(placer)), state_(c)
{
	live_.resize(jobs.size());
	for (size_t i = 0; i < jobs.size(); i++) {
		Live &l = live_[i];
		l.job = &jobs[i];
		l.remaining = static_cast<double>(jobs[i].work_s);
		l.res.id = jobs[i].id;
		l.res.submit_s = jobs[i].submit_s;
		l.res.gpus = jobs[i].gpus();
		l.res.nodes = jobs[i].nodes;
		l.req.min_nodes = jobs[i].nodes;
		l.req.gpus_per_node = jobs[i].gpus_per_node;
		l.req.comm = jobs[i].comm;
		l.req.gpu_class = jobs[i].gpu_class;
		l.res.comm = jobs[i].comm;
		l.res.tier = jobs[i].need.tier;
		l.res.work_s = jobs[i].work_s;
		if (jobs[i].need.given() && l.req.gpu_class.empty()) {
			if (cfg.tier_mode == "engine" && cfg.placer == "loom") {
				l.req.need = jobs[i].need;       // the other placers know no tiers: any class
				l.req.limit_s = jobs[i].limit_s; // prices over the run, as select/topo
			} else if (cfg.tier_mode == "by-hand")
				l.req.gpu_class = hand_class(jobs[i].need);
		}
	}
	node_jobs_.resize(c.nodes.size());
	for (const topo::Node &n : c.nodes) {
		cluster_gpus_ += n.gpu_count;
		if (n.perf_class < c.classes.size())
			class_of_[n.name] = c.classes.name(n.perf_class);
	}
	avail_gpus_ = cluster_gpus_;
	up_.assign(c.nodes.size(), true);
	mark_.assign(jobs.size(), false);
	suspect_.assign(c.nodes.size(), false);
	spares_on_ = !cfg.spares.empty();
	held_by_.assign(c.nodes.size(), -1);
	resv_.assign(c.nodes.size(), 0);
	hist_.assign(c.nodes.size(), 1.0);
	for (size_t d = 0; d < c.domains.size(); d++)
		if (c.domains[d].direct_end > c.domains[d].node_begin)
			leaves_.push_back(static_cast<topo::Index>(d));
	if (cost_.model == CommModel::ring && cost_.rank_order == false)
		cost_.slurm_rank = slurm_order(c);
	degrade_uplinks();
	if (cfg.contention) {
		crossing_.assign(c.domains.size(), 0.0);
		cost_.crossing = &crossing_;
	}
	prior_mtbf_s_ = cfg.failures.none || cfg.failures.rate_per_1000_node_days <= 0
				? 1e12
				: 1000.0 * 86400 / cfg.failures.rate_per_1000_node_days;
	for (Live &l : live_) {
		l.standby_req = standby_for(*l.job);
		l.req.min_nodes = l.alloc_nodes();
	}
}

expected<RunResult> Sim::run()
{
	auto wall0 = std::chrono::steady_clock::now();
	for (size_t i = 0; i < live_.size(); i++)
		push(live_[i].job->submit_s, ev_submit, static_cast<uint32_t>(i));
	for (size_t i = 0; i < failures_.size(); i++)
		if (cfg_.horizon_s <= 0 || failures_[i].t <= cfg_.horizon_s) {
			push(failures_[i].t, ev_fail, static_cast<uint32_t>(i));
			if (failures_[i].warn_t >= 0)
				push(failures_[i].warn_t, ev_warn, static_cast<uint32_t>(i));
		}
	push(0, ev_sample, 0);
	refresh_pool();
	uint64_t n_events = 0;
	while (!q_.empty()) {
		Event e = q_.top();
		if (cfg_.horizon_s > 0 && e.t > cfg_.horizon_s)
			break;
		if (e.kind == ev_sample && e.t > now_ && unfinished_ == 0 && failures_left() == 0)
			break;
		q_.pop();
		advance(e.t);
		handle(e);
		if (q_.empty() || q_.top().t != now_) {
			if (dirty_)
				main_pass();
			if (!pending_.empty() && bf_due_ < 0) {
				bf_due_ = (now_ / cfg_.sched.bf_interval_s + 1) * cfg_.sched.bf_interval_s;
				push(bf_due_, ev_backfill, 0);
			}
		}
		if ((++n_events & 4095) == 0 && cfg_.progress)
			cfg_.progress(now_);
		if (!error_.empty())
			return unexpected(error_);
	}
	int64_t end = cfg_.horizon_s > 0 ? cfg_.horizon_s : now_;
	advance(std::max(end, now_));
	RunResult r;
	r.placer = cfg_.placer;
	for (Live &l : live_) {
		if (l.st == St::running) {
			l.res.state = "RUNNING";
			l.res.end_s = now_;
			l.res.productive_s += progress_at(l, now_).second / l.speed;
		}
		r.jobs.push_back(l.res);
	}
	r.timeline = std::move(timeline_);
	summarize(r);
	r.summary.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
	return r;
}

void Sim::advance(int64_t t)
{
	if (t > now_) {
		double dt = static_cast<double>(t - now_);
		busy_gs_ += static_cast<double>(busy_gpus_) * dt;
		avail_gs_ += static_cast<double>(avail_gpus_) * dt;
		now_ = t;
	}
}

void Sim::handle(const Event &e)
{
	switch (e.kind) {
	case ev_submit: {
		Live &l = live_[e.a];
		unfinished_++;
		if (l.job->nodes > static_cast<int>(c_.nodes.size()) || l.job->gpus_per_node > state_.max_node_gpus()) {
			l.st = St::done;
			l.res.state = "FAILED";
			l.res.end_s = now_;
			unfinished_--;
			rejected_++;
			return;
		}
		l.st = St::pending;
		l.eligible_s = now_;
		pending_.push_back(e.a);
		dirty_ = true;
		break;
	}
	case ev_eligible: {
		Live &l = live_[e.a];
		if (l.st == St::pending) {
			pending_.push_back(e.a);
			dirty_ = true;
		}
		break;
	}
	case ev_end: {
		Live &l = live_[e.a];
		if (l.st != St::running || l.serial != e.b)
			return;
		end_run(e.a);
		break;
	}
	case ev_fail:
		failures_seen_++;
		fault(e.a);
		break;
	case ev_warn:
		warn(failures_[e.a]);
		break;
	case ev_replace:
		holds_list_[e.a].timer = true;
		try_hold(e.a);
		break;
	case ev_migrate:
		migrate(moves_[e.a]);
		break;
	case ev_jobfail:
		job_failed(fails_[e.a]);
		break;
	case ev_drain:
		drain(static_cast<topo::Index>(e.a), failures_[e.b].cause);
		break;
	case ev_repair:
		if (!up_[e.a]) {
			up_[e.a] = true;
			sync(static_cast<topo::Index>(e.a));
			pool_dirty_ = true;
			if (suspect_[e.a]) { // repaired: the mark goes with the fault
				suspect_[e.a] = false;
				place::update_health(state_, static_cast<topo::Index>(e.a), hist_[e.a], false);
			}
			avail_gpus_ += c_.nodes[e.a].gpu_count;
			drained_--;
			dirty_ = true;
		}
		break;
	case ev_backfill:
		bf_due_ = -1;
		if (!pending_.empty())
			backfill_pass();
		break;
	case ev_sample:
		sample();
		if (cfg_.horizon_s <= 0 || now_ + cfg_.sched.sample_s <= cfg_.horizon_s)
			push(now_ + cfg_.sched.sample_s, ev_sample, 0);
		break;
	}
}

} // namespace detail

expected<RunResult> simulate(const topo::Cluster &cluster, const std::vector<Job> &jobs,
			     const std::vector<Failure> &failures, const RunConfig &cfg)
{
	auto placer = make_placer(cfg.placer, cluster, cfg.weights);
	if (!placer)
		return unexpected(placer.error());
	detail::Sim sim(cluster, jobs, failures, cfg, std::move(*placer));
	return sim.run();
}

} // namespace loom::sim
