// loom health: what `loom health check --drain` does to its node in Slurm.
//
// The verdict and what Slurm says about the node (lib/health/slurm_ops)
// give a plan: drain, update loom's reason, resume, mark suspect, update or
// clear loom's mark, or nothing. The rules (NHC's, see slurm_ops.hpp):
//   - drain: a "drain" verdict drains a node in service with "loom: <check>:
//     <evidence>"; a node loom drained gets the new evidence as its reason;
//   - unknown (the check cannot judge) never drains; like suspect, it marks
//     the node "loom:suspect:<check>:<evidence>" (Extra, or Comment when
//     Extra holds another's note), so that placement steers away and running
//     checkpointed jobs checkpoint;
//   - ok: loom resumes its own drain and clears its own mark only after the
//     node has been judged ok at every check for the hold-down time;
//   - nodes drained by others, DOWN, not responding, rebooting, powering or
//     in maintenance are never touched.
// The plan is a pure function; the state it needs between runs (since when
// the node has been ok, the kernel-log cursor) lives in a small JSON file
// under the state directory.
#pragma once

#include "lib/health/rules.hpp"
#include "lib/health/slurm_ops.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loom::health {

struct HoldState {
	int64_t healthy_since = 0; // 0: not judged ok at the last check
	uint64_t kmsg_cursor = 0;  // /dev/kmsg sequence judged so far
	// GPUs in the node's Gres as Slurm said at the last --drain check (-1:
	// never asked): a check without --drain (prolog, epilog, by hand) expects
	// them without asking slurmctld itself.
	int64_t gres_gpus = -1;
};
expected<HoldState> load_hold_state(const std::string &path); // missing file: defaults
status save_hold_state(const std::string &path, const HoldState &h);

enum class NodeStep { drain, update_reason, resume, mark_suspect, clear_suspect };
const char *node_step_name(NodeStep s);

struct PlannedStep {
	NodeStep step;
	std::string field; // mark_suspect / clear_suspect: "extra" or "comment"
	std::string text;  // the reason (drain, update_reason) or the mark (mark_suspect)
};

struct NodePlan {
	std::vector<PlannedStep> steps; // in order
	std::string why;                // one line for the log
};

// Decide, and update 'hold' (healthy_since) for the next run.
NodePlan plan_node(const SlurmNode &node, const Verdict &v, HoldState &hold, int64_t now, int64_t hold_down);

// Carry the plan out; the first step that fails stops it (its error names
// the command and Slurm's answer).
status apply_plan(SlurmOps &slurm, const std::string &node, const NodePlan &plan);

// The suspect flag the checkpoint plugin watches: <state_dir>/suspect holds the
// reason while the node is not ok (suspect, unknown or drained), and is
// removed when it is ok.
status update_suspect_flag(const std::string &state_dir, const Verdict &v);

} // namespace loom::health
