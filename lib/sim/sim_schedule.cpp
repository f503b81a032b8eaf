// loom sim: priority order, the main and backfill passes, placement (sim_engine.hpp).
#include "lib/sim/sim_engine.hpp"

namespace loom::sim::detail {

double Sim::priority(const Live &l) const
{
	double age =
		std::min(1.0, static_cast<double>(now_ - l.job->submit_s) / static_cast<double>(cfg_.sched.max_age_s));
	return cfg_.sched.age_weight * age +
	       cfg_.sched.size_weight * static_cast<double>(l.job->gpus()) / static_cast<double>(cluster_gpus_);
}

std::vector<uint32_t> Sim::ordered()
{
	// Drop jobs no longer pending (started or re-pushed), keep one entry each.
	std::vector<uint32_t> v;
	v.reserve(pending_.size());
	for (uint32_t i : pending_)
		if (live_[i].st == St::pending && live_[i].eligible_s <= now_ && !mark_[i]) {
			mark_[i] = true;
			v.push_back(i);
		}
	for (uint32_t i : v)
		mark_[i] = false;
	pending_.clear();
	std::vector<std::pair<double, uint32_t>> p;
	p.reserve(v.size());
	for (uint32_t i : v)
		p.push_back({priority(live_[i]), i});
	std::sort(p.begin(), p.end(), [&](const auto &a, const auto &b) {
		if (a.first != b.first)
			return a.first > b.first;
		return live_[a.second].job->id < live_[b.second].job->id;
	});
	v.clear();
	for (const auto &x : p)
		v.push_back(x.second);
	return v;
}

bool Sim::dominated(const Live &l, const std::vector<Shape> &failed) const
{
	bool b = borrower(l);
	for (const Shape &s : failed)
		if (l.alloc_nodes() >= s.nodes && l.job->gpus_per_node >= s.gpn && *s.cls == l.req.gpu_class &&
		    *s.tier == l.req.need.tier && (s.borrow || !b))
			return true;
	return false;
}

bool Sim::try_start(uint32_t i, std::vector<Shape> &failed)
{
	bool open = borrower(live_[i]) && !spare_list_.empty();
	if (open)
		open_spares(true);
	bool started = try_place(i, failed, open);
	if (open)
		open_spares(false);
	return started;
}

bool Sim::try_place(uint32_t i, std::vector<Shape> &failed, bool open)
{
	Live &l = live_[i];
	const place::Capacity &tot = state_.total();
	if (tot.free_gpus < l.alloc_gpus() || tot.with_free(l.job->gpus_per_node) < l.alloc_nodes() ||
	    dominated(l, failed)) {
		failed.push_back({l.alloc_nodes(), l.job->gpus_per_node, &l.req.gpu_class, &l.req.need.tier, open});
		return false;
	}
	bool dump = cfg_.dump_at_s >= 0 && !dumped_ && now_ >= cfg_.dump_at_s;
	std::string state_text = dump ? place::write_state(state_) : std::string();
	auto t0 = std::chrono::steady_clock::now();
	placer_->set_clock(static_cast<int>((now_ / 60) % 1440));
	if (l.req.need.given()) // a value tier's time to wait, as select/topo counts it
		l.req.may_wait_s = place::wait_budget(cfg_.weights.value_wait, l.job->limit_s, now_ - l.job->submit_s,
						      place::no_deadline);
	auto d = placer_->choose(state_, l.req);
	engine_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	decisions_++;
	if (!d) {
		error_ = "job " + std::to_string(l.job->id) + " (" + l.job->source + "): " + d.error().str();
		return false;
	}
	if (!d->placed()) {
		// Waiting by choice (a value tier) says nothing of what fits.
		if (d->waiting.empty())
			failed.push_back(
				{l.alloc_nodes(), l.job->gpus_per_node, &l.req.gpu_class, &l.req.need.tier, open});
		else
			waited_by_choice_ = true;
		return false;
	}
	if (dump)
		write_dump(state_text, l, d->candidates[0]);
	start(i, d->candidates[0]);
	return true;
}

void Sim::write_dump(const std::string &state_text, const Live &l, const place::Candidate &cand)
{
	dumped_ = true;
	std::string nodes;
	for (topo::Index n : cand.nodes)
		nodes += (nodes.empty() ? "" : ",") + c_.nodes[static_cast<size_t>(n)].name;
	(void)write_file_atomic(cfg_.dump_prefix + "state.txt", state_text);
	(void)write_file_atomic(cfg_.dump_prefix + "request.txt", place::format_request(l.req) + "\n");
	(void)write_file_atomic(cfg_.dump_prefix + "decision.txt",
				strprintf("time=%lld job=%u placer=%s nodes=%s\n", static_cast<long long>(now_),
					  l.job->id, cfg_.placer.c_str(), nodes.c_str()));
}

void Sim::keep_pending(const std::vector<uint32_t> &order)
{
	for (uint32_t i : order)
		if (live_[i].st == St::pending)
			pending_.push_back(i);
}

void Sim::main_pass()
{
	dirty_ = false;
	refresh_pool();
	std::vector<uint32_t> order = ordered();
	std::vector<Shape> failed;
	int tried = 0;
	for (uint32_t i : order) {
		if (tried++ >= cfg_.sched.main_depth)
			break;
		if (!try_start(i, failed))
			break; // Slurm's main scheduler stops at the first job that cannot start
		if (!error_.empty())
			break;
	}
	keep_pending(order);
}

void Sim::backfill_pass()
{
	refresh_pool();
	std::vector<uint32_t> order = ordered();
	std::vector<Shape> failed;
	int tried = 0;
	bool reserved = false;
	int64_t shadow = 0, extra = 0;
	for (uint32_t i : order) {
		if (tried++ >= cfg_.sched.bf_max_job_test || !error_.empty())
			break;
		Live &l = live_[i];
		if (!reserved) {
			waited_by_choice_ = false;
			if (try_start(i, failed) || waited_by_choice_)
				continue; // one waiting by choice holds no reservation
			reserved = true;
			reservation(l.alloc_gpus(), shadow, extra);
			failed.clear(); // later jobs may fit where the head does not
			continue;
		}
		bool ends_before = now_ + l.job->limit_s <= shadow;
		if (!ends_before && l.alloc_gpus() > extra)
			continue;
		if (try_start(i, failed) && !ends_before)
			extra -= l.alloc_gpus();
	}
	keep_pending(order);
}

} // namespace loom::sim::detail
