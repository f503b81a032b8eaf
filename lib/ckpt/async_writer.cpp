#include "lib/ckpt/async_writer.hpp"

#include "lib/ckpt/catalog.hpp"
#include "lib/ckpt/commit.hpp"
#include "lib/ckpt/commit_ranks.hpp"
#include "lib/ckpt/layout.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/log.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <sys/mman.h>
#include <system_error>
#include <unistd.h>
#include <utility>

namespace loom::ckpt {
namespace {

constexpr size_t huge_page = 2u << 20;
constexpr size_t blob_align = 64;
// The copy is split into one chunk per thread, a whole number of huge pages
// (one thread faults each in), at least this large: large memcpy() calls
// take glibc's non-temporal path, about 1.6 times as fast on a large
// snapshot as copies of a few MiB each (measured on a 2-core EPYC VM).
constexpr size_t copy_chunk_min = 8u << 20;
// A reserve looks for a save waiting on it after each piece (a few ms; up to
// ~50 ms where the host of a VM has to fault the memory in too).
constexpr size_t prefault_chunk = 16u << 20;

double seconds_since(std::chrono::steady_clock::time_point t)
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

size_t page_size()
{
	long p = ::sysconf(_SC_PAGESIZE);
	return p > 0 ? static_cast<size_t>(p) : 4096;
}

} // namespace

SnapshotMemory &SnapshotMemory::operator=(SnapshotMemory &&o) noexcept
{
	if (this != &o) {
		release();
		base_ = std::exchange(o.base_, nullptr);
		length_ = std::exchange(o.length_, 0);
		data_ = std::exchange(o.data_, nullptr);
		capacity_ = std::exchange(o.capacity_, 0);
	}
	return *this;
}

void SnapshotMemory::release()
{
	if (base_)
		::munmap(base_, length_);
	base_ = nullptr;
	data_ = nullptr;
	length_ = capacity_ = 0;
}

expected<SnapshotMemory> SnapshotMemory::map(size_t size, bool huge_pages)
{
	SnapshotMemory m;
	if (size == 0)
		return m;
	bool huge = huge_pages && size >= huge_page;
	if (size > SIZE_MAX - 2 * huge_page)
		return unexpected("snapshot memory", strprintf("cannot map %zu bytes: too large", size));
	size_t cap = align_up(size, huge ? huge_page : page_size());
	// From 2 MiB on, map a huge page more and start at a huge page boundary,
	// so that all of it can be backed by huge pages.
	size_t len = cap + (huge ? huge_page : 0);
	void *p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return unexpected("snapshot memory", strprintf("cannot map %zu bytes: %s", len, std::strerror(errno)));
	m.base_ = p;
	m.length_ = len;
	m.data_ = static_cast<char *>(p);
	m.capacity_ = cap;
	if (huge) {
		auto at = reinterpret_cast<uintptr_t>(p);
		auto aligned = align_up(at, huge_page);
		m.data_ = reinterpret_cast<char *>(aligned);
		// Give back the slack on both sides; the mapping is then exactly [data_, data_ + cap).
		if (aligned > at)
			::munmap(p, aligned - at);
		size_t tail = at + len - (aligned + cap);
		if (tail > 0)
			::munmap(m.data_ + cap, tail);
		m.base_ = m.data_;
		m.length_ = cap;
		// EINVAL: a kernel without THP. Small pages then, nothing else changes.
		(void)::madvise(m.data_, cap, MADV_HUGEPAGE);
	}
	return m;
}

void SnapshotMemory::prefault(const std::atomic<bool> *stop)
{
	size_t step = page_size();
	for (size_t off = 0; off < capacity_; off += prefault_chunk) {
		if (stop && stop->load(std::memory_order_relaxed))
			return;
		size_t n = std::min(prefault_chunk, capacity_ - off);
#ifdef MADV_POPULATE_WRITE
		if (::madvise(data_ + off, n, MADV_POPULATE_WRITE) == 0)
			continue;
#endif
		// Before Linux 5.14: a write to every page.
		volatile char *p = data_ + off;
		for (size_t i = 0; i < n; i += step)
			p[i] = 0;
	}
}

void parallel_copy(const std::vector<CopyPiece> &pieces, int threads)
{
	if (threads <= 1) {
		for (const auto &c : pieces)
			if (c.size > 0)
				std::memcpy(c.to, c.from, c.size);
		return;
	}
	size_t total = 0;
	for (const auto &c : pieces)
		total += c.size;
	size_t per_thread = (total + static_cast<size_t>(threads) - 1) / static_cast<size_t>(threads);
	size_t chunk = std::max(copy_chunk_min, align_up(per_thread, huge_page));
	std::vector<CopyPiece> chunks;
	for (const auto &c : pieces)
		for (size_t off = 0; off < c.size; off += chunk)
			chunks.push_back({static_cast<char *>(c.to) + off, static_cast<const char *>(c.from) + off,
					  std::min(chunk, c.size - off)});
	threads = static_cast<int>(std::min<size_t>(static_cast<size_t>(threads), chunks.size()));
	std::atomic<size_t> next{0};
	auto work = [&chunks, &next] {
		for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < chunks.size();)
			std::memcpy(chunks[i].to, chunks[i].from, chunks[i].size);
	};
	std::vector<std::thread> helpers;
	for (int t = 1; t < threads; t++) {
		try {
			helpers.emplace_back(work);
		} catch (const std::system_error &) {
			break; // the threads started so far (and this one) do all of it
		}
	}
	work();
	for (auto &h : helpers)
		h.join();
}

int copy_threads_for(const WriterSettings &s, uint64_t bytes)
{
	if (bytes < s.parallel_copy_min)
		return 1;
	if (s.copy_threads > 0)
		return s.copy_threads;
	unsigned hw = std::thread::hardware_concurrency();
	return static_cast<int>(std::clamp(hw, 1u, 4u));
}

uint64_t snapshot_bytes(const std::vector<size_t> &sizes)
{
	uint64_t n = 0;
	for (size_t s : sizes)
		n += align_up(s, blob_align);
	return n;
}

AsyncWriter::~AsyncWriter() { join_worker(); }

status AsyncWriter::ensure_memory(uint64_t bytes, bool prefault)
{
	if (memory_.capacity() >= bytes)
		return ok();
	memory_.release(); // the old snapshot is written: free it before mapping the larger one
	auto m = SnapshotMemory::map(bytes, s_.huge_pages);
	if (!m)
		return unexpected(m.error());
	memory_ = std::move(*m);
	if (prefault)
		memory_.prefault(&stop_reserve_);
	return ok();
}

void AsyncWriter::join_worker()
{
	if (!worker_.joinable())
		return;
	stop_reserve_ = true;
	worker_.join();
	stop_reserve_ = false;
}

status AsyncWriter::reserve(const std::vector<size_t> &sizes)
{
	uint64_t bytes = snapshot_bytes(sizes);
	// The worker in flight (a save being written, or an earlier reserve)
	// is joined by the new one, never by the caller.
	auto before = std::make_shared<std::thread>(std::move(worker_));
	try {
		worker_ = std::thread([this, bytes, before] {
			if (before->joinable())
				before->join();
			if (auto st = ensure_memory(bytes, true); !st)
				log_warning("checkpoint snapshot reserve: %s", st.error().str().c_str());
		});
	} catch (const std::system_error &e) {
		if (before->joinable())
			before->join();
		return unexpected("checkpoint snapshot reserve", std::string("cannot start a thread: ") + e.what());
	}
	return ok();
}

status AsyncWriter::reserve(const std::vector<BufferView> &buffers)
{
	std::vector<size_t> sizes;
	sizes.reserve(buffers.size());
	for (const auto &b : buffers)
		sizes.push_back(b.size);
	return reserve(sizes);
}

expected<SaveReport> AsyncWriter::write_rank_share(int64_t step, uint64_t seq,
						   const std::vector<BufferView> &files) const
{
	auto t0 = std::chrono::steady_clock::now();
	auto save = RankSave::begin(s_.dir, step, {s_.rank, s_.world_size, s_.run}, seq);
	if (!save)
		return unexpected(save.error());
	SaveReport r;
	r.step = step;
	for (const auto &b : files) {
		auto e = save->write_file(b.name, b.data, b.size);
		if (!e)
			return unexpected(e.error());
		r.bytes += b.size;
	}
	if (auto st = save->finish_part(seconds_since(t0)); !st)
		return unexpected(st.error());
	r.path = path_join(s_.dir, checkpoint_name(step));
	if (s_.rank == 0) {
		Manifest m;
		m.restart_count = s_.restart_count;
		m.job_id = s_.job_id;
		m.writer = s_.writer;
		m.write_seconds = seconds_since(t0);
		auto path = save->commit(std::move(m), s_.commit_timeout_s);
		if (!path)
			return unexpected(path.error());
	}
	r.write_s = seconds_since(t0);
	return r;
}

expected<SaveReport> AsyncWriter::write_checkpoint(int64_t step, uint64_t seq,
						   const std::vector<BufferView> &files) const
{
	if (s_.world_size > 1) {
		auto r = write_rank_share(step, seq, files);
		if (r && s_.rank == 0 && s_.keep > 0)
			if (auto p = prune(s_.dir, s_.keep); !p)
				log_warning("checkpoint retention: %s", p.error().str().c_str());
		return r;
	}
	auto t0 = std::chrono::steady_clock::now();
	auto staging = Staging::begin(s_.dir, step);
	if (!staging)
		return unexpected(staging.error());
	SaveReport r;
	r.step = step;
	for (const auto &b : files) {
		auto e = staging->write_file(b.name, b.data, b.size);
		if (!e)
			return unexpected(e.error());
		r.bytes += b.size;
	}
	Manifest m;
	m.world_size = s_.world_size;
	m.restart_count = s_.restart_count;
	m.job_id = s_.job_id;
	m.writer = s_.writer;
	m.write_seconds = seconds_since(t0);
	auto path = staging->commit(std::move(m));
	if (!path)
		return unexpected(path.error());
	r.path = *path;
	r.write_s = seconds_since(t0);
	// The checkpoint is committed: a retention failure is told, not the save's.
	if (s_.keep > 0)
		if (auto p = prune(s_.dir, s_.keep); !p)
			log_warning("checkpoint retention: %s", p.error().str().c_str());
	return r;
}

expected<SaveReport> AsyncWriter::write_snapshot(int64_t step, uint64_t seq) const
{
	std::vector<BufferView> files;
	files.reserve(snapshot_.size());
	for (const auto &b : snapshot_)
		files.push_back({b.name, memory_.data() + b.offset, b.size});
	return write_checkpoint(step, seq, files);
}

status AsyncWriter::save_async(int64_t step, const std::vector<BufferView> &buffers)
{
	auto t0 = std::chrono::steady_clock::now();
	uint64_t seq = ++saves_; // counted on every rank, whether this save gets far or not
	join_worker();           // one snapshot in flight at most
	{
		std::lock_guard<std::mutex> lock(mu_);
		if (!last_)
			log_warning("previous checkpoint failed: %s", last_.error().str().c_str());
	}
	snapshot_.resize(buffers.size());
	std::vector<CopyPiece> pieces;
	pieces.reserve(buffers.size());
	uint64_t bytes = 0;
	for (size_t i = 0; i < buffers.size(); i++) {
		snapshot_[i].name = buffers[i].name;
		snapshot_[i].offset = bytes;
		snapshot_[i].size = buffers[i].size;
		bytes += align_up(buffers[i].size, blob_align);
	}
	// Faulted in by the copy itself (by all of its threads) where new, or
	// where a reserve cut short did not get to.
	if (auto st = ensure_memory(bytes, false); !st)
		return unexpected(st.error().within("checkpoint step " + std::to_string(step)));
	for (size_t i = 0; i < buffers.size(); i++)
		if (buffers[i].size > 0)
			pieces.push_back({memory_.data() + snapshot_[i].offset, buffers[i].data, buffers[i].size});
	parallel_copy(pieces, copy_threads_for(s_, bytes));
	stall_ = seconds_since(t0);
	double stall = stall_;
	try {
		worker_ = std::thread([this, step, seq, stall] {
			auto r = write_snapshot(step, seq);
			if (r)
				r->stall_s = stall;
			std::lock_guard<std::mutex> lock(mu_);
			last_ = std::move(r);
		});
	} catch (const std::system_error &e) {
		return unexpected("checkpoint step " + std::to_string(step),
				  std::string("cannot start the writer thread: ") + e.what());
	}
	return ok();
}

expected<SaveReport> AsyncWriter::save(int64_t step, const std::vector<BufferView> &buffers)
{
	if (worker_.joinable())
		worker_.join();
	auto r = write_checkpoint(step, ++saves_, buffers);
	if (!r)
		return r; // the caller is told; wait() still reports the last good save
	r->stall_s = r->write_s;
	std::lock_guard<std::mutex> lock(mu_);
	last_ = r;
	return r;
}

expected<SaveReport> AsyncWriter::wait()
{
	if (worker_.joinable())
		worker_.join();
	std::lock_guard<std::mutex> lock(mu_);
	return last_;
}

} // namespace loom::ckpt
