// loom sim: the jobs a simulation replays: real traces and a generated mix.
//
// Traces say when a job arrived, how many GPUs it used and how long it ran;
// none says everything a Slurm job states, so each reader fills the rest the
// same documented way (loom-sim(1), TRACES):
//  - nodes: GPUs over gpus_per_node (8) rounded up, the GPUs spread evenly
//    (12 GPUs -> 2 nodes x 6); a job of at most 8 GPUs is one node;
//  - time limit: twice the run time rounded up to the hour, at least 1 h
//    (users ask for more than they use; Slurm kills at the limit);
//  - communication: jobs of several nodes are comm=normal, of 32 GPUs or
//    more comm=heavy; one-node jobs light;
//  - checkpointing: jobs of ckpt_min_gpus GPUs or more (default 8) use
//    --ckpt; every batch job may be requeued (Slurm's JobRequeue=1).
// Run times are what the job needs on the reference GPU class at the
// reference placement (every node under one leaf); the simulator stretches or
// shrinks them by placement and class (cost.hpp).
//
// Philly (Microsoft, 2017; petuum/adaptdl's philly.csv): columns timestamp
// ("2017-10-09 07:01:55"), duration (s), num_gpus, gpu_time, cluster. It has no
// node counts, limits, GPU types or job structure.
// Alibaba GPU v2023 (openb_pod_list_*.csv): name, cpu_milli, memory_mib,
// num_gpu (0-8), gpu_milli, gpu_spec ("V100M16|V100M32"), qos, pod_phase,
// creation_time, deletion_time, scheduled_time (s). Pods of one node only; CPU-only
// pods (num_gpu 0) and pods never scheduled (no scheduled_time) are left out; a pod sharing a GPU (gpu_milli < 1000) takes the
// whole GPU, as Slurm does without MPS/sharding; gpu_spec becomes the class asked
// for (its first type) only when the cluster has that class.
#pragma once

#include "lib/place/hints.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loom::sim {

struct Job {
	uint32_t id = 0;
	int64_t submit_s = 0; // from the start of the run
	int nodes = 1;
	int gpus_per_node = 1;
	int64_t work_s = 0; // run time at the reference placement and class
	int64_t limit_s = 3600;
	place::Comm comm = place::Comm::normal;
	bool ckpt = false;
	std::string gpu_class; // "" any
	place::Need need;      // a tier instead of a class (--gpu-tier)
	std::string source;    // trace line or generator, for messages

	int gpus() const { return nodes * gpus_per_node; }
};

struct TraceFill {
	int gpus_per_node = 8; // the cluster's
	int ckpt_min_gpus = 8;
	double limit_factor = 2;
	// Scaling: arrival times divided by time_scale (2: twice the rate);
	// GPU counts multiplied by size_scale (rounded, at least 1).
	double time_scale = 1;
	double size_scale = 1;
	int64_t days = 0;      // keep jobs arriving in the first N days (0: all)
	int64_t skip_days = 0; // start that many days into the trace
};

// The fill rules above, applied to one job of 'gpus' GPUs.
void fill_job(Job &j, int64_t gpus, int64_t run_s, const TraceFill &f);

expected<std::vector<Job>> read_philly(const std::string &path, const TraceFill &f);
expected<std::vector<Job>> read_alibaba(const std::string &path, const TraceFill &f,
					const std::vector<std::string> &cluster_classes);
// By the header: Philly's or Alibaba's columns.
expected<std::vector<Job>> read_trace(const std::string &path, const TraceFill &f,
				      const std::vector<std::string> &cluster_classes);

// A generated large-model mix: whitespace-separated key=value words.
//   days=N          length of the arrival window [7]
//   load=X          offered GPU-hours per available GPU-hour [0.9]
//   large_share=X   share of the GPU-hours in large jobs [0.5]
//   large_gpus=A-B  large jobs' sizes, powers of two [1024-8192]
//   large_hours=A-B large jobs' run times, uniform [12-72]
//   small_gpus=A-B  small jobs' sizes, log-uniform [1-256]
//   small_hours=M   small jobs' median run time, log-normal (sigma 1.2) [1]
//   ckpt_min_gpus=G [8]
//   seed=N          [1]
//   tiers=LIST      share of the jobs asking for each GPU tier instead of a class,
//                   "value:40,balanced:30,fast:30" (sbatch --gpu-tier) [none]
struct MixGen {
	int64_t days = 7;
	double load = 0.9;
	double large_share = 0.5;
	int64_t large_min = 1024, large_max = 8192;
	double large_hours_min = 12, large_hours_max = 72;
	int64_t small_min = 1, small_max = 256;
	double small_hours = 1;
	int64_t ckpt_min_gpus = 8;
	uint64_t seed = 1;
	std::vector<std::pair<std::string, double>> tiers; // tier, share of the jobs
};
expected<MixGen> parse_mix_gen(std::string_view spec, const std::string &where = "--generate-jobs");
std::string format_mix_gen(const MixGen &g);
// Jobs for a cluster of total_gpus GPUs of gpus_per_node each.
std::vector<Job> generate_mix(const MixGen &g, int64_t total_gpus, int gpus_per_node);

} // namespace loom::sim
