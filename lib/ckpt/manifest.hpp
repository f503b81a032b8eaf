// loom ckpt: the manifest that makes a checkpoint a checkpoint.
//
// Written last into the staging directory, it lists every file with its size
// and SHA-256, the training step, the world size, when it was written and how
// long the writer took. Its formats are shared with the Python SDK
// (doc/loom-ckpt-protocol.md): "loom-ckpt/1", the checkpoint of one process,
// and "loom-ckpt/2", the checkpoint of a job of several ranks, one part per
// rank. Reading is strict: unknown fields and bad values are errors.
#pragma once

#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loom::ckpt {

inline constexpr const char *manifest_format = "loom-ckpt/1";
inline constexpr const char *manifest_format_ranks = "loom-ckpt/2";
// The layouts of a loom-ckpt/2 checkpoint: each rank's files below its
// rank-<r>/ directory, or torch.distributed.checkpoint's own names.
inline constexpr const char *layout_ranks = "ranks";
inline constexpr const char *layout_dcp = "dcp";
// Limits of the format (doc/loom-ckpt-protocol.md): a reader refuses more.
inline constexpr uint64_t manifest_max_bytes = 64ull << 20;
inline constexpr size_t manifest_max_files = 1000000;
inline constexpr int64_t manifest_max_file_size = int64_t(1) << 62;
inline constexpr int64_t manifest_max_world_size = 100000000;
inline constexpr int64_t manifest_max_restart_count = 1000000;

struct FileEntry {
	std::string path; // relative to the checkpoint directory
	uint64_t size = 0;
	std::string sha256; // 64 lower-case hex digits
};

// One rank's part of a loom-ckpt/2 manifest (section 7.2).
struct RankPart {
	int64_t rank = 0;
	int64_t step = 0;
	std::string host;          // optional: the host that wrote the part
	double write_seconds = -1; // optional: < 0 when absent
	std::vector<FileEntry> files;
};

struct Manifest {
	int version = 1; // 1: "loom-ckpt/1", 2: "loom-ckpt/2"
	int64_t step = 0;
	int64_t world_size = 1;
	double created = 0;       // unix time the checkpoint was committed
	double write_seconds = 0; // the background writer's duration
	std::string job_id;       // optional: the Slurm job that wrote it
	int64_t restart_count = 0;
	std::string writer;          // optional: "loom-sdk-cpp", "loom-sdk-python", ...
	std::string layout;          // version 2: layout_ranks or layout_dcp
	std::vector<RankPart> ranks; // version 2: the parts, in the manifest's order
	// Version 1: the files. Version 2: every part's files, in part order
	// (filled in by manifest_parse; manifest_to_json writes the parts).
	std::vector<FileEntry> files;

	uint64_t total_bytes() const;
	const RankPart *part(int64_t rank) const; // nullptr when absent (or version 1)
};

std::string manifest_to_json(const Manifest &m);
// 'source' names the file in errors ("/ckpt/step-.../MANIFEST.json").
expected<Manifest> manifest_parse(std::string_view text, const std::string &source);
// Why a manifest did not read: absent (a torn checkpoint), not a regular file
// of at most manifest_max_bytes (a symlink is never followed), or its text is
// not a valid manifest.
enum class ManifestFault { none, missing, refused, invalid };
expected<Manifest> manifest_read(const std::string &checkpoint_dir, ManifestFault *fault = nullptr);

// What rank 'rank' restores of a checkpoint, by the names it saved: layout
// "ranks", its part's files without their rank-<r>/ prefix; "dcp" and
// loom-ckpt/1, every file (DCP reads them all; one process's are its own).
std::vector<FileEntry> rank_files(const Manifest &m, int64_t rank);
// The directory, inside checkpoint 'path', holding the files rank_files()
// names: <path>/rank-<r> for layout "ranks", else 'path'.
std::string rank_files_dir(const std::string &path, const Manifest &m, int64_t rank);

// A rank's part as it waits for the committer (.parts/rank-<r>.json): the
// part object plus "world_size".
std::string part_to_json(const RankPart &p, int64_t world_size);
struct PartFile {
	RankPart part;
	int64_t world_size = 0;
};
// Read strictly, with the checks of a manifest's part in 'layout'.
expected<PartFile> part_parse(std::string_view text, const std::string &source, const std::string &layout);

} // namespace loom::ckpt
