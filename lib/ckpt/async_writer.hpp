// loom ckpt: asynchronous checkpoint saving (the application side).
//
// save_async() copies the application's buffers into snapshot memory it owns
// (anonymous memory from mmap, reused by the next save, so steady-state saves
// fault nothing in; large snapshots are copied by a few threads) and returns;
// training goes on while a background thread writes the files, commits the
// checkpoint and applies retention. A new save first waits for the one
// before it: at most one snapshot is in flight.
//
// The first save would fault its snapshot memory in while the caller waits:
// reserve() has the background thread map and fault it in beforehand, so
// that the first save costs what the steady ones do.
#pragma once

#include "lib/ckpt/manifest.hpp"
#include "lib/util/expected.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace loom::ckpt {

struct BufferView {
	std::string name;
	const void *data = nullptr;
	size_t size = 0;
};

struct WriterSettings {
	std::string dir;
	int keep = 3; // retention after each commit (rank 0's); 0 keeps all
	// A world of one process writes loom-ckpt/1. A larger one writes each
	// rank's share of a loom-ckpt/2 checkpoint (commit_ranks.hpp): every
	// rank of the launch must save every step; rank 0 commits once every
	// rank's part is there, waiting at most commit_timeout_s.
	int64_t world_size = 1;
	int64_t rank = 0;
	std::string run; // the launch's run id (ranks.hpp), needed with world_size > 1
	double commit_timeout_s = 600;
	int64_t restart_count = 0;
	std::string job_id;
	std::string writer = "loom-sdk-cpp";
	// Snapshots of at least this many bytes are copied by copy_threads
	// threads (0: min(4, hardware threads)).
	size_t parallel_copy_min = 64u << 20;
	int copy_threads = 0;
	// Ask for transparent huge pages for snapshot memory (MADV_HUGEPAGE).
	// Off by default: on a VM that gives free memory back to its host
	// (virtio-balloon free page reporting) a huge page is new host memory
	// every time, and the first copy into fresh memory took 8-14 s a GiB
	// instead of 0.5-0.9 s with small pages (2-core Firecracker VM); on
	// bare metal it saves faults.
	bool huge_pages = false;
};

struct SaveReport {
	int64_t step = -1;
	std::string path;   // committed checkpoint (rank > 0: the one rank 0 commits)
	double stall_s = 0; // time save_async() held the caller
	double write_s = 0; // background write and commit
	uint64_t bytes = 0;
};

// Private anonymous memory from mmap, returned with munmap; optionally
// aligned to and advised for transparent huge pages (MADV_HUGEPAGE: honoured
// when THP is in "always" or "madvise" mode). Move-only.
class SnapshotMemory {
public:
	SnapshotMemory() = default;
	~SnapshotMemory() { release(); }
	SnapshotMemory(SnapshotMemory &&o) noexcept { *this = std::move(o); }
	SnapshotMemory &operator=(SnapshotMemory &&o) noexcept;
	SnapshotMemory(const SnapshotMemory &) = delete;
	SnapshotMemory &operator=(const SnapshotMemory &) = delete;

	// At least 'size' bytes (rounded up to the page; with huge_pages, to
	// the huge page from 2 MiB on), not yet faulted in.
	static expected<SnapshotMemory> map(size_t size, bool huge_pages = false);
	// Fault every page in now, writable (the kernel zeroes them), a few
	// MiB at a time; stops early once *stop is true.
	void prefault(const std::atomic<bool> *stop = nullptr);
	char *data() const { return data_; }
	size_t capacity() const { return capacity_; }
	void release();

private:
	void *base_ = nullptr; // the mapping, which may start before data_ (huge page alignment)
	size_t length_ = 0;
	char *data_ = nullptr;
	size_t capacity_ = 0;
};

struct CopyPiece {
	void *to = nullptr;
	const void *from = nullptr;
	size_t size = 0;
};
// Copy the pieces with up to 'threads' threads (the caller is one of them),
// in chunks of about a thread's share (at least 8 MiB) taken in turn; one
// thread when 'threads' <= 1 or a thread cannot be started.
void parallel_copy(const std::vector<CopyPiece> &pieces, int threads);
// Threads for a snapshot of 'bytes': 1 below parallel_copy_min, else
// copy_threads or min(4, hardware threads).
int copy_threads_for(const WriterSettings &s, uint64_t bytes);
// Bytes of snapshot memory for buffers of these sizes (each starts 64-byte aligned).
uint64_t snapshot_bytes(const std::vector<size_t> &sizes);

class AsyncWriter {
public:
	explicit AsyncWriter(WriterSettings s) : s_(std::move(s)) {}
	~AsyncWriter();
	AsyncWriter(const AsyncWriter &) = delete;
	AsyncWriter &operator=(const AsyncWriter &) = delete;

	// Map and fault in snapshot memory for buffers of these sizes, on the
	// background thread (after the save in flight, if any); returns at
	// once. A save_async() that comes before it is done stops it (within
	// 16 MiB) and faults the rest in with its copy threads, so it is held
	// about as long as without a reserve, not for the whole reserve.
	// Memory already large enough is kept; a later, larger save maps more.
	// A failure here is not reported: the save tries again.
	status reserve(const std::vector<size_t> &sizes);
	status reserve(const std::vector<BufferView> &buffers);
	status save_async(int64_t step, const std::vector<BufferView> &buffers);
	// The next save's number in shared staging names (7.4 step 1) when the
	// ranks number their saves by rank 0's stamp: a rank past a stamped
	// step skipped that save, not its number. Never lowers the count.
	void number_next_save(uint64_t seq)
	{
		if (seq > saves_ + 1)
			saves_ = seq - 1;
	}
	// Write and commit on the calling thread.
	expected<SaveReport> save(int64_t step, const std::vector<BufferView> &buffers);
	// Wait for the save (or reserve) in flight; the last save's report (or
	// error), again when nothing is in flight.
	expected<SaveReport> wait();
	bool busy() const { return worker_.joinable(); }
	// Snapshot memory mapped now (0 before the first save or reserve);
	// call after wait().
	size_t snapshot_capacity() const { return memory_.capacity(); }

private:
	struct Blob {
		std::string name;
		size_t offset = 0, size = 0;
	};
	// Stage, write, commit and prune: the one commit path of save() and save_async().
	expected<SaveReport> write_checkpoint(int64_t step, uint64_t seq, const std::vector<BufferView> &files) const;
	expected<SaveReport> write_rank_share(int64_t step, uint64_t seq, const std::vector<BufferView> &files) const;
	expected<SaveReport> write_snapshot(int64_t step, uint64_t seq) const;
	status ensure_memory(uint64_t bytes, bool prefault);
	void join_worker(); // the save in flight; a reserve in flight is cut short

	WriterSettings s_;
	SnapshotMemory memory_;
	std::vector<Blob> snapshot_;
	uint64_t saves_ = 0; // this launch's saves: the seq of shared staging names
	std::thread worker_;
	std::atomic<bool> stop_reserve_{false};
	std::mutex mu_;
	expected<SaveReport> last_{SaveReport{}};
	double stall_ = 0;
};

} // namespace loom::ckpt
