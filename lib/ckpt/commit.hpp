// loom ckpt: writing one checkpoint and committing it atomically.
//
//   auto st = Staging::begin(dir, step);        // <dir>/.staging/step-N.<host>.<pid>.<n>/
//   st->write_file("model.bin", bytes);          // written, hashed, fsynced
//   st->commit(manifest);                        // manifest, fsync, rename to <dir>/step-N, latest
//
// Until the rename a reader sees nothing; after it, a complete checkpoint. A
// writer killed at any point leaves only staging debris, never a torn
// checkpoint. Re-committing a step that already exists (a broken one, or one
// written again after a restore from an older step) swaps the new directory in
// with a single rename and removes the old one.
#pragma once

#include "lib/ckpt/manifest.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loom::ckpt {

class Staging {
public:
	static expected<Staging> begin(const std::string &dir, int64_t step);
	// The staging directory 'name' that the ranks of a job share
	// (shared_staging_name()): created, or joined where another rank
	// created it first. Never removed by abort() or the destructor: the
	// other ranks may be writing there (commit_ranks.hpp).
	static expected<Staging> join(const std::string &dir, int64_t step, const std::string &name);
	Staging(Staging &&other) noexcept;
	Staging &operator=(Staging &&) = delete;
	Staging(const Staging &) = delete;
	~Staging(); // removes the staging directory unless committed

	const std::string &path() const { return path_; }
	int64_t step() const { return step_; }

	// Write one file from memory (hashing it on a second thread while it is
	// written) and fsync it. Sub-directories in 'name' are created.
	expected<FileEntry> write_file(const std::string &name, const void *data, size_t size);
	expected<FileEntry> write_file(const std::string &name, std::string_view data)
	{
		return write_file(name, data.data(), data.size());
	}
	// Record a file someone else wrote into path() (reads it to hash it).
	expected<FileEntry> add_existing(const std::string &name);

	// Write the manifest (files as recorded by write_file/add_existing unless
	// m.files is set), then rename into place and move the latest pointer.
	// Fills m.created. Returns the committed checkpoint's path.
	expected<std::string> commit(Manifest m);
	// With MANIFEST.json on disk in path(): fsync it, rename it to
	// <dir>/step-N (swapping out one that is there), fsync <dir>, move the
	// latest pointer (section 3, steps 3 to 6). commit() ends with it.
	expected<std::string> publish();
	void abort();

	const std::vector<FileEntry> &files() const { return files_; }

private:
	Staging(std::string dir, std::string path, int64_t step, bool shared = false)
		: dir_(std::move(dir)), path_(std::move(path)), step_(step), shared_(shared)
	{
	}
	std::string dir_, path_;
	int64_t step_;
	std::vector<FileEntry> files_;
	bool shared_ = false;
	bool done_ = false;
};

// Point <dir>/latest at a checkpoint name (atomic replace).
status write_latest(const std::string &dir, const std::string &name);
// The name <dir>/latest holds, or an empty string when there is none.
expected<std::string> read_latest(const std::string &dir);

// Remove a directory tree without following symlinks (a symlink is removed, not its target).
status remove_tree(const std::string &path);
// fsync a directory.
status fsync_dir(const std::string &path);

} // namespace loom::ckpt
