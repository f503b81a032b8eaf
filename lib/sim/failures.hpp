// loom sim: the failure model, and each failure's outcome through loom's rules.
//
// Failures arrive per node as a Poisson process: rate per 1000 node-days in
// all, split by cause. A share of the nodes ("lemons", as Meta found) fails
// lemon_factor times as often as the rest; the fleet's rate stays the one
// given. The defaults are Llama 3's 54 days on 16,384 H100 (419 unexpected
// interruptions on 2,048 nodes: 3.79 per 1000 node-days) and its causes
// (field-notes.md); the rest of its list (10.9%) counts as host failures.
//
// What a failure does is not decided here: each cause writes what the job and
// the node would show (a kernel Xid line, an NCCL line naming its host, a
// node that went DOWN, a Python traceback), and lib/health's own scanner and
// classifier (scan_job_log, classify_job, decide_job) say what loom does:
// drain the culprit, requeue the job, or neither. A drained node comes back
// after the cause's repair time; a failure on an idle node is found by the
// node checks and drains it when the cause is the hardware's.
//
// The model file: key=value words, '#' comments:
//   rate=3.79                 failures per 1000 node-days, all causes
//   lemon_share=0.01 lemon_factor=10
//   restart_budget=3          requeues of a job without --ckpt (jobcomp/health's restart_budget)
//   ckpt_max_restarts=10      of a --ckpt job (spank_ckpt's max_restarts; the site may allow up to 100)
//   user_resubmit=30m         a job loom does not requeue is resubmitted by its user after this
//   cause.NAME.share=30.1     relative share (any scale)
//   cause.NAME.repair=72h     time out of service once drained
//   cause.NAME.detect=0       from the fault to the job's end (a hang waits for the watchdog)
//   cause.NAME.warned=0       share of these failures that signs announce ahead (rising
//                             corrected ECC, link flaps: what loom health and its predictor
//                             read); the node turns suspect that long before it fails:
//   cause.NAME.lead=1h        placement puts it last, and spank_ckpt checkpoints the jobs on it
// NAME is one of the causes below; a cause given share=0 never happens.
#pragma once

#include "lib/health/classify.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace loom::sim {

// What a cause leaves behind, for lib/health to judge.
enum class Evidence { xid_79, xid_48, xid_95, xid_119, ib_completion, ib_retry, node_down, nccl_watchdog, traceback };

struct Cause {
	std::string name;
	Evidence evidence = Evidence::node_down;
	double share = 0;
	int64_t repair_s = 0;
	int64_t detect_s = 0;
	bool hardware = true; // the node checks find it on an idle node
	double warned = 0;    // share announced by a suspect mark lead_s ahead
	int64_t lead_s = 3600;
};

struct FailureModel {
	double rate_per_1000_node_days = 3.79;
	double lemon_share = 0.01;
	double lemon_factor = 10;
	int64_t restart_budget = 3;
	int64_t ckpt_max_restarts = 10;
	int64_t user_resubmit_s = 1800;
	std::vector<Cause> causes;
	bool none = false; // --failures none
};

FailureModel default_failure_model();
expected<FailureModel> load_failure_model(const std::string &path);
expected<FailureModel> parse_failure_model(std::string_view text, const std::string &where);
std::string format_failure_model(const FailureModel &m);

// The failures of one run, drawn once so that every placer meets the same
// ones: time order, the node by model index, the cause by index.
struct Failure {
	int64_t t = 0;
	int64_t warn_t = -1; // the node turns suspect (-1: no warning)
	int32_t node = 0;
	uint32_t cause = 0;
};
std::vector<Failure> draw_failures(const FailureModel &m, size_t nodes, int64_t horizon_s, uint64_t seed);

// The job's end as Slurm and its logs would show it when 'cause' hits
// 'node' while the job runs there, judged by lib/health.
struct Outcome {
	health::FailureClass cls = health::FailureClass::none;
	bool requeue = false;
	std::vector<std::string> drain; // culprit nodes
	std::string reason;             // the drain reason or why nothing was done
};
Outcome judge_failure(const Cause &cause, uint32_t job_id, const std::vector<std::string> &job_nodes,
		      const std::string &node, bool ckpt, uint32_t restart_count, uint32_t restart_budget);
// The lines a job's output would hold (for tests and --explain).
std::string evidence_text(Evidence e, const std::string &node);

} // namespace loom::sim
