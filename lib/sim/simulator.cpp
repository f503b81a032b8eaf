// loom sim: the scheduler loop.
#include "lib/sim/simulator.hpp"

#include "lib/ckpt/coordinator.hpp"
#include "lib/ckpt/policy.hpp"
#include "lib/exchange/failure_stats.hpp"
#include "lib/exchange/spare_file.hpp"
#include "lib/health/failure_stats.hpp"
#include "lib/health/spares.hpp"
#include "lib/place/request.hpp"
#include "lib/place/state.hpp"
#include "lib/place/state_file.hpp"
#include "lib/sim/placer.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/log.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <queue>

namespace loom::sim {

double JobResult::ettr() const
{
	if (first_start_s < 0 || end_s <= first_start_s)
		return 0;
	return std::min(1.0, productive_s / static_cast<double>(end_s - first_start_s));
}

namespace {

enum Kind : uint8_t {
	ev_end, ev_jobfail, ev_drain, ev_repair, ev_warn, ev_replace, ev_migrate, ev_fail, ev_submit, ev_eligible, ev_backfill, ev_sample
};

struct Event {
	int64_t t;
	uint8_t kind;
	uint64_t seq;
	uint32_t a, b;
	bool operator>(const Event &o) const
	{
		if (t != o.t)
			return t > o.t;
		if (kind != o.kind)
			return kind > o.kind;
		return seq > o.seq;
	}
};

enum class St : uint8_t { future, pending, running, done };

struct Live {
	const Job *job = nullptr;
	St st = St::future;
	int64_t eligible_s = 0;
	double remaining = 0; // work left, reference seconds
	uint32_t serial = 0;  // bumps at every start: stale end events are ignored
	std::vector<topo::Index> nodes;
	std::vector<int> gpus;
	int64_t start_s = 0;
	int64_t restore_s = 0;    // this run's restart overhead
	double speed = 1;         // reference work per second of compute
	int64_t interval_s = 0;   // 0: no checkpoints
	bool timeout_end = false; // this run ends at its limit
	double warn_commit = 0;   // work saved by a checkpoint taken on a suspect mark (this run)
	bool in_resv = false;     // this run started in a replacement's reservation
	double price_per_h = -1;  // this run's GPUs at the class prices (weights.tiers); < 0 none
	int64_t last_migration_s = -1;
	std::vector<std::pair<topo::Index, double>> crossing; // this run's GPUs across uplinks (contention)
	JobResult res;
	place::Request req;
};

// A replacement waiting: the job's healthy nodes and its spares are held (a
// reservation) until every one is free and replace_s has passed.
struct Hold {
	uint32_t live;
	std::vector<topo::Index> nodes;
	int64_t detect_s;
	bool timer = false, open = true;
};

// A move off a suspect node, due once the checkpoint taken at the mark commits.
struct Move {
	uint32_t live, serial;
	topo::Index node;
	int64_t fail_s;
};

struct FailCtx {
	uint32_t live;
	uint32_t serial;
	uint32_t cause;
	topo::Index node;
	int64_t fault_s;
};

double pct(std::vector<double> v, double p)
{
	if (v.empty())
		return 0;
	std::sort(v.begin(), v.end());
	size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
	return v[i];
}

class Sim {
public:
	Sim(const topo::Cluster &c, const std::vector<Job> &jobs, const std::vector<Failure> &failures, const RunConfig &cfg,
	    std::unique_ptr<Placer> placer)
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
					l.req.need = jobs[i].need; // the other placers know no tiers: any class
					l.req.limit_s = jobs[i].limit_s; // prices over the run, as select/topo
				}
				else if (cfg.tier_mode == "by-hand")
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
	}

	expected<RunResult> run()
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

private:
	void push(int64_t t, uint8_t kind, uint32_t a, uint32_t b = 0) { q_.push({t, kind, seq_++, a, b}); }
	size_t failures_left() const { return failures_.size() - failures_seen_; }

	void advance(int64_t t)
	{
		if (t > now_) {
			double dt = static_cast<double>(t - now_);
			busy_gs_ += static_cast<double>(busy_gpus_) * dt;
			avail_gs_ += static_cast<double>(avail_gpus_) * dt;
			now_ = t;
		}
	}

	void handle(const Event &e)
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

	// ---- runs ----

	// Progress of the running job at time t: (committed, done) in reference seconds.
	std::pair<double, double> progress_at(const Live &l, int64_t t) const
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
		double done = std::min(l.remaining, (full * static_cast<double>(l.interval_s) + std::min(in, static_cast<double>(l.interval_s))) * l.speed);
		if (done >= l.remaining)
			committed = done;
		return {committed, done};
	}

	// Wall time for the rest of the work on this run (restore, compute, checkpoints).
	double run_wall(const Live &l) const
	{
		double compute = l.remaining / l.speed;
		double writes = 0;
		if (l.interval_s > 0)
			writes = std::floor(compute / static_cast<double>(l.interval_s)) * cfg_.ckpt.cost_s;
		if (l.interval_s > 0 && std::fmod(compute, static_cast<double>(l.interval_s)) == 0 && compute > 0)
			writes -= cfg_.ckpt.cost_s; // no checkpoint at the very end
		return static_cast<double>(l.restore_s) + compute + writes;
	}

	// The class a person picks for a tier: by price per hour and speed, not
	// per unit of work. value: the slowest (the cheapest per hour); fast:
	// the fastest; balanced: the middle one by throughput.
	std::string hand_class(const place::Need &n) const
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

	// cfg_.degraded_uplinks leaves spread evenly over leaves_ (the middle of
	// each of as many equal slices) get a degraded uplink, and link_marks of
	// their nodes a link mark.
	void degrade_uplinks()
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
			auto marks = static_cast<topo::Index>(std::ceil(cfg_.link_marks * static_cast<double>(d.direct_end - d.node_begin) - 1e-9));
			for (topo::Index k = 0; k < marks && d.node_begin + k < d.direct_end; k++)
				if (auto st = state_.set_link_suspect(d.node_begin + k, true); !st)
					error_ = "link mark: " + st.error().str();
		}
	}

	std::vector<std::string> names(const std::vector<topo::Index> &nodes) const
	{
		std::vector<std::string> v;
		v.reserve(nodes.size());
		for (topo::Index n : nodes)
			v.push_back(c_.nodes[static_cast<size_t>(n)].name);
		return v;
	}

	void start(uint32_t i, const place::Candidate &cand)
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
		l.start_s = now_;
		Span sp = placement_cost(c_, l.nodes, l.job->comm, cost_);
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
		busy_gpus_ += l.job->gpus();
		double wall = run_wall(l);
		l.timeout_end = wall > static_cast<double>(l.job->limit_s);
		int64_t end = now_ + (l.timeout_end ? l.job->limit_s : std::max<int64_t>(1, static_cast<int64_t>(std::ceil(wall))));
		running_end_.push_back({now_ + l.job->limit_s, i});
		push(end, ev_end, i, l.serial);
	}

	// Take the run off its nodes; record its exposure.
	void release(uint32_t i, const health::Classification &cls)
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
		busy_gpus_ -= l.job->gpus();
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

	// The run ended by itself: done, or at its time limit.
	void end_run(uint32_t i)
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
			if (saved > 0 && static_cast<uint32_t>(l.res.restarts) < budget(l)) {
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

	uint32_t budget(const Live &l) const
	{
		return static_cast<uint32_t>(l.job->ckpt ? cfg_.failures.ckpt_max_restarts : cfg_.failures.restart_budget);
	}

	void finish(uint32_t i, const char *state)
	{
		Live &l = live_[i];
		l.st = St::done;
		l.res.state = state;
		l.res.end_s = now_;
		unfinished_--;
	}

	void requeue(uint32_t i, int64_t delay)
	{
		Live &l = live_[i];
		l.st = St::pending;
		l.res.restarts++;
		l.eligible_s = now_ + delay;
		requeues_++;
		push(l.eligible_s, ev_eligible, i);
	}

	// ---- failures ----

	void fault(uint32_t fi)
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

	void job_failed(const FailCtx &fc)
	{
		Live &l = live_[fc.live];
		if (l.st != St::running || l.serial != fc.serial)
			return;
		const Cause &cause = cfg_.failures.causes[fc.cause];
		Outcome o = judge_failure(cause, l.job->id, names(l.nodes), c_.nodes[static_cast<size_t>(fc.node)].name, l.job->ckpt,
					  static_cast<uint32_t>(l.res.restarts), budget(l));
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

	// Signs ahead of a failure: loom health marks the node suspect; placement
	// puts it last and spank_ckpt checkpoints the jobs running there.
	void warn(const Failure &f)
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

	// The checkpoint taken at the suspect mark is committed: move, when
	// staying would lose more (spank_ckpt's coordinator, migration_cost).
	void migrate(const Move &m)
	{
		Live &l = live_[m.live];
		size_t n = static_cast<size_t>(m.node);
		if (l.st != St::running || l.serial != m.serial || !up_[n] ||
		    std::find(l.nodes.begin(), l.nodes.end(), m.node) == l.nodes.end())
			return;
		double left = std::max(0.0, (l.remaining - l.warn_commit) / l.speed);
		ckpt::MigrationCost mc = ckpt::migration_cost(0, static_cast<double>(m.fail_s - now_), left,
							      static_cast<double>(l.interval_s), static_cast<double>(cfg_.ckpt.restart_s));
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

	// ---- spares ----

	bool want_available(size_t n) const
	{
		return up_[n] && held_by_[n] < 0 && (spares_open_ || !pool_.is_spare(static_cast<topo::Index>(n)));
	}
	void sync(topo::Index n)
	{
		bool w = want_available(static_cast<size_t>(n));
		if (state_.available(n) != w)
			(void)state_.set_available(n, w);
	}
	bool node_idle(topo::Index n) const { return state_.free_gpus(n) == state_.total_gpus(n); }

	// The pool as select/topo computes it from the node table; its nodes
	// leave the State the placer sees (spares_open_ lets a borrower see them).
	void refresh_pool()
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
	void open_spares(bool open)
	{
		spares_open_ = open;
		for (topo::Index n : spare_list_)
			sync(n);
	}
	bool borrower(const Live &l) const { return spares_on_ && place::may_borrow_spares(cfg_.spares, l.job->limit_s); }

	// jobcomp/health's replacement: the culprits' spares from the pool file
	// (plan_replacement), the nodes held until all are free. False: the
	// normal requeue.
	bool replace(uint32_t i, const std::vector<topo::Index> &old, const std::vector<std::string> &culprits, int64_t detect_s)
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

	void unhold(Hold &h)
	{
		h.open = false;
		for (topo::Index n : h.nodes) {
			held_by_[static_cast<size_t>(n)] = -1;
			sync(n);
		}
		pool_dirty_ = true;
	}

	void try_hold(uint32_t id)
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

	// A held node failed: the replacement is given up, the job takes the queue.
	void abandon(uint32_t id)
	{
		Hold &h = holds_list_[id];
		if (!h.open)
			return;
		unhold(h);
		Live &l = live_[h.live];
		l.eligible_s = now_ + cfg_.sched.requeue_delay_s;
		push(l.eligible_s, ev_eligible, h.live);
	}

	void drain(topo::Index n, uint32_t cause)
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

	void refresh_health()
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

	// ---- scheduling ----

	double priority(const Live &l) const
	{
		double age = std::min(1.0, static_cast<double>(now_ - l.job->submit_s) / static_cast<double>(cfg_.sched.max_age_s));
		return cfg_.sched.age_weight * age +
		       cfg_.sched.size_weight * static_cast<double>(l.job->gpus()) / static_cast<double>(cluster_gpus_);
	}

	std::vector<uint32_t> ordered()
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

	// Shapes that did not fit in this pass: a job at least as large (same
	// class) does not fit either.
	struct Shape {
		int nodes, gpn;
		const std::string *cls, *tier;
		bool borrow; // tried with the spares
	};
	bool dominated(const Live &l, const std::vector<Shape> &failed) const
	{
		bool b = borrower(l);
		for (const Shape &s : failed)
			if (l.job->nodes >= s.nodes && l.job->gpus_per_node >= s.gpn && *s.cls == l.req.gpu_class && *s.tier == l.req.need.tier &&
			    (s.borrow || !b))
				return true;
		return false;
	}

	// Try to place now; on success the job starts. A job that may borrow
	// spares sees them (select/topo withholds them from the others).
	bool try_start(uint32_t i, std::vector<Shape> &failed)
	{
		bool open = borrower(live_[i]) && !spare_list_.empty();
		if (open)
			open_spares(true);
		bool started = try_place(i, failed, open);
		if (open)
			open_spares(false);
		return started;
	}

	bool try_place(uint32_t i, std::vector<Shape> &failed, bool open)
	{
		Live &l = live_[i];
		const place::Capacity &tot = state_.total();
		if (tot.free_gpus < l.job->gpus() || tot.with_free(l.job->gpus_per_node) < l.job->nodes || dominated(l, failed)) {
			failed.push_back({l.job->nodes, l.job->gpus_per_node, &l.req.gpu_class, &l.req.need.tier, open});
			return false;
		}
		bool dump = cfg_.dump_at_s >= 0 && !dumped_ && now_ >= cfg_.dump_at_s;
		std::string state_text = dump ? place::write_state(state_) : std::string();
		auto t0 = std::chrono::steady_clock::now();
		placer_->set_clock(static_cast<int>((now_ / 60) % 1440));
		if (l.req.need.given()) // a value tier's time to wait, as select/topo counts it
			l.req.may_wait_s = place::wait_budget(cfg_.weights.value_wait, l.job->limit_s,
							      now_ - l.job->submit_s, place::no_deadline);
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
				failed.push_back({l.job->nodes, l.job->gpus_per_node, &l.req.gpu_class, &l.req.need.tier, open});
			else
				waited_by_choice_ = true;
			return false;
		}
		if (dump)
			write_dump(state_text, l, d->candidates[0]);
		start(i, d->candidates[0]);
		return true;
	}

	void write_dump(const std::string &state_text, const Live &l, const place::Candidate &cand)
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

	void keep_pending(const std::vector<uint32_t> &order)
	{
		for (uint32_t i : order)
			if (live_[i].st == St::pending)
				pending_.push_back(i);
	}

	void main_pass()
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

	void backfill_pass()
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
				reservation(l.job->gpus(), shadow, extra);
				failed.clear(); // later jobs may fit where the head does not
				continue;
			}
			bool ends_before = now_ + l.job->limit_s <= shadow;
			if (!ends_before && l.job->gpus() > extra)
				continue;
			if (try_start(i, failed) && !ends_before)
				extra -= l.job->gpus();
		}
		keep_pending(order);
	}

	// When the head job of 'gpus' GPUs could start by the running jobs' time
	// limits, and how many GPUs are spare then.
	void reservation(int64_t gpus, int64_t &shadow, int64_t &extra)
	{
		std::vector<std::pair<int64_t, uint32_t>> ends;
		std::vector<std::pair<int64_t, uint32_t>> keep;
		for (const auto &e : running_end_) // an entry of an earlier run of a requeued job is stale
			if (live_[e.second].st == St::running && live_[e.second].start_s + live_[e.second].job->limit_s == e.first) {
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

	void sample()
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

	void summarize(RunResult &r)
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

	const topo::Cluster &c_;
	const std::vector<Failure> &failures_;
	const RunConfig &cfg_;
	CostModel cost_; // cfg_.cost, with Slurm's node order, the degraded uplinks and crossing_
	std::vector<double> crossing_; // contention: GPUs of running jobs across each domain's uplink
	bool waited_by_choice_ = false; // the last try_place: a value tier chose to wait
	size_t degraded_leaves_ = 0;
	std::unique_ptr<Placer> placer_;
	place::State state_;
	std::vector<Live> live_;
	std::vector<std::vector<uint32_t>> node_jobs_;
	std::vector<uint32_t> pending_;
	std::vector<bool> mark_;
	std::vector<std::pair<int64_t, uint32_t>> running_end_;
	std::vector<FailCtx> fails_;
	// The spare pool.
	bool spares_on_ = false, spares_open_ = false, pool_dirty_ = true;
	place::SparePool pool_;
	exchange::SpareFile pool_file_;
	std::vector<topo::Index> spare_list_;
	std::vector<int32_t> held_by_; // by node: the hold holding it, -1: none
	std::vector<uint16_t> resv_;   // by node: runs on it that started in a replacement's reservation
	std::vector<Hold> holds_list_;
	std::vector<Move> moves_;
	size_t replacements_ = 0, spare_misses_ = 0, migrations_ = 0, migrations_to_spares_ = 0;
	double replace_wait_s_ = 0;
	std::vector<bool> up_, suspect_;
	std::vector<double> hist_; // failure-history health weight per node
	std::vector<topo::Index> leaves_;
	std::map<std::string, std::string> class_of_;
	exchange::FailureStats stats_;
	std::priority_queue<Event, std::vector<Event>, std::greater<Event>> q_;
	std::vector<Sample> timeline_;
	std::string error_;
	uint64_t seq_ = 0;
	int64_t now_ = 0;
	int64_t bf_due_ = -1;
	bool dirty_ = false, dumped_ = false;
	int64_t cluster_gpus_ = 0, avail_gpus_ = 0, busy_gpus_ = 0;
	double busy_gs_ = 0, avail_gs_ = 0;
	double prior_mtbf_s_ = 0;
	size_t unfinished_ = 0, failures_seen_ = 0, failures_n_ = 0, job_failures_ = 0, drains_ = 0, requeues_ = 0,
	       holds_ = 0, rejected_ = 0, drained_ = 0, warnings_ = 0;
	uint64_t decisions_ = 0;
	double engine_s_ = 0;
};

} // namespace

expected<RunResult> simulate(const topo::Cluster &cluster, const std::vector<Job> &jobs,
			     const std::vector<Failure> &failures, const RunConfig &cfg)
{
	auto placer = make_placer(cfg.placer, cluster, cfg.weights);
	if (!placer)
		return unexpected(placer.error());
	Sim sim(cluster, jobs, failures, cfg, std::move(*placer));
	return sim.run();
}

} // namespace loom::sim
