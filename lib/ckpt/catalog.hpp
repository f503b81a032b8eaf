// loom ckpt: the catalog of a checkpoint directory, verification and retention.
//
// Only committed checkpoints (step-N directories, not symlinks) are listed.
// Restore takes the newest one that verifies; a corrupt newest one falls back
// to the one before it. The directory scan is the authority, the latest
// pointer a convenience for people and tools.
#pragma once

#include "lib/ckpt/manifest.hpp"
#include "lib/util/expected.hpp"

#include <functional>
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
	not_directory,       // the step-N name is a symlink or not a directory
	manifest_missing,    // no MANIFEST.json: torn or uncommitted
	manifest_refused,    // MANIFEST.json is a symlink, not a regular file, or too large
	manifest_invalid,    // not a valid loom-ckpt/1 or /2 manifest (JSON, fields, limits, names)
	step_mismatch,       // the manifest's step is not the directory's, or a part's not the manifest's
	file_missing,        // a listed file is absent
	file_refused,        // a listed file is a symlink, not a regular file, or reached through a symlink
	size_mismatch,       // a listed file's size differs from the manifest
	hash_mismatch,       // a listed file's SHA-256 differs from the manifest (full verification)
	io_error,            // anything else (permissions, read errors)
	rank_missing,        // loom-ckpt/2: fewer parts than world_size (a rank did not finish)
	world_size_mismatch, // the job cannot restore it: another world size (section 7.3)
};
// "hash-mismatch" for Problem::hash_mismatch, "ok" for none.
const char *problem_name(Problem p);

struct Entry {
	std::string name; // step-000000001200
	std::string path; // <dir>/step-000000001200
	int64_t step = 0;
	std::optional<Manifest> manifest; // absent when it did not read
	std::string problem;              // why the manifest did not read, or verification failed
	Problem reason = Problem::none;   // the category of 'problem'
};

// Committed checkpoints, newest step first, manifests read (not verified).
// A manifest that reads but is not one checkpoint is refused here, with
// 'manifest' absent: its step is not the directory's, a part's step is not
// the manifest's (step-mismatch), a rank has no part (rank-missing).
expected<std::vector<Entry>> list_checkpoints(const std::string &dir);
// Check one checkpoint's files against its manifest. Each file is opened
// component by component without following a symlink. 'why', when given, is
// set to the failure's category (Problem::none on success).
status verify_checkpoint(const std::string &path, const Manifest &m, Verify level, Problem *why = nullptr);
// The same for some of its files.
status verify_files(const std::string &path, const std::vector<FileEntry> &files, Verify level, Problem *why = nullptr);

// The job that restores: its world size and its rank (section 7.3).
struct Job {
	int64_t world_size = 1;
	int64_t rank = 0;
};
// Whether 'job' can restore a checkpoint of manifest 'm' (verified or not):
// loom-ckpt/2 layout "ranks" needs the same world size, "dcp" takes any,
// loom-ckpt/1 needs a world of 1. Else world-size-mismatch, naming both.
status check_job(const std::string &path, const Manifest &m, const Job &job, Problem *why = nullptr);

struct Latest {
	Entry entry;
	std::vector<Entry> skipped; // newer ones that failed, with their problem
};
// The newest checkpoint that verifies; nullopt when there is none. With a
// job, the newest that verifies and that the job can restore (check_job):
// the others are skipped as world-size-mismatch. Retention never asks with
// a job: what one job cannot read is still a complete checkpoint.
expected<std::optional<Latest>> find_latest(const std::string &dir, Verify level);
expected<std::optional<Latest>> find_latest(const std::string &dir, Verify level, const Job &job);

// Restoring in a job of several ranks that can agree (section 7.3,
// catalog_ranks.cpp). verify_share() hashes the rank's own share (layout
// "ranks": its part; "dcp": parts r, r+W, r+2W...; loom-ckpt/1: every file)
// and checks the other files' sizes. find_latest_agreed() takes the newest
// checkpoint that every rank accepts (verify_share and check_job): each rank
// proposes the newest step it accepts, 'all_min' (an all-reduce minimum
// over the job's ranks, e.g. MPI_Allreduce with MPI_MIN) gives the group's
// minimum, and the ranks propose again at or below it until it holds for
// all. Every rank calls all_min equally often, a rank that cannot list the
// directory too (proposing none). Skipped: the newer ones, with this rank's
// verdict where it refused them, else Problem::none ("not taken: ...").
status verify_share(const std::string &path, const Manifest &m, const Job &job, Problem *why = nullptr);
using AllMin = std::function<int64_t(int64_t)>;
expected<std::optional<Latest>> find_latest_agreed(const std::string &dir, const Job &job, const AllMin &all_min);

struct PruneResult {
	std::vector<std::string> kept, removed;
	std::vector<std::string> staging_removed;
};
// Keep the newest 'keep' complete checkpoints (quick verification); remove
// older complete ones and broken ones older than the oldest kept. Broken ones
// newer than that stay for inspection. Staging debris of writers that are
// gone (same host, dead pid; other hosts and the shared staging of several
// ranks, which names no host: older than stale_seconds) goes too.
expected<PruneResult> prune(const std::string &dir, int keep, double stale_seconds = 86400, bool dry_run = false);

} // namespace loom::ckpt
