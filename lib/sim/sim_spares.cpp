// loom sim: the spare pool, replacements on spares and drains (sim_engine.hpp).
#include "lib/sim/sim_engine.hpp"

namespace loom::sim::detail {

bool Sim::want_available(size_t n) const
{
	return up_[n] && held_by_[n] < 0 && (spares_open_ || !pool_.is_spare(static_cast<topo::Index>(n)));
}

void Sim::sync(topo::Index n)
{
	bool w = want_available(static_cast<size_t>(n));
	if (state_.available(n) != w)
		(void)state_.set_available(n, w);
}

void Sim::refresh_pool()
{
	if (!spares_on_ || !pool_dirty_)
		return;
	pool_dirty_ = false;
	std::vector<place::SpareNodeState> st(c_.nodes.size(), place::SpareNodeState::unusable);
	for (size_t n = 0; n < c_.nodes.size(); n++)
		if (up_[n] && !suspect_[n] && held_by_[n] < 0 && resv_[n] == 0)
			st[n] = node_idle(static_cast<topo::Index>(n)) ? place::SpareNodeState::idle
								       : place::SpareNodeState::busy;
	pool_ = place::choose_spares(c_, cfg_.spares, st);
	std::vector<topo::Index> old = std::move(spare_list_);
	spare_list_.clear();
	for (size_t n = 0; n < pool_.spare.size(); n++)
		if (pool_.spare[n])
			spare_list_.push_back(static_cast<topo::Index>(n));
	pool_file_ = place::spare_file_of(c_, pool_, cfg_.spares.lend_max_s, now_);
	for (topo::Index n : old)
		sync(n);
	for (topo::Index n : spare_list_)
		sync(n);
}

void Sim::open_spares(bool open)
{
	spares_open_ = open;
	for (topo::Index n : spare_list_)
		sync(n);
}

bool Sim::replace(uint32_t i, const std::vector<topo::Index> &old, const std::vector<std::string> &culprits,
		  int64_t detect_s)
{
	refresh_pool();
	Live &l = live_[i];
	std::map<std::string, health::SlurmNode> st;
	std::map<std::string, int64_t> until;
	for (const std::string &name : health::candidate_spares(pool_file_, culprits)) {
		topo::Index m = c_.find_node(name);
		if (m == topo::none)
			continue;
		size_t k = static_cast<size_t>(m);
		bool usable = up_[k] && !suspect_[k] && held_by_[k] < 0 && resv_[k] == 0 &&
			      state_.total_gpus(m) >= l.job->gpus_per_node;
		health::SlurmNode sn;
		sn.name = name;
		sn.base = !usable ? "DOWN" : node_idle(m) ? "IDLE" : "MIXED";
		sn.state = sn.base;
		st[name] = sn;
		if (usable && !node_idle(m)) {
			int64_t u = 0;
			for (uint32_t j : node_jobs_[k])
				u = std::max(u, live_[j].start_s + live_[j].job->limit_s);
			until[name] = u;
		}
	}
	health::Replacement plan = health::plan_replacement(pool_file_, names(old), culprits, st, until, now_);
	if (!plan.ok) {
		spare_misses_++;
		return false;
	}
	Hold h;
	h.live = i;
	h.detect_s = detect_s;
	for (const std::string &name : plan.nodes)
		h.nodes.push_back(c_.find_node(name));
	std::sort(h.nodes.begin(), h.nodes.end());
	uint32_t id = static_cast<uint32_t>(holds_list_.size());
	for (topo::Index n : h.nodes) {
		held_by_[static_cast<size_t>(n)] = static_cast<int32_t>(id);
		sync(n);
	}
	holds_list_.push_back(std::move(h));
	pool_dirty_ = true;
	l.st = St::pending;
	l.res.restarts++;
	l.eligible_s = INT64_MAX / 4; // not the queue's: the hold starts it
	requeues_++;
	push(now_ + std::max<int64_t>(0, cfg_.replace_s), ev_replace, id);
	return true;
}

void Sim::unhold(Hold &h)
{
	h.open = false;
	for (topo::Index n : h.nodes) {
		held_by_[static_cast<size_t>(n)] = -1;
		sync(n);
	}
	pool_dirty_ = true;
}

void Sim::try_hold(uint32_t id)
{
	Hold &h = holds_list_[id];
	if (!h.open || !h.timer)
		return;
	for (topo::Index n : h.nodes)
		if (!node_idle(n))
			return;
	unhold(h);
	Live &l = live_[h.live];
	place::Candidate cand;
	cand.nodes = h.nodes;
	cand.gpus.assign(h.nodes.size(), l.job->gpus_per_node);
	l.in_resv = true;
	replacements_++;
	replace_wait_s_ += static_cast<double>(now_ - h.detect_s);
	start(h.live, cand);
}

void Sim::abandon(uint32_t id)
{
	Hold &h = holds_list_[id];
	if (!h.open)
		return;
	unhold(h);
	Live &l = live_[h.live];
	l.eligible_s = now_ + cfg_.sched.requeue_delay_s;
	push(l.eligible_s, ev_eligible, h.live);
}

void Sim::drain(topo::Index n, uint32_t cause)
{
	if (!up_[static_cast<size_t>(n)])
		return;
	up_[static_cast<size_t>(n)] = false;
	if (int32_t h = held_by_[static_cast<size_t>(n)]; h >= 0)
		abandon(static_cast<uint32_t>(h));
	sync(n);
	pool_dirty_ = true;
	avail_gpus_ -= c_.nodes[static_cast<size_t>(n)].gpu_count;
	drained_++;
	drains_++;
	push(now_ + std::max<int64_t>(1, cfg_.failures.causes[cause].repair_s), ev_repair, static_cast<uint32_t>(n));
}

void Sim::refresh_health()
{
	auto w = exchange::node_health_weights(stats_);
	for (const auto &[name, weight] : w) {
		topo::Index n = c_.find_node(name);
		if (n != topo::none) {
			hist_[static_cast<size_t>(n)] = weight;
			place::update_health(state_, n, weight, suspect_[static_cast<size_t>(n)]);
		}
	}
}

} // namespace loom::sim::detail
