// loom exchange: one rank's progress report, as the SDKs write it and
// spank_ckpt's keeper reads it (spank_ckpt(8), PROGRESS AND HANGS).
//
//   <checkpoint dir>/.loom-progress/rank.<R>, one line, rewritten whole
//   (a new file renamed over the name) at most once a second per rank:
//
//     loom-progress 1 rank=3 world=8 node=n2 step=1200 time=1765098000.25 step_s=0.98 beat=1765098003.10
//
//   rank, world  this rank of that many (a reader judges a run once every rank
//           of it has reported a step: ranks start minutes apart on a big model)
//   step    the last completed step (-1: none yet); time: when (unix seconds)
//   step_s  how long that step took
//   beat    the reporter's heartbeat (a thread beside training): a process
//           that is stopped or gone stops beating; one blocked in a
//           collective keeps beating
//
// The Python SDK writes and reads it with the same rules (loom_ckpt/progress.py);
// both run the cases of tests/ckpt/progress-cases.json.
#pragma once

#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace loom::exchange {

inline constexpr const char *progress_dir_name = ".loom-progress";
inline constexpr const char *progress_env = "LOOM_CKPT_PROGRESS"; // "1": the SDKs report

struct ProgressReport {
	int rank = 0, world = 1;
	std::string node;
	int64_t step = -1;
	double time = 0, step_s = 0, beat = 0;
};

std::string progress_file_name(int rank); // "rank.3"
std::string format_progress(const ProgressReport &r);
// Errors name 'where' and the field.
expected<ProgressReport> parse_progress(std::string_view text, const std::string &where);

} // namespace loom::exchange
