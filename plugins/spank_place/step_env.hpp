// spank_place in slurmstepd: what each task of a step learns from the fabric
// (the rank order, NCCL settings), and the plugstack.conf arguments that say
// where the fabric is. The options side is spank_place_plugin.cpp.
#pragma once

#include "lib/place/site_args.hpp"
#include "lib/util/expected.hpp"
#include "plugins/spank_place/fabric_module.hpp"

#include <string>

extern "C" {
#include <slurm/spank.h>
}

namespace loom::spank_place {

// plugstack.conf: rank_order=yes|no, comm_env=yes|no, conf_dir=DIR, fabric_module=PATH.
using Site = place::SiteArgs;

// The job's environment variable; "" when it has none.
std::string job_env(spank_t sp, const char *name);
// slurm.conf's directory, where the fabric files are: the site's conf_dir,
// else the directory of SLURM_CONF as slurmstepd or the job sees it, else
// the one Slurm was built for.
std::string conf_dir(const Site &site, spank_t sp);

// One step on one node. user_init names its files and opens loom_fabric.so
// (once per step and node); each task's task_init writes the files (the
// job's environment is complete only then) and sets the task's environment;
// exit removes them.
class StepEnv {
public:
	// Where this step's hostfile goes on this node; none for the extern step.
	status name_hostfile(spank_t sp);
	bool has_hostfile() const { return !hostfile_.empty(); }
	// loom_fabric.so, once: a failure is kept and is each task's error.
	void open_fabric_module(const Site &site);
	// LOOM_NODE_RANK, LOOM_HOSTFILE and LOOM_TASK_HOSTFILE.
	status set_rank_env(const Site &site, spank_t sp);
	// --comm-env=auto: NCCL_TOPO_FILE, NCCL_IB_HCA and LOOM_COMM_ENV.
	status set_comm_env(const Site &site, spank_t sp);
	// What set_comm_env would have replaced, when it could not.
	static void drop_inherited_comm_env(spank_t sp);
	void remove_files() const;

private:
	std::string hostfile_;
	loom_fabric_step_ranks_fn step_ranks_ = nullptr;
	loom_fabric_free_fn free_ = nullptr;
	loom_fabric_nccl_env_fn nccl_env_ = nullptr;
	loom_fabric_free_nccl_fn free_nccl_ = nullptr;
	std::string module_error_;
};

} // namespace loom::spank_place
