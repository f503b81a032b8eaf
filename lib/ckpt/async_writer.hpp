// loom ckpt: asynchronous checkpoint saving (the application side).
//
// save_async() copies the application's buffers into memory it owns (reusing
// the previous snapshot's memory, so steady-state saves do not fault pages
// in) and returns; training goes on while a background thread writes the
// files, commits the checkpoint and applies retention. A new save first
// waits for the one before it: at most one snapshot is in flight.
#pragma once

#include "lib/ckpt/manifest.hpp"
#include "lib/util/expected.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
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
	int keep = 3;            // retention after each commit; 0 keeps all
	int64_t world_size = 1;
	int64_t restart_count = 0;
	std::string job_id;
	std::string writer = "loom-sdk-cpp";
};

struct SaveReport {
	int64_t step = -1;
	std::string path;         // committed checkpoint
	double stall_s = 0;       // time save_async() held the caller
	double write_s = 0;       // background write and commit
	uint64_t bytes = 0;
};

class AsyncWriter {
public:
	explicit AsyncWriter(WriterSettings s) : s_(std::move(s)) {}
	~AsyncWriter();
	AsyncWriter(const AsyncWriter &) = delete;
	AsyncWriter &operator=(const AsyncWriter &) = delete;

	status save_async(int64_t step, const std::vector<BufferView> &buffers);
	// Write and commit on the calling thread.
	expected<SaveReport> save(int64_t step, const std::vector<BufferView> &buffers);
	// Wait for the save in flight; its report (or error). Without one in
	// flight, the last report again.
	expected<SaveReport> wait();
	bool busy() const { return worker_.joinable(); }

private:
	struct Blob {
		std::string name;
		std::unique_ptr<char[]> data;
		size_t size = 0, capacity = 0;
	};
	expected<SaveReport> write_snapshot(int64_t step, const std::vector<Blob> &blobs) const;

	WriterSettings s_;
	std::vector<Blob> snapshot_;
	std::thread worker_;
	std::mutex mu_;
	expected<SaveReport> last_{SaveReport{}};
	double stall_ = 0;
};

} // namespace loom::ckpt
