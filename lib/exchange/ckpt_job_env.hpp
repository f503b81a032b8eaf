// loom exchange: what a job submitted with --ckpt carries to slurmctld, and the
// one notion of "a checkpointed job" and of its restart budget.
//
// In sbatch (SPANK's allocator context) spank_ckpt resolves the job's --ckpt*
// options against the site's (finalize) and sets them in the job control
// environment (spank_job_control_setenv): Slurm keeps them with the job
// (job_record_t spank_job_env, as "NAME=value"), shows them to prolog and
// epilog as SPANK_NAME, and jobcomp/health reads them when the job ends:
//   LOOM_CKPT=1                   the job asked for checkpointing
//   LOOM_CKPT_MAX_RESTARTS=N      its restart budget (--ckpt-max-restarts,
//                                 else the site's max_restarts)
// spank_ckpt holds a job that would start past that budget; jobcomp/health
// requeues a checkpointed job only while its restart count is below it. A
// job without LOOM_CKPT is not checkpointed, whatever its comment says.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace loom::exchange {

inline constexpr const char *job_env_ckpt = "LOOM_CKPT";
inline constexpr const char *job_env_max_restarts = "LOOM_CKPT_MAX_RESTARTS";

struct CkptRequest {
	bool enabled = false;
	int64_t max_restarts = -1; // -1: not carried (a job submitted before loom set it)
};

// The variables for a finalized request (nothing when it is not enabled).
std::vector<std::pair<std::string, std::string>> job_control_env(const CkptRequest &r);
// From "NAME=value" strings (Slurm's spank_job_env); unknown names are
// ignored, a malformed budget is not a budget (-1).
CkptRequest ckpt_request_from_env(const std::vector<std::string> &env);

} // namespace loom::exchange
