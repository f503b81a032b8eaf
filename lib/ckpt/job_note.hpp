// loom ckpt: the job's checkpoint note, in its AdminComment.
//
// spank_ckpt keeps one segment of the job's AdminComment up to date while
// the job runs, so that `scontrol show job` shows where its checkpoints are
// and the newest one committed, and `loom ckpt ls --job ID` finds the
// directory from the job:
//
//   loom ckpt: /scratch/ckpt/alice/123: step 3138, 1.5 GiB, committed 2026-12-06T19:13:53
//   loom ckpt: /scratch/ckpt/alice/123: no checkpoint yet
//
// Other notes (jobcomp/health's "loom: restarted on spares ...") share the
// field: segments are separated by " | ", and only this one is replaced
// (lib/util/admin_comment.hpp, the convention both writers follow).
#pragma once

#include "lib/util/admin_comment.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace loom::ckpt {

inline constexpr std::string_view job_note_prefix = admin_prefix_ckpt;
inline constexpr std::string_view job_note_separator = admin_comment_separator;

struct JobNote {
	std::string dir;
	int64_t step = -1;  // -1: no checkpoint yet
	uint64_t bytes = 0; // the checkpoint's bytes (every file of the manifest)
	double created = 0; // unix time of the commit
};

// The segment; an error for a directory that cannot be told apart from the
// note's punctuation (a newline, the separator).
expected<std::string> format_job_note(const JobNote &note);
// The note in an AdminComment (any segment); an error naming what is wrong
// when there is none or it does not read. 'source' names the job in errors.
expected<JobNote> parse_job_note(std::string_view admin_comment, const std::string &source);
// 'existing' with its note segment replaced by 'note' (appended when absent).
std::string merge_job_note(std::string_view existing, std::string_view note);
// 1536 -> "1.5 KiB", as a person reads a size.
std::string human_bytes(uint64_t bytes);

} // namespace loom::ckpt
