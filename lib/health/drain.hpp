// loom health: when `loom health check --drain` drains or resumes a node.
//
// Own your drains (NHC): loom drains with a reason that starts "loom:", and
// resumes a node only when (a) its current reason starts with "loom:", and
// (b) every check since has been ok for the hold-down time. A node drained by
// an admin (any other reason) is never touched. The decision is a pure
// function; the state it needs between runs (since when the node has been
// healthy) lives in a small JSON file under the state directory.
#pragma once

#include "lib/health/rules.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace loom::health {

// What scontrol says about the node.
struct SlurmNodeState {
	std::string state;  // "IDLE+DRAIN", "MIXED", "DOWN*+DRAIN" ...
	std::string reason; // without the " [user@time]" suffix
	bool drained() const;  // DRAIN flag (draining or drained)
	bool by_loom() const { return reason.rfind("loom:", 0) == 0; }
};

// `scontrol show node NAME` (multi-line form) -> state and reason.
expected<SlurmNodeState> parse_scontrol_node(std::string_view text, const std::string &node);

struct HoldState {
	int64_t healthy_since = 0; // 0: not (yet) healthy since loom drained it
	uint64_t kmsg_cursor = 0;  // /dev/kmsg sequence judged so far
};
expected<HoldState> load_hold_state(const std::string &path); // missing file: defaults
status save_hold_state(const std::string &path, const HoldState &h);

enum class DrainStep { none, drain, update_reason, resume };
const char *drain_step_name(DrainStep s);

struct DrainDecision {
	DrainStep step = DrainStep::none;
	std::string reason; // for drain / update_reason
	std::string why;    // one line for the log
};

// Decide and update 'hold' (healthy_since) for the next run.
DrainDecision decide_drain(const SlurmNodeState &node, const Verdict &v, HoldState &hold, int64_t now,
			   int64_t hold_down);

// The suspect flag the checkpoint plugin watches: <state_dir>/suspect holds the
// reason while the node is suspect or drained, and is removed when it is ok.
status update_suspect_flag(const std::string &state_dir, const Verdict &v);

} // namespace loom::health
