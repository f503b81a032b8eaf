// loom: the per-node suspect flag file.
//
// `loom health check` writes it on the node (health.conf state_dir/suspect)
// while the node is suspect, and removes it when the node is ok again;
// spank_ckpt's coordinator in each job on the node watches it (suspect_flag=
// in plugstack.conf): a new flag asks for a checkpoint, and, with a predicted
// time to failure, may move the job off the node (proactive migration).
//
//   loom: predict: ib0 symbol errors at 90 rising 60/min: reaches 100 in about 1 min
//   eta_s=30
//
// The first line is the reason, for people. The optional second line is the
// predicted seconds from the check to the failure; without it the failure
// time is unknown. One writer, one reader: this file.
#pragma once

#include <string>
#include <string_view>

namespace loom::exchange {

struct SuspectFlag {
	std::string reason;
	double eta_s = 0; // 0: not predicted
};

std::string suspect_flag_text(const SuspectFlag &f);
// Lenient in what a person may have written by hand: any first line is the
// reason; an eta_s= line that does not parse as a positive number is ignored.
SuspectFlag parse_suspect_flag(std::string_view text);

} // namespace loom::exchange
