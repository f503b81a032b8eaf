// loom ckpt: the manifest that makes a checkpoint a checkpoint.
//
// Written last into the staging directory, it lists every file with its size
// and SHA-256, the training step, the world size, when it was written and how
// long the writer took. Its format ("loom-ckpt/1") is shared with the Python
// SDK; reading is strict: unknown fields and bad values are errors.
#pragma once

#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loom::ckpt {

inline constexpr const char *manifest_format = "loom-ckpt/1";
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

struct Manifest {
	int64_t step = 0;
	int64_t world_size = 1;
	double created = 0;       // unix time the checkpoint was committed
	double write_seconds = 0; // the background writer's duration
	std::string job_id;       // optional: the Slurm job that wrote it
	int64_t restart_count = 0;
	std::string writer;       // optional: "loom-sdk-cpp", "loom-sdk-python", ...
	std::vector<FileEntry> files;

	uint64_t total_bytes() const;
};

std::string manifest_to_json(const Manifest &m);
// 'source' names the file in errors ("/ckpt/step-.../MANIFEST.json").
expected<Manifest> manifest_parse(std::string_view text, const std::string &source);
// Why a manifest did not read: absent (a torn checkpoint), not a regular file
// of at most manifest_max_bytes (a symlink is never followed), or its text is
// not a valid manifest.
enum class ManifestFault { none, missing, refused, invalid };
expected<Manifest> manifest_read(const std::string &checkpoint_dir, ManifestFault *fault = nullptr);

} // namespace loom::ckpt
