// select/topo: what the placement needs, read from slurmctld's records.
// Only this file and the plugin entry points touch Slurm's internal structs.
#pragma once

#include "lib/place/fabric.hpp"
#include "lib/place/slurm_policy.hpp"
#include "lib/place/spares.hpp"
#include "plugins/common/slurm_internal.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::select_topo {

// Every configured node: name, GPUs, features.
std::vector<place::SlurmNodeInfo> slurm_nodes();

// GPUs configured on a node and GPUs not allocated to any job right now.
struct NodeGpus {
	int total = 0;
	int free = 0;
};
NodeGpus node_gpus(node_record_t *node);

// A node marked suspect by loom's health checks: its Extra (or Comment)
// field starts with "loom:suspect" (`scontrol update nodename=X
// extra=loom:suspect:<why>`). Placement puts such nodes last.
bool node_suspect(node_record_t *node);
// Its suspect mark is of a link check (exchange::is_link_suspect_mark).
bool node_link_suspect(node_record_t *node);

// What the spare pool needs of a node (lib/place/spares.hpp).
place::SpareNodeState spare_node_state(node_record_t *node);

// What a job asks for, as far as placement cares.
struct JobAsk {
	uint32_t job_id = 0;
	int gpus_per_node = 0;     // --gres=gpu:N / --gpus-per-node
	int64_t gpus_total = 0;    // --gpus=N (whole job)
	bool whole_node = false;   // --exclusive
	std::string features;      // --constraint, as given
	std::string gpu_tres;      // the GPU request as Slurm keeps it ("gres/gpu:h100:8"): per node, job or task
	uint32_t max_switches = 0; // --switches=N (0: not given)
	char **spank_env = nullptr;
	uint32_t spank_env_size = 0;
	place::SlurmPolicies policies; // --spread-job, --contiguous, LLN (required_* set by the placer)
	std::vector<int> required;     // -w/--nodelist: Slurm node indexes
	bool use_min_nodes = false;    // --use-min-nodes
	int64_t time_limit_s = 0;      // its time limit, else the partition's default or maximum; 0: unlimited
	bool in_reservation = false;   // --reservation (or a replacement's, jobcomp/health)
	int64_t eligible_at = 0;       // when it became eligible (Slurm resets begin_time then), else submitted
	int64_t deadline = 0;          // --deadline (0: none)
};
JobAsk job_ask(job_record_t *job);

// The node's scheduling weight. In RUN_NOW (run_now), as slurmctld set it for
// this job_test (Weight= and its marks for a boot needed or a node outside a
// FLEX reservation), less the low byte cons_tres keeps for itself. Backfill's
// WILL_RUN sets none (cons_tres writes its own encoding inside its call, so
// the field holds whatever the last caller left): there, the configured
// Weight= alone.
uint64_t node_sched_weight(int index, bool run_now);

// GPUs that running jobs ending by 'when' (by their time limit) free, per
// Slurm node index: the cluster as backfill's WILL_RUN sees it then.
std::vector<std::pair<int, int>> gpus_freed_by(time_t when);

// SelectTypeParameters asks for least loaded nodes (CR_LLN; SELECT_LLN from
// 25.05 on): defined by each select adapter.
bool select_lln();

} // namespace loom::select_topo
