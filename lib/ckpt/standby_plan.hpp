// loom ckpt: which nodes of a job with standbys run its steps, how a failed
// node is replaced by a standby inside the allocation, and the one file that
// tells a step's srun to start again (the coordinator writes it, spank_ckpt
// in srun reads it).
//
// The layout: job_submit/loom adds the standbys to the job's node count and
// names how many in LOOM_CKPT_STANDBY. The job's nodes in Slurm's order
// (SLURM_JOB_NODELIST) hold the active nodes first and the standbys last
// (the tail of the gang select/topo placed, in the same leaf). A step without
// a node list gets the first nodes of the allocation in that order, so the
// batch step's SLURM_JOB_NUM_NODES (the active count) keeps every srun off
// the standbys without a word in the user's script.
//
// A replacement drains and releases the culprit (scontrol update JobId=
// NodeList=, which never removes the batch host: that one is excluded from
// the next step instead), and the first standby joins the active nodes. As
// every standby follows every active node in Slurm's order, the active nodes
// stay the first of the allocation.
#pragma once

#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace loom::ckpt {

// The environment variable job_submit/loom sets in the job: the standbys it added.
inline constexpr const char *standby_env = "LOOM_CKPT_STANDBY";
// ... and the nodes the job asked for (-N): the active count, whatever the
// allocation holds now (a requeued job that lost a node to a replacement
// comes back with fewer standbys, the same ranks).
inline constexpr const char *active_count_env = "LOOM_CKPT_ACTIVE";
// What the batch step gives its script: the standbys held, and the directory
// where a step's srun and the coordinator meet (the hook reads it).
inline constexpr const char *standby_nodes_env = "LOOM_CKPT_STANDBY_NODES";
inline constexpr const char *standby_dir_env = "LOOM_CKPT_STANDBY_DIR";

struct StandbyLayout {
	std::vector<std::string> job;     // the allocation, Slurm's order
	std::vector<std::string> active;  // the steps' nodes, in that order
	std::vector<std::string> standby; // idle, in that order
	std::vector<std::string> exclude; // still in the job, never again in a step (a failed batch host)
};

// The last 'standbys' of the job's nodes are the standbys; at least one node
// stays active.
expected<StandbyLayout> split_standbys(const std::vector<std::string> &job_nodes, int standbys);
// The first 'active' nodes run the steps, the rest are standbys (none when
// the job holds just 'active'); fewer nodes than 'active' is an error.
expected<StandbyLayout> split_active(const std::vector<std::string> &job_nodes, int active);

struct Replacement {
	bool done = false;
	std::string why;     // why not, when !done; what, when done
	std::string taken;   // the standby that joined
	bool release = true; // remove the culprit from the job (false: the batch host)
	StandbyLayout after;
};
// Replace 'culprit' (an active node) by the first standby. Not done when the
// culprit is not active or no standby is left.
Replacement replace_node(const StandbyLayout &l, const std::string &culprit, const std::string &batch_host);

// Slurm's per-node counts ("2(x3),1" for SLURM_TASKS_PER_NODE and
// SLURM_JOB_CPUS_PER_NODE): one entry per node, and back.
expected<std::vector<std::string>> expand_counts(std::string_view text);
std::string compress_counts(const std::vector<std::string> &per_node);

// The batch step's environment that keeps its steps on the active nodes:
// SLURM_JOB_NUM_NODES, SLURM_NNODES, the active nodes' SLURM_TASKS_PER_NODE,
// SLURM_NTASKS and SLURM_NPROCS (when SLURM_NTASKS_PER_NODE says how many
// per node), LOOM_CKPT_STANDBY_NODES. 'get' reads the job's environment.
using EnvGet = std::string (*)(const char *name, void *ctx);
std::vector<std::pair<std::string, std::string>> active_env(const StandbyLayout &l, EnvGet get, void *ctx);

// The coordinator's answer to a step that ended (verdict.<step> in the
// standby directory): start again on the new layout, or not.
struct StepVerdict {
	int64_t step = -1;
	bool relaunch = false;
	int generation = 0; // in-allocation restarts so far
	StandbyLayout layout;
	std::string cpus_per_node; // SLURM_JOB_CPUS_PER_NODE of the allocation now
	std::string why;
};
std::string format_verdict(const StepVerdict &v);
expected<StepVerdict> parse_verdict(std::string_view text, const std::string &where);
// The variables srun is started again with (the active count, the
// allocation's node list and CPUs, the standbys left, the generation as
// LOOM_CKPT_GENERATION), and the --exclude it needs ("" when none).
std::vector<std::pair<std::string, std::string>> relaunch_env(const StepVerdict &v);
std::string relaunch_exclude(const StepVerdict &v);

} // namespace loom::ckpt

namespace loom::ckpt {

// What job_submit/loom does with sbatch's --ckpt-standby (the spank option
// reaches slurmctld in the job's environment as standby_option_env): the
// node count grows by the standbys, the task count by their tasks when a
// per-node count gives it. 0 stands for a count the user did not give.
inline constexpr const char *standby_option_env = "_SLURM_SPANK_OPTION_spank_ckpt_ckpt_standby";
struct SubmitCounts {
	uint32_t min_nodes = 0, max_nodes = 0, num_tasks = 0, ntasks_per_node = 0;
};
struct SubmitPlan {
	int standbys = 0;
	SubmitCounts after;
	std::string why; // for slurmctld's log and the job
};
// value: "N" or "auto" (auto: standby_count over the time limit, node MTBF
// and p; a job without a time limit holds max). Errors name the option.
expected<SubmitPlan> plan_submit(const SubmitCounts &job, std::string_view value, double time_limit_s,
				 double node_mtbf_s, double p, int max_standby);

} // namespace loom::ckpt
