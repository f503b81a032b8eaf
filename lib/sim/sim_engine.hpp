// loom sim: the simulator's state and its steps, internal to lib/sim.
//
// One Sim runs one placer over the jobs and failures (simulate(),
// simulator.hpp). Its steps live by concern:
//   simulator.cpp     the event loop: events in time order, the passes they make due
//   sim_runs.cpp      a run's start, progress, end, requeue
//   sim_failures.cpp  faults, failed jobs, suspect marks and the moves they cause
//   sim_spares.cpp    the spare pool, replacements on spares, drains
//   sim_schedule.cpp  priority order, the main and backfill passes, placement
//   sim_metrics.cpp   the timeline's samples and the run's summary
#pragma once

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

namespace loom::sim::detail {

enum Kind : uint8_t {
	ev_end,
	ev_jobfail,
	ev_drain,
	ev_repair,
	ev_warn,
	ev_replace,
	ev_migrate,
	ev_fail,
	ev_submit,
	ev_eligible,
	ev_backfill,
	ev_sample
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
	int standby_req = 0;      // standby nodes asked for beside the job's own (RunConfig::standby)
	int standby = 0;          // standbys held now: the last of 'nodes'
	int in_place = 0;         // restarts inside the allocation (not requeues: Slurm's restart count)
	int64_t alloc_start_s = 0, standby_since_s = 0;
	bool in_resv = false;    // this run started in a replacement's reservation
	double price_per_h = -1; // this run's GPUs at the class prices (weights.tiers); < 0 none
	int64_t last_migration_s = -1;
	std::vector<std::pair<topo::Index, double>> crossing; // this run's GPUs across uplinks (contention)
	JobResult res;
	place::Request req;

	int alloc_nodes() const { return job->nodes + standby_req; }
	uint32_t requeue_count() const { return static_cast<uint32_t>(res.restarts - in_place); }
	int64_t alloc_gpus() const { return static_cast<int64_t>(alloc_nodes()) * job->gpus_per_node; }
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

inline double pct(std::vector<double> v, double p)
{
	if (v.empty())
		return 0;
	std::sort(v.begin(), v.end());
	size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
	return v[i];
}

class Sim {
public:
	Sim(const topo::Cluster &c, const std::vector<Job> &jobs, const std::vector<Failure> &failures,
	    const RunConfig &cfg, std::unique_ptr<Placer> placer);

	expected<RunResult> run();

private:
	void push(int64_t t, uint8_t kind, uint32_t a, uint32_t b = 0) { q_.push({t, kind, seq_++, a, b}); }
	size_t failures_left() const { return failures_.size() - failures_seen_; }

	void advance(int64_t t);

	void handle(const Event &e);

	// Progress of the running job at time t: (committed, done) in reference seconds.
	std::pair<double, double> progress_at(const Live &l, int64_t t) const;

	// Wall time for the rest of the work on this run (restore, compute, checkpoints).
	double run_wall(const Live &l) const;

	// The class a person picks for a tier: by price per hour and speed, not
	// per unit of work. value: the slowest (the cheapest per hour); fast:
	// the fastest; balanced: the middle one by throughput.
	std::string hand_class(const place::Need &n) const;

	// cfg_.degraded_uplinks leaves spread evenly over leaves_ (the middle of
	// each of as many equal slices) get a degraded uplink, and link_marks of
	// their nodes a link mark.
	void degrade_uplinks();

	std::vector<std::string> names(const std::vector<topo::Index> &nodes) const;

	void start(uint32_t i, const place::Candidate &cand);
	// The run's end (done, or its time limit, which runs from the allocation's start).
	void schedule_end(uint32_t i);
	std::vector<topo::Index> active_nodes(const Live &l) const;

	// Take the run off its nodes; record its exposure.
	void release(uint32_t i, const health::Classification &cls);

	// The run ended by itself: done, or at its time limit.
	void end_run(uint32_t i);

	uint32_t budget(const Live &l) const;

	void finish(uint32_t i, const char *state);

	void requeue(uint32_t i, int64_t delay);

	void fault(uint32_t fi);

	void job_failed(const FailCtx &fc);

	// Signs ahead of a failure: loom health marks the node suspect; placement
	// puts it last and spank_ckpt checkpoints the jobs running there.
	void warn(const Failure &f);

	// The checkpoint taken at the suspect mark is committed: move, when
	// staying would lose more (spank_ckpt's coordinator, migration_cost).
	void migrate(const Move &m);

	// Standbys (sim_standby.cpp): how many a job asks for; a failed node of
	// the job replaced by one inside its allocation (false: not handled,
	// the job takes the other paths); the standby GPU-hours held so far.
	int standby_for(const Job &j) const;
	bool recover_in_allocation(uint32_t i, const FailCtx &fc, const Outcome &o);
	void drop_node(Live &l, size_t k);
	void account_standby(Live &l);
	void restart_in_place(uint32_t i);
	void record_in_place(const Live &l, const Outcome &o);

	bool want_available(size_t n) const;
	void sync(topo::Index n);
	bool node_idle(topo::Index n) const { return state_.free_gpus(n) == state_.total_gpus(n); }

	// The pool as select/topo computes it from the node table; its nodes
	// leave the State the placer sees (spares_open_ lets a borrower see them).
	void refresh_pool();
	void open_spares(bool open);
	bool borrower(const Live &l) const
	{
		return spares_on_ && place::may_borrow_spares(cfg_.spares, l.job->limit_s);
	}

	// jobcomp/health's replacement: the culprits' spares from the pool file
	// (plan_replacement), the nodes held until all are free. False: the
	// normal requeue.
	bool replace(uint32_t i, const std::vector<topo::Index> &old, const std::vector<std::string> &culprits,
		     int64_t detect_s);

	void unhold(Hold &h);

	void try_hold(uint32_t id);

	// A held node failed: the replacement is given up, the job takes the queue.
	void abandon(uint32_t id);

	void drain(topo::Index n, uint32_t cause);

	void refresh_health();

	double priority(const Live &l) const;

	std::vector<uint32_t> ordered();

	// Shapes that did not fit in this pass: a job at least as large (same
	// class) does not fit either.
	struct Shape {
		int nodes, gpn;
		const std::string *cls, *tier;
		bool borrow; // tried with the spares
	};
	bool dominated(const Live &l, const std::vector<Shape> &failed) const;

	// Try to place now; on success the job starts. A job that may borrow
	// spares sees them (select/topo withholds them from the others).
	bool try_start(uint32_t i, std::vector<Shape> &failed);

	bool try_place(uint32_t i, std::vector<Shape> &failed, bool open);

	void write_dump(const std::string &state_text, const Live &l, const place::Candidate &cand);

	void keep_pending(const std::vector<uint32_t> &order);

	void main_pass();

	void backfill_pass();

	// When the head job of 'gpus' GPUs could start by the running jobs' time
	// limits, and how many GPUs are spare then.
	void reservation(int64_t gpus, int64_t &shadow, int64_t &extra);

	void sample();

	void summarize(RunResult &r);

	const topo::Cluster &c_;
	const std::vector<Failure> &failures_;
	const RunConfig &cfg_;
	CostModel cost_;                // cfg_.cost, with Slurm's node order, the degraded uplinks and crossing_
	std::vector<double> crossing_;  // contention: GPUs of running jobs across each domain's uplink
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
	size_t in_alloc_restarts_ = 0;
	double standby_gpu_s_ = 0;
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

} // namespace loom::sim::detail
