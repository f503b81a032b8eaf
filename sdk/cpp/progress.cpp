#include "sdk/cpp/progress.hpp"

#include "lib/util/fs.hpp"

#include <chrono>
#include <sys/stat.h>
#include <unistd.h>

namespace loom::sdk {
namespace {

double wall() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

} // namespace

ProgressReporter::ProgressReporter(const std::string &dir, int rank, int world, std::string node)
{
	std::string d = path_join(dir, exchange::progress_dir_name);
	(void)make_dirs(d, 0755);
	path_ = path_join(d, exchange::progress_file_name(rank));
	r_.rank = rank;
	r_.world = world;
	r_.node = node.empty() ? "unknown" : std::move(node);
	write();
	thread_ = std::thread([this] { beat(); });
}

ProgressReporter::~ProgressReporter()
{
	{
		std::lock_guard<std::mutex> lk(mu_);
		stop_ = true;
	}
	cv_.notify_all();
	thread_.join();
}

void ProgressReporter::step(int64_t step, double step_s)
{
	bool due;
	{
		std::lock_guard<std::mutex> lk(mu_);
		r_.step = step;
		r_.time = wall();
		r_.step_s = step_s > 0 ? step_s : 0;
		due = r_.time - written_ >= every_s;
	}
	if (due)
		write();
}

// A report lost is a late one: the keeper's threshold covers it.
void ProgressReporter::write()
{
	std::string text;
	{
		std::lock_guard<std::mutex> lk(mu_);
		r_.beat = written_ = wall();
		text = exchange::format_progress(r_);
	}
	(void)write_file_atomic(path_, text, 0644);
}

void ProgressReporter::beat()
{
	std::unique_lock<std::mutex> lk(mu_);
	while (!cv_.wait_for(lk, std::chrono::duration<double>(beat_s), [this] { return stop_; })) {
		lk.unlock();
		write();
		lk.lock();
	}
}

} // namespace loom::sdk
