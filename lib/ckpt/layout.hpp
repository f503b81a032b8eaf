// loom ckpt: the on-disk layout of a checkpoint directory.
//
//   <dir>/step-000000001200/          one committed checkpoint (renamed in whole)
//   <dir>/step-000000001200/MANIFEST.json
//   <dir>/latest                      name of the newest committed checkpoint
//   <dir>/.staging/step-...<host>.<pid>.<n>/   checkpoints being written
//   <dir>/.staging/step-....run-<run>.<n>/     shared by the ranks of a job
//                                      (.parts/rank-<r>.json: a rank's finished part)
//   <dir>/.trash/                     checkpoints being removed
//   <dir>/.loom-starts.json           one record per job start (restart budget)
//
// A checkpoint exists only once its directory carries the step-N name: the
// writer renames it there after the manifest is on disk.
#pragma once

#include "lib/util/expected.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace loom::ckpt {

inline constexpr const char *manifest_name = "MANIFEST.json";
inline constexpr const char *latest_name = "latest";
inline constexpr const char *staging_dir_name = ".staging";
inline constexpr const char *trash_dir_name = ".trash";
inline constexpr const char *starts_name = ".loom-starts.json";
inline constexpr const char *parts_dir_name = ".parts";
inline constexpr int64_t max_step = 999999999999LL;

// "step-000000001200" for step 1200.
std::string checkpoint_name(int64_t step);
// The step of a committed checkpoint's name; nullopt for any other name.
std::optional<int64_t> parse_checkpoint_name(std::string_view name);
// A name for a new staging directory, unique per host, process and call.
std::string staging_name(int64_t step);
// The pid and host recorded in a staging name (for cleaning up after dead writers).
struct StagingOwner {
	std::string host;
	long pid = 0;
};
// nullopt for any other name, the shared staging names of several ranks included.
std::optional<StagingOwner> parse_staging_name(std::string_view name);
// The staging name every rank of one launch derives for its save number
// 'seq' (doc/loom-ckpt-protocol.md 7.4): step-N.run-<run>.<seq>. It carries
// no host and pid: prune removes it by age only.
std::string shared_staging_name(int64_t step, const std::string &run, uint64_t seq);
// "rank-00007": a rank's directory in a checkpoint of layout "ranks" (the
// rank in at least 5 digits).
std::string rank_dir_name(int64_t rank);
// "rank-00007.json": a rank's finished part in <staging>/.parts/.
std::string part_file_name(int64_t rank);
// This host as staging names carry it: gethostname() with '.' and '/' as '_'
// ("localhost" when it fails). A writer names its staging with it and prune
// knows its own host's staging by it.
std::string staging_host();

// A relative file name inside a checkpoint: non-empty, at most 4096 bytes of
// valid UTF-8, no leading '/', no '.' or '..' component, no empty component,
// no control characters (below 0x20, 0x7f), not the manifest.
status check_relative_name(std::string_view name);
// Whether an entry of a checkpoint directory is loom's: a checkpoint or its
// staging (step-*), latest and its temporary, .staging, .trash, .loom-*.
// Other visible entries are a program's own files (a framework's
// checkpoint-500/ or last.ckpt), which loom neither reads nor removes.
bool is_loom_entry(std::string_view name);

// Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
bool is_utf8(std::string_view s);

} // namespace loom::ckpt
