// loom_fabric.so: the fabric reading spank_place needs in slurmstepd, kept
// out of spank_place.so itself. sbatch, salloc and srun load every SPANK
// plugin, and the fabric readers bring hwloc, libyaml and json-c with them
// (tests/plugins/link_weight.sh); spank_place opens this module, installed
// beside it, only in slurmstepd. One C entry point, this header its contract.
#pragma once

extern "C" {

// The module's interface version; spank_place refuses any other.
#define LOOM_FABRIC_ABI 2

struct loom_step_ranks {
	unsigned node_rank; // this node's place in the order
	char *order;        // the step's nodes in rank order, one per line
	char *task_hosts;   // one line per task in that order; "" when the counts are unknown
	char *error;        // set instead when the order cannot be known
};

// The fabric as select/topo reads it from conf_dir (loom-topo.conf, else
// topology.conf, or topology.yaml when yaml is set), then lib/place's
// step_ranks. Fills *out (free it with loom_fabric_free); returns 0, or -1
// with out->error set. Never throws.
typedef int (*loom_fabric_step_ranks_fn)(const char *conf_dir, int yaml, const char *nodelist, const char *node,
					 const char *tasks, struct loom_step_ranks *out);
typedef void (*loom_fabric_free_fn)(struct loom_step_ranks *r);

// NCCL settings for this node (lib/topo/nccl_env.hpp), for --comm-env=auto.
struct loom_nccl_env {
	char *topo_xml; // NCCL_TOPO_FILE's content; "" when the fabric cannot describe the node
	char *no_topo;  // then: why
	char *ib_hca;   // NCCL_IB_HCA; "" when the node has no HCA in the fabric
	char *error;    // set instead when neither can be given
};
typedef int (*loom_fabric_nccl_env_fn)(const char *conf_dir, int yaml, const char *node, struct loom_nccl_env *out);
typedef void (*loom_fabric_free_nccl_fn)(struct loom_nccl_env *e);
typedef int (*loom_fabric_abi_fn)(void);
int loom_fabric_abi(void);
int loom_fabric_step_ranks(const char *conf_dir, int yaml, const char *nodelist, const char *node, const char *tasks,
			   struct loom_step_ranks *out);
void loom_fabric_free(struct loom_step_ranks *r);
int loom_fabric_nccl_env(const char *conf_dir, int yaml, const char *node, struct loom_nccl_env *out);
void loom_fabric_free_nccl(struct loom_nccl_env *e);
}
