// loom sim: a run's start, progress, end and requeue (sim_engine.hpp).
#include "lib/sim/sim_engine.hpp"

namespace loom::sim::detail {

std::pair<double, double> Sim::progress_at(const Live &l, int64_t t) const
{
	double e = static_cast<double>(t - l.start_s - l.restore_s);
	if (e <= 0)
		return {0, 0};
	if (l.interval_s <= 0) {
		double done = std::min(l.remaining, e * l.speed);
		return {done >= l.remaining ? done : 0, done};
	}
	double cycle = static_cast<double>(l.interval_s) + cfg_.ckpt.cost_s;
	double full = std::floor(e / cycle);
	double in = e - full * cycle;
	double committed = std::min(l.remaining, full * static_cast<double>(l.interval_s) * l.speed);
	double done = std::min(
		l.remaining,
		(full * static_cast<double>(l.interval_s) + std::min(in, static_cast<double>(l.interval_s))) * l.speed);
	if (done >= l.remaining)
		committed = done;
	return {committed, done};
}

double Sim::run_wall(const Live &l) const
{
	double compute = l.remaining / l.speed;
	double writes = 0;
	if (l.interval_s > 0)
		writes = std::floor(compute / static_cast<double>(l.interval_s)) * cfg_.ckpt.cost_s;
	if (l.interval_s > 0 && std::fmod(compute, static_cast<double>(l.interval_s)) == 0 && compute > 0)
		writes -= cfg_.ckpt.cost_s; // no checkpoint at the very end
	return static_cast<double>(l.restore_s) + compute + writes;
}

std::string Sim::hand_class(const place::Need &n) const
{
	if (!cfg_.weights.tiers || cfg_.weights.tiers->empty())
		return "";
	std::vector<const place::PerfClass *> by;
	for (const place::PerfClass &c : cfg_.weights.tiers->classes)
		if (c_.classes.find(c.name) != topo::none)
			by.push_back(&c);
	if (by.empty())
		return "";
	std::stable_sort(by.begin(), by.end(), [](const place::PerfClass *a, const place::PerfClass *b) {
		return a->throughput < b->throughput;
	});
	auto t = cfg_.weights.tiers->find_tier(n.tier);
	place::Objective o = t ? t->objective : place::Objective::balanced;
	size_t k = o == place::Objective::value ? 0 : o == place::Objective::fast ? by.size() - 1 : by.size() / 2;
	return by[k]->name;
}

void Sim::degrade_uplinks()
{
	size_t n = std::min<size_t>(leaves_.size(), static_cast<size_t>(std::max(0, cfg_.degraded_uplinks)));
	if (n == 0)
		return;
	cost_.uplink_factor.assign(c_.domains.size(), 1.0);
	for (size_t i = 0; i < n; i++) {
		topo::Index leaf = leaves_[(2 * i + 1) * leaves_.size() / (2 * n)];
		cost_.uplink_factor[static_cast<size_t>(leaf)] = cfg_.degraded_factor;
		degraded_leaves_++;
		const topo::Domain &d = c_.domains[static_cast<size_t>(leaf)];
		auto marks = static_cast<topo::Index>(
			std::ceil(cfg_.link_marks * static_cast<double>(d.direct_end - d.node_begin) - 1e-9));
		for (topo::Index k = 0; k < marks && d.node_begin + k < d.direct_end; k++)
			if (auto st = state_.set_link_suspect(d.node_begin + k, true); !st)
				error_ = "link mark: " + st.error().str();
	}
}

std::vector<std::string> Sim::names(const std::vector<topo::Index> &nodes) const
{
	std::vector<std::string> v;
	v.reserve(nodes.size());
	for (topo::Index n : nodes)
		v.push_back(c_.nodes[static_cast<size_t>(n)].name);
	return v;
}

void Sim::start(uint32_t i, const place::Candidate &cand)
{
	Live &l = live_[i];
	if (auto st = place::commit(state_, l.req, cand); !st) {
		error_ = "commit of job " + std::to_string(l.job->id) + " failed: " + st.error().str();
		return;
	}
	l.st = St::running;
	l.serial++;
	l.nodes = cand.nodes;
	l.gpus = cand.gpus;
	l.start_s = l.alloc_start_s = l.standby_since_s = now_;
	// The step runs on the job's own nodes; the standbys (the last ones,
	// beside them in the fabric's order) wait.
	l.standby = static_cast<int>(l.nodes.size()) - l.job->nodes;
	Span sp = placement_cost(c_, active_nodes(l), l.job->comm, cost_);
	l.price_per_h = -1;
	if (cfg_.weights.tiers) {
		place::Candidate priced = cand;
		l.price_per_h = place::set_price(c_, *cfg_.weights.tiers, static_cast<int>((now_ / 60) % 1440), priced);
	}
	l.speed = sp.speed / sp.step_factor;
	if (cost_.crossing) {
		l.crossing = std::move(sp.crossing);
		for (const auto &[d, g] : l.crossing)
			crossing_[static_cast<size_t>(d)] += g;
	}
	if (l.res.first_start_s < 0) {
		l.res.first_start_s = now_;
		l.res.leaves = sp.leaves;
		l.res.nvlink_domains = sp.nvlink_domains;
		l.res.common_level = sp.common_level;
		l.res.step_factor = sp.step_factor;
		l.res.ring_leaf_edges = sp.ring_leaf_edges;
		l.res.degraded_leaves = sp.degraded_leaves;
		const topo::Node &first = c_.nodes[static_cast<size_t>(l.nodes[0])];
		l.res.gpu_class = first.perf_class ? c_.classes.name(first.perf_class) : "";
		l.res.first_nodes = hostlist_compress(names(l.nodes));
	}
	l.restore_s = l.res.restarts > 0 && l.job->ckpt ? cfg_.ckpt.restart_s : 0;
	l.warn_commit = 0;
	l.interval_s = 0;
	if (l.job->ckpt) {
		if (cfg_.ckpt.interval_s > 0) {
			l.interval_s = cfg_.ckpt.interval_s;
		} else {
			double m = exchange::job_mtbf(stats_, names(l.nodes), prior_mtbf_s_);
			l.interval_s = ckpt::auto_interval(cfg_.ckpt.cost_s, m,
							   {cfg_.ckpt.min_interval_s, cfg_.ckpt.max_interval_s});
		}
	}
	for (size_t k = 0; k < l.nodes.size(); k++) {
		node_jobs_[static_cast<size_t>(l.nodes[k])].push_back(i);
		if (l.in_resv)
			resv_[static_cast<size_t>(l.nodes[k])]++;
	}
	for (int g : l.gpus)
		busy_gpus_ += g;
	running_end_.push_back({now_ + l.job->limit_s, i});
	schedule_end(i);
}

void Sim::schedule_end(uint32_t i)
{
	Live &l = live_[i];
	double wall = run_wall(l);
	int64_t limit_left = l.alloc_start_s + l.job->limit_s - now_; // a restart in place keeps the limit
	l.timeout_end = wall > static_cast<double>(limit_left);
	int64_t end = now_ + (l.timeout_end ? limit_left : std::max<int64_t>(1, static_cast<int64_t>(std::ceil(wall))));
	push(end, ev_end, i, l.serial);
}

std::vector<topo::Index> Sim::active_nodes(const Live &l) const
{
	size_t n = std::min(l.nodes.size(), static_cast<size_t>(l.job->nodes));
	return std::vector<topo::Index>(l.nodes.begin(), l.nodes.begin() + static_cast<std::ptrdiff_t>(n));
}

void Sim::release(uint32_t i, const health::Classification &cls)
{
	Live &l = live_[i];
	std::vector<int32_t> holds;
	for (size_t k = 0; k < l.nodes.size(); k++) {
		size_t n = static_cast<size_t>(l.nodes[k]);
		(void)state_.release(l.nodes[k], l.gpus[k], 0);
		auto &v = node_jobs_[n];
		v.erase(std::remove(v.begin(), v.end(), i), v.end());
		if (l.in_resv && --resv_[n] == 0)
			pool_dirty_ = true;
		if (held_by_[n] >= 0)
			holds.push_back(held_by_[n]);
	}
	l.in_resv = false;
	for (const auto &[d, g] : l.crossing)
		crossing_[static_cast<size_t>(d)] -= g;
	l.crossing.clear();
	if (l.price_per_h >= 0 && cfg_.weights.tiers) {
		// The run at its classes' prices through the hours it ran
		// (off-peak at theirs).
		double c = place::run_cost(c_, *cfg_.weights.tiers, l.nodes, l.gpus,
					   static_cast<int>((l.start_s / 60) % 1440),
					   static_cast<double>(now_ - l.start_s) / 60);
		if (c >= 0)
			l.res.cost += c;
	}
	for (int g : l.gpus)
		busy_gpus_ -= g;
	account_standby(l);
	health::JobEnd je;
	je.job_id = l.job->id;
	je.nodes = names(l.nodes);
	je.start_time = l.start_s;
	je.end_time = now_;
	health::record_job(stats_, je, cls, class_of_, now_);
	l.nodes.clear();
	l.gpus.clear();
	dirty_ = true;
	for (int32_t h : holds) // a borrowed spare came free
		try_hold(static_cast<uint32_t>(h));
}

void Sim::end_run(uint32_t i)
{
	Live &l = live_[i];
	auto [committed, done] = progress_at(l, now_);
	if (!l.timeout_end) {
		l.res.productive_s += l.remaining / l.speed;
		l.remaining = 0;
		release(i, {});
		finish(i, "COMPLETED");
		return;
	}
	// At the limit: a checkpointing job commits what it has (the
	// coordinator asks before the limit) and requeues itself.
	if (l.job->ckpt) {
		double saved = std::max({committed, l.warn_commit, done - cfg_.ckpt.cost_s * l.speed});
		saved = std::max(0.0, saved);
		l.res.productive_s += saved / l.speed;
		l.res.lost_gpu_s += (static_cast<double>(now_ - l.start_s) - saved / l.speed) * l.job->gpus();
		l.remaining -= saved;
		release(i, {});
		if (saved > 0 && l.requeue_count() < budget(l)) {
			requeue(i, cfg_.sched.requeue_delay_s);
			return;
		}
		finish(i, "TIMEOUT");
		return;
	}
	l.res.lost_gpu_s += static_cast<double>(now_ - l.start_s) * l.job->gpus();
	release(i, {});
	finish(i, "TIMEOUT");
}

uint32_t Sim::budget(const Live &l) const
{
	return static_cast<uint32_t>(l.job->ckpt ? cfg_.failures.ckpt_max_restarts : cfg_.failures.restart_budget);
}

void Sim::finish(uint32_t i, const char *state)
{
	Live &l = live_[i];
	l.st = St::done;
	l.res.state = state;
	l.res.end_s = now_;
	unfinished_--;
}

void Sim::requeue(uint32_t i, int64_t delay)
{
	Live &l = live_[i];
	l.st = St::pending;
	l.res.restarts++;
	l.eligible_s = now_ + delay;
	requeues_++;
	push(l.eligible_s, ev_eligible, i);
}

} // namespace loom::sim::detail
