// loom ckpt: the rank, world size and run id a launcher gives a process
// (doc/loom-ckpt-protocol.md 7.4 and 7.5), in one place for the C++ side.
//
// Launchers, in the order they are believed (torchrun inside srun sets both
// RANK and SLURM_PROCID); a launcher counts when both of its variables are set:
//   torchrun  RANK / WORLD_SIZE
//   srun      SLURM_PROCID / SLURM_STEP_NUM_TASKS, else SLURM_NTASKS
//   Open MPI  OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE
//   PMIx      PMIX_RANK / PMIX_SIZE, else PMI_SIZE
// and rank 0 of 1 when none is. The run id names one launch, the same on
// every rank of it: j<SLURM_JOB_ID>_r<LOOM_RESTART_COUNT or
// SLURM_RESTART_COUNT, else 0>_s<SLURM_STEP_ID, else "batch">, plus
// _e<TORCHELASTIC_RESTART_COUNT> under torchrun; without SLURM_JOB_ID,
// PMIX_NAMESPACE, else OMPI_MCA_orte_ess_jobid, else LOOM_CKPT_RUN_ID;
// characters other than [A-Za-z0-9_-] as '_'; empty when there is none.
// The same rules as sdk/python/loom_ckpt/launch.py.
#pragma once

#include "lib/util/expected.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace loom::ckpt {

// The value of an environment variable, nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(const std::string &name)>;
EnvLookup process_env();                                    // getenv()
EnvLookup map_env(std::map<std::string, std::string> vars); // for tests

struct Launch {
	int64_t rank = 0;
	int64_t world_size = 1;
	std::string launcher; // "torchrun", "srun", "Open MPI", "PMIx", "PMI"; empty: none
};
// Errors name the variables and the launcher ("SLURM_PROCID=4,
// SLURM_NTASKS=4: not a rank of that world (srun)").
expected<Launch> launch_ranks(const EnvLookup &env);
std::string launch_run_id(const EnvLookup &env);

} // namespace loom::ckpt
