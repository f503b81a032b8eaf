#include "lib/ckpt/async_writer.hpp"

#include "lib/ckpt/catalog.hpp"
#include "lib/ckpt/commit.hpp"
#include "lib/util/log.hpp"

#include <chrono>
#include <cstring>

namespace loom::ckpt {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t)
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

} // namespace

AsyncWriter::~AsyncWriter()
{
	if (worker_.joinable())
		worker_.join();
}

expected<SaveReport> AsyncWriter::write_snapshot(int64_t step, const std::vector<Blob> &blobs) const
{
	auto t0 = std::chrono::steady_clock::now();
	auto staging = Staging::begin(s_.dir, step);
	if (!staging)
		return unexpected(staging.error());
	SaveReport r;
	r.step = step;
	for (const auto &b : blobs) {
		auto e = staging->write_file(b.name, b.data.get(), b.size);
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
	if (s_.keep > 0)
		if (auto p = prune(s_.dir, s_.keep); !p)
			log_warning("checkpoint retention: %s", p.error().str().c_str());
	return r;
}

status AsyncWriter::save_async(int64_t step, const std::vector<BufferView> &buffers)
{
	auto t0 = std::chrono::steady_clock::now();
	if (worker_.joinable())
		worker_.join(); // one snapshot in flight at most
	{
		std::lock_guard<std::mutex> lock(mu_);
		if (!last_)
			log_warning("previous checkpoint failed: %s", last_.error().str().c_str());
	}
	snapshot_.resize(buffers.size());
	for (size_t i = 0; i < buffers.size(); i++) {
		Blob &b = snapshot_[i];
		b.name = buffers[i].name;
		if (b.capacity < buffers[i].size) {
			b.data.reset(new char[buffers[i].size]);
			b.capacity = buffers[i].size;
		}
		b.size = buffers[i].size;
		if (b.size > 0)
			std::memcpy(b.data.get(), buffers[i].data, b.size);
	}
	stall_ = seconds_since(t0);
	double stall = stall_;
	worker_ = std::thread([this, step, stall] {
		auto r = write_snapshot(step, snapshot_);
		if (r)
			r->stall_s = stall;
		std::lock_guard<std::mutex> lock(mu_);
		last_ = std::move(r);
	});
	return ok();
}

expected<SaveReport> AsyncWriter::save(int64_t step, const std::vector<BufferView> &buffers)
{
	if (worker_.joinable())
		worker_.join();
	auto t0 = std::chrono::steady_clock::now();
	auto staging = Staging::begin(s_.dir, step);
	if (!staging)
		return unexpected(staging.error());
	SaveReport r;
	r.step = step;
	for (const auto &b : buffers) {
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
	r.write_s = r.stall_s = seconds_since(t0);
	if (s_.keep > 0)
		(void)prune(s_.dir, s_.keep);
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
