// loom sim: a Slurm-shaped scheduler loop over loom's own engines.
//
// The loop replays jobs against a cluster model with one of several placers
// (placer.hpp), on lib/place's State (the same free-capacity index select/topo
// keeps in slurmctld), lib/ckpt's interval policy and lib/health's judgement
// of every failure (failures.hpp):
//  - priority: multifactor-like, age (up to max_age) and job size terms,
//    PriorityFavorSmall=NO;
//  - the main scheduler at every event: jobs in priority order until the first
//    that does not fit (Slurm's per-partition stop), at most main_depth;
//  - backfill every bf_interval: the first job that does not fit gets a
//    reservation at the time enough GPUs come free by the running jobs' time
//    limits (EASY backfill); later jobs start when they fit now and either end
//    by their limit before it or use only GPUs the reservation does not need;
//    at most bf_max_job_test jobs per cycle;
//  - time limits kill a run (TIMEOUT); requeued jobs are eligible again after
//    requeue_delay (Slurm: cred_expire + 1 s).
// A run of a checkpointing job computes in cycles of the interval T followed
// by a blocking checkpoint of cost C; a failure loses the work since the last
// committed checkpoint, and a restart costs restart_s before work resumes.
// The run's speed is the cost model's (cost.hpp): placement and GPU class.
#pragma once

#include "lib/place/spares.hpp"
#include "lib/place/weights.hpp"
#include "lib/sim/cost.hpp"
#include "lib/sim/failures.hpp"
#include "lib/sim/jobs.hpp"
#include "lib/topo/model.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace loom::sim {

struct SchedConfig {
	double age_weight = 1000;
	double size_weight = 1000;
	int64_t max_age_s = 7 * 86400;
	int64_t bf_interval_s = 30;
	int bf_max_job_test = 500;
	int main_depth = 100;
	int64_t requeue_delay_s = 121;
	int64_t sample_s = 3600;
};

struct CkptConfig {
	int64_t interval_s = 0;  // 0: automatic (Daly, from the job's MTBF)
	double cost_s = 60;      // blocking time of one checkpoint
	int64_t restart_s = 300; // restore and warm-up after a restart
	int64_t min_interval_s = 300, max_interval_s = 6 * 3600;
};

struct RunConfig {
	std::string placer = "loom";
	int64_t horizon_s = 0; // stop here (0: when every job has ended)
	SchedConfig sched;
	CkptConfig ckpt;
	FailureModel failures; // for repair times, restart budget, causes
	CostModel cost;
	place::Weights weights;
	int64_t large_gpus = 1024; // jobs counted as large (ETTR)
	// The spare pool (loom-topo.conf spares=, spare_lend=; lib/place/spares):
	// its nodes are withheld from every job whose time limit is over
	// spares.lend_max_s. A requeued infrastructure failure whose culprits have
	// spares (jobcomp/health's plan_replacement) restarts on its healthy nodes
	// and the spares, replace_s after detection, ahead of the queue; a
	// borrowed spare is waited for. Otherwise, the normal requeue.
	place::SpareSpec spares;
	int64_t replace_s = 10;
	// Proactive migration (spank_ckpt migrate=yes): a --ckpt job on a node
	// marked suspect checkpoints at the mark; once that is committed it moves
	// off the node, to spares when there are, when ckpt::migration_cost says
	// staying loses more; at most once per migrate_window_s.
	bool migrate = false;
	int64_t migrate_window_s = 3600;
	// Standby nodes in the allocation (spank_ckpt --ckpt-standby): a --ckpt
	// job of standby_min_gpus GPUs or more asks for 'standby' nodes beside
	// its own (-1: ckpt::standby_count over its time limit at the failure
	// model's node MTBF, probability standby_p, at most standby_max), held
	// idle. When one of its active nodes fails and a standby is left, the
	// run starts again in its allocation in_alloc_s after detection plus the
	// restart: the culprit leaves the job, a standby takes its place, the
	// time limit runs on. A standby's own failure only takes it away.
	// Without a standby: the spares, then the requeue, as above.
	int64_t standby = 0;
	double standby_p = 0.9;
	int standby_max = 64;
	int64_t standby_min_gpus = 1024;
	int64_t in_alloc_s = 15;
	// Degraded uplinks: degraded_uplinks leaves, spread evenly over the
	// cluster, have their uplinks at degraded_factor of their capacity in the
	// cost model (the fabric as it is). link_marks of each such leaf's nodes
	// carry a link check's loom:suspect mark (State::set_link_suspect, what
	// select/topo sees of it); 0: placement does not see the degradation.
	// Jobs that ask for a GPU tier (Job::need; weights.tiers holds the
	// classes, prices and tiers): "engine", the tier goes to the placer as
	// --gpu-tier does; "by-hand", each names the class a person would pick
	// for it (value: the slowest class, the cheapest per hour; fast: the
	// fastest; balanced and site tiers of that objective: the middle one, by
	// throughput); "any": no class at all (first fit on any class). Only the
	// loom placer knows tiers: under "engine" the others place such jobs on
	// any class.
	std::string tier_mode = "engine";
	// Contention (cost.hpp): a job's bandwidth across an uplink is shared with
	// the jobs running across it at its start, not a full domain's share.
	bool contention = false;
	int degraded_uplinks = 0;
	double degraded_factor = 0.25;
	double link_marks = 0;
	// Write the state, request and decision of the first placement at or
	// after this time (s) to dump_prefix{state,request,decision}.txt (-1: never).
	int64_t dump_at_s = -1;
	std::string dump_prefix;
	// Called now and then with the simulated time (progress bars).
	std::function<void(int64_t now_s)> progress;
};

struct JobResult {
	uint32_t id = 0;
	int64_t submit_s = 0, first_start_s = -1, end_s = -1;
	std::string state = "PENDING"; // COMPLETED, TIMEOUT, FAILED, RUNNING, PENDING
	int gpus = 0, nodes = 0;
	int leaves = 0, nvlink_domains = 0, common_level = -1; // of the first placement
	std::string first_nodes;                               // the first placement, as a Slurm hostlist
	double step_factor = 1;                                // of the first placement
	int ring_leaf_edges = 0;                               // of the first placement, ring model
	int degraded_leaves = 0;                               // of the first placement: leaves with a degraded uplink
	place::Comm comm = place::Comm::normal;
	std::string tier;      // the job's tier ("" none)
	std::string gpu_class; // the class of its first placement's first node
	double cost = 0;       // price x GPU-hours over its runs (weights.tiers' prices)
	int64_t work_s = 0;    // its run time at the reference placement and class
	int restarts = 0;
	double lost_gpu_s = 0;
	double productive_s = 0; // wall time that became committed work
	double ettr() const;     // productive / (end - first start)
};

struct Sample {
	int64_t t = 0;
	int64_t busy_gpus = 0, available_gpus = 0, idle_nodes = 0, idle_leaves = 0, idle_nvlink = 0;
	int64_t pending_jobs = 0, pending_gpus = 0, drained_nodes = 0;
	int64_t spare_nodes = 0; // in the pool
};

struct Summary {
	size_t jobs = 0, started = 0, completed = 0, timeouts = 0, failed = 0;
	double utilization = 0;           // GPU-seconds busy / GPU-seconds of the cluster
	double utilization_available = 0; // ... / GPU-seconds of nodes in service
	double wait_mean_h = 0, wait_p95_h = 0;
	double jct_mean_h = 0;        // completed jobs: end - submit
	double multi_leaves_mean = 0; // leaves per multi-node job
	double multi_step_factor = 0; // mean step factor of multi-node jobs
	double heavy_step_factor = 0; // ... of multi-node comm=heavy jobs
	size_t degraded_leaves = 0;   // leaves with a degraded uplink
	double ettr_large = 0;        // over large jobs that ran
	size_t large_jobs = 0;
	double lost_gpu_h = 0;
	size_t failures = 0, job_failures = 0, drains = 0, requeues = 0;
	size_t holds = 0;        // not requeued by loom (held, or the job's own error): back after user_resubmit
	size_t rejected = 0;     // larger than the cluster
	size_t warnings = 0;     // nodes marked suspect ahead of a failure
	size_t replacements = 0; // requeues that restarted on spares
	size_t spare_misses = 0; // requeues that found no spare for every culprit (normal requeue)
	size_t migrations = 0;   // moves off a suspect node before it failed
	size_t migrations_to_spares = 0;
	size_t in_alloc_restarts = 0;   // failures recovered on a standby inside the allocation
	double standby_gpu_h = 0;       // GPU-hours of standby nodes held idle
	double replace_wait_mean_s = 0; // detection to running again, over replacements
	double spare_nodes_mean = 0;    // pool size, over the samples
	double idle_leaves_mean = 0;
	uint64_t decisions = 0;
	double engine_s = 0;
	double wall_s = 0;
	int64_t sim_end_s = 0;
};

struct RunResult {
	std::string placer;
	std::vector<JobResult> jobs;
	std::vector<Sample> timeline;
	Summary summary;
};

expected<RunResult> simulate(const topo::Cluster &cluster, const std::vector<Job> &jobs,
			     const std::vector<Failure> &failures, const RunConfig &cfg);

} // namespace loom::sim
