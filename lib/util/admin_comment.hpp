// A job's AdminComment as loom's writers share it: segments separated by
// " | ", each owned by one writer and known by its prefix, so that a writer
// replaces its own segment and keeps the others':
//
//   loom: restarted on spares n3 -> n4 (leaf leaf1) in reservation r | loom ckpt: /ckpt/alice/42: step 3138, ...
//
//   "loom ckpt: "  spank_ckpt's checkpoint note (lib/ckpt/job_note.hpp)
//   "loom: "       jobcomp/health's restart and migration note (lib/health/jobcomp_worker.cpp)
//
// An admin's own text (no loom prefix) is a segment too, and kept.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace loom {

inline constexpr std::string_view admin_comment_separator = " | ";
inline constexpr std::string_view admin_prefix_ckpt = "loom ckpt: ";
inline constexpr std::string_view admin_prefix_health = "loom: ";

// The segments of 'text', spaces trimmed, empty ones dropped.
std::vector<std::string_view> admin_comment_segments(std::string_view text);
// 'existing' with the first segment starting with 'prefix' replaced by
// 'segment' (appended when there is none; later ones of the prefix dropped).
std::string admin_comment_replace(std::string_view existing, std::string_view prefix, std::string_view segment);

} // namespace loom
