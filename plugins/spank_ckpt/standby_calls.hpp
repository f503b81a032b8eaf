// spank_ckpt: the commands the standby keeper runs (scontrol, squeue,
// scancel, loom), each with a deadline, and the fields it reads from their
// one-line output. Shared by the keeper's files only.
#pragma once

#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::spank_ckpt::standby {

inline constexpr double tick_s = 0.25;    // how soon an ended step is answered
inline constexpr int call_timeout_s = 20; // one scontrol, squeue, scancel or loom call
inline constexpr int settle_s = 30;       // steps ending, the job letting go of a node

// The value of " key=" in one line of `scontrol -o show ...` (up to the next
// space or the line's end).
std::string field(const std::string &line, const std::string &key);
// Run argv with the deadline; its output, or an error naming the command.
expected<std::string> call(const std::vector<std::string> &argv);
// squeue or scancel beside the site's scontrol.
std::string sibling(const std::string &scontrol, const char *name);
uint64_t file_size(const std::string &path); // 0 when absent

} // namespace loom::spank_ckpt::standby
