// loom health: why did a job fail? Pure functions over what Slurm says at job
// end (state, exit code, signal, the state and reason of each of its nodes)
// and what its output files say (job_log.hpp).
//
// Classes: node failure, GPU fault, network fault, NCCL timeout, out of
// memory, the user's own error (and "none" for a job that did not fail); the
// class a log line points to, and whether it names a culprit, is the error
// kind's (error_kinds.hpp). The
// first four are the infrastructure's: jobcomp/health drains the culprit
// nodes it can name and requeues the job when it is checkpoint-enabled or
// requeueable. Out of memory and user errors never drain and never requeue:
// running the same program again on other nodes would fail the same way.
#pragma once

#include "lib/health/job_log.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace loom::health {

// FailureClass (error_kinds.hpp): none, node_failure, gpu_fault,
// network_fault, nccl_timeout, oom, user_error.
const char *failure_class_name(FailureClass c);
bool is_infrastructure(FailureClass c);

struct JobEnd {
	uint32_t job_id = 0;
	std::string
		state; // Slurm's base state name: COMPLETED, FAILED, NODE_FAIL, TIMEOUT, OUT_OF_MEMORY, CANCELLED ...
	int exit_code = 0; // the job's exit status (0-255)
	int signal = 0;    // the signal that ended it, 0 if none
	std::vector<std::string> nodes;
	std::map<std::string, std::string> node_state;  // node -> "IDLE+DRAIN", "DOWN*" at job end
	std::map<std::string, std::string> node_reason; // node -> reason, when it has one
	bool requeue_allowed = false;                   // --requeue / JobRequeue
	bool checkpointed = false;                      // LOOM_CKPT=1 / comment "loom:ckpt"
	uint32_t restart_count = 0;
	int64_t start_time = 0, end_time = 0;
	std::string std_out, std_err; // expanded paths
};

struct Classification {
	FailureClass cls = FailureClass::none;
	std::vector<std::string> culprits; // nodes to drain (a subset of the job's nodes)
	std::string evidence;              // one line
};

Classification classify_job(const JobEnd &job, const JobLogScan &log);

// What to do about it (pure): drain the culprits and/or requeue.
struct JobDecision {
	bool requeue = false;
	std::vector<std::string> drain; // nodes
	std::string reason;             // "loom: jobcomp: gpu_fault: job 12: ..."
	std::string why;                // for the log
};
JobDecision decide_job(const JobEnd &job, const Classification &c, uint32_t restart_budget);

// Slurm's output file patterns: %j %J job id, %A %a array ids (given), %u
// user, %x job name, %N first node, %n node index (0), %t task (0), %% a
// percent; "%5j" zero-pads. Relative paths are taken from work_dir.
std::string expand_output_path(const std::string &pattern, const std::string &work_dir, uint32_t job_id,
			       const std::string &user, const std::string &job_name, const std::string &first_node,
			       uint32_t array_job_id = 0, uint32_t array_task_id = 0);

} // namespace loom::health
