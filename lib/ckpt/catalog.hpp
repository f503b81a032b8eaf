// loom ckpt: the catalog of a checkpoint directory, verification and retention.
//
// Only committed checkpoints (step-N directories, not symlinks) are listed.
// Restore takes the newest one that verifies; a corrupt newest one falls back
// to the one before it. The directory scan is the authority, the latest
// pointer a convenience for people and tools.
#pragma once

#include "lib/ckpt/manifest.hpp"
#include "lib/util/expected.hpp"

#include <optional>
#include <string>
#include <vector>

namespace loom::ckpt {

enum class Verify {
	quick, // manifest reads, every file is a regular file of the recorded size
	full,  // and every file's SHA-256 matches
};

// Why a checkpoint is refused: the categories of doc/loom-ckpt-protocol.md,
// the same in the Python SDK (Checkpoint.reason).
enum class Problem {
	none,
	not_directory,     // the step-N name is a symlink or not a directory
	manifest_missing,  // no MANIFEST.json: torn or uncommitted
	manifest_refused,  // MANIFEST.json is a symlink, not a regular file, or too large
	manifest_invalid,  // not a valid loom-ckpt/1 manifest (JSON, fields, limits, names)
	step_mismatch,     // the manifest's step is not the directory's
	file_missing,      // a listed file is absent
	file_refused,      // a listed file is a symlink, not a regular file, or reached through a symlink
	size_mismatch,     // a listed file's size differs from the manifest
	hash_mismatch,     // a listed file's SHA-256 differs from the manifest (full verification)
	io_error,          // anything else (permissions, read errors)
};
// "hash-mismatch" for Problem::hash_mismatch, "ok" for none.
const char *problem_name(Problem p);

struct Entry {
	std::string name;   // step-000000001200
	std::string path;   // <dir>/step-000000001200
	int64_t step = 0;
	std::optional<Manifest> manifest; // absent when it did not read
	std::string problem;              // why the manifest did not read, or verification failed
	Problem reason = Problem::none;   // the category of 'problem'
};

// Committed checkpoints, newest step first, manifests read (not verified).
expected<std::vector<Entry>> list_checkpoints(const std::string &dir);
// Check one checkpoint's files against its manifest. Each file is opened
// component by component without following a symlink. 'why', when given, is
// set to the failure's category (Problem::none on success).
status verify_checkpoint(const std::string &path, const Manifest &m, Verify level, Problem *why = nullptr);

struct Latest {
	Entry entry;
	std::vector<Entry> skipped; // newer ones that failed, with their problem
};
// The newest checkpoint that verifies; nullopt when there is none.
expected<std::optional<Latest>> find_latest(const std::string &dir, Verify level);

struct PruneResult {
	std::vector<std::string> kept, removed;
	std::vector<std::string> staging_removed;
};
// Keep the newest 'keep' complete checkpoints (quick verification); remove
// older complete ones and broken ones older than the oldest kept. Broken ones
// newer than that stay for inspection. Staging debris of writers that are
// gone (same host, dead pid; other hosts: older than stale_seconds) goes too.
expected<PruneResult> prune(const std::string &dir, int keep, double stale_seconds = 86400, bool dry_run = false);

} // namespace loom::ckpt
