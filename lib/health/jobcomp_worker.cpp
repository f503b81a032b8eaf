// jobcomp/health's worker: the thread that takes the queued job records in
// turn (handle_job: jobcomp_handle.cpp), and the backlog and failure
// statistics files it keeps in the state directory.
#include "lib/health/jobcomp_worker.hpp"

#include "lib/util/fs.hpp"
#include "lib/util/log.hpp"

#include <chrono>
#include <ctime>

namespace loom::health {

JobcompWorker::JobcompWorker(JobcompOptions opt, std::unique_ptr<SlurmOps> slurm)
	: opt_(std::move(opt)), slurm_(std::move(slurm)), limiter_(opt_.max_drains, opt_.drain_window)
{
}

JobcompWorker::~JobcompWorker()
{
	if (stop())
		return;
	// Destroyed all the same: the thread uses these members, so wait for it.
	std::unique_lock<std::mutex> lk(mu_);
	idle_cv_.wait(lk, [this] { return exited_; });
}

namespace {
std::string backlog_file(const std::string &state_dir) { return path_join(state_dir, "loom-jobcomp-backlog.json"); }
std::string stats_file(const std::string &state_dir) { return path_join(state_dir, "loom-failure-stats.json"); }
} // namespace

std::string JobcompWorker::backlog_path() const { return backlog_file(opt_.state_dir); }
std::string JobcompWorker::stats_path() const { return stats_file(opt_.state_dir); }

status JobcompWorker::preflight(const JobcompOptions &opt)
{
	if (auto st = make_dirs(opt.state_dir, 0700); !st)
		return unexpected(st.error());
	if (auto b = load_backlog(backlog_file(opt.state_dir)); !b)
		return unexpected(b.error());
	if (auto s = exchange::load_failure_stats(stats_file(opt.state_dir)); !s)
		return unexpected(s.error());
	return ok();
}

status JobcompWorker::start()
{
	// The state directory may not exist yet (a JobCompLoc of its own).
	if (auto st = make_dirs(opt_.state_dir, 0700); !st)
		return unexpected(st.error());
	auto b = load_backlog(backlog_path());
	if (!b)
		return unexpected(b.error());
	auto s = exchange::load_failure_stats(stats_path());
	if (!s)
		return unexpected(s.error());
	{
		std::lock_guard<std::mutex> g(mu_);
		for (auto &r : b->pending)
			queue_.push_back(std::move(r));
		limiter_.restore(b->drains);
		stats_ = std::move(*s);
		stopping_ = false;
		exited_ = false;
	}
	cancel_.store(false);
	slurm_->set_cancel(&cancel_);
	if (!b->pending.empty())
		log_info("resuming %zu jobs from %s", b->pending.size(), backlog_path().c_str());
	thread_ = std::thread([this] { run(); });
	return ok();
}

void JobcompWorker::enqueue(JobRecord r) noexcept
{
	try {
		std::lock_guard<std::mutex> g(mu_);
		if (static_cast<int64_t>(queue_.size()) >= opt_.max_backlog) {
			queue_.pop_front(); // the worker logs the loss when it next saves
			dirty_ = true;
		}
		queue_.push_back(std::move(r));
		dirty_ = true;
		cv_.notify_one();
	} catch (...) {
		// Out of memory in slurmctld's callback: drop the record rather than throw.
	}
}

void JobcompWorker::save_backlog_locked_copy()
{
	if (abandoned_.load())
		return; // left behind by stop(): the next worker owns the files
	Backlog b;
	{
		std::lock_guard<std::mutex> g(mu_);
		b.pending.assign(queue_.begin(), queue_.end());
		b.drains = limiter_.times();
		dirty_ = false;
	}
	if (auto st = write_file_atomic(backlog_path(), backlog_json(b), 0600); !st)
		log_error("backlog: %s", st.error().str().c_str());
}

void JobcompWorker::run()
{
	for (;;) {
		JobRecord rec;
		{
			std::unique_lock<std::mutex> lk(mu_);
			cv_.wait(lk, [this] { return stopping_ || !queue_.empty(); });
			if (stopping_)
				break;
			rec = queue_.front();
			busy_ = true;
		}
		try {
			save_backlog_locked_copy(); // the job in hand is still in it
			int64_t now = static_cast<int64_t>(std::time(nullptr));
			uint64_t cut = slurm_->cancelled_calls();
			handle_job(rec, opt_, *slurm_, limiter_, stats_, now);
			if (slurm_->cancelled_calls() != cut) {
				// A stop cut this job's scontrol calls short: it stays first in
				// the backlog and is handled again at the next start; its
				// statistics are not saved.
				log_info("job %u: interrupted by a stop, kept in the backlog", rec.end.job_id);
				std::lock_guard<std::mutex> g(mu_);
				busy_ = false;
				break;
			}
			if (abandoned_.load())
				break;
			if (auto st = exchange::save_failure_stats(stats_path(), stats_); !st)
				log_error("failure statistics: %s", st.error().str().c_str());
			if (!opt_.stats_publish.empty())
				if (auto st = exchange::save_failure_stats(opt_.stats_publish, stats_); !st)
					log_error("failure statistics (stats_publish): %s", st.error().str().c_str());
		} catch (const std::exception &e) {
			log_error("job %u: %s", rec.end.job_id, e.what());
		} catch (...) {
			log_error("job %u: unknown error", rec.end.job_id);
		}
		{
			std::lock_guard<std::mutex> g(mu_);
			if (!queue_.empty() && queue_.front().end.job_id == rec.end.job_id)
				queue_.pop_front();
			busy_ = false;
			dirty_ = true;
		}
		save_backlog_locked_copy();
		idle_cv_.notify_all();
	}
	save_backlog_locked_copy();
	std::lock_guard<std::mutex> g(mu_);
	exited_ = true;
	idle_cv_.notify_all();
}

bool JobcompWorker::stop(int wait_ms)
{
	std::unique_lock<std::mutex> lk(mu_);
	stopping_ = true;
	cancel_.store(true, std::memory_order_release);
	cv_.notify_all();
	if (!thread_.joinable()) // never started, or left behind by an earlier stop
		return !abandoned_.load() || exited_;
	if (!idle_cv_.wait_for(lk, std::chrono::milliseconds(wait_ms), [this] { return exited_; })) {
		abandoned_.store(true);
		uint32_t job = !queue_.empty() ? queue_.front().end.job_id : 0;
		lk.unlock();
		log_error("worker did not stop within %d ms (job %u: a read of its output blocked?): left behind; "
			  "it writes nothing more, the job stays in the backlog",
			  wait_ms, job);
		thread_.detach();
		return false;
	}
	lk.unlock();
	thread_.join();
	return true;
}

size_t JobcompWorker::pending() const
{
	std::lock_guard<std::mutex> g(mu_);
	return queue_.size() + (busy_ ? 0 : 0);
}

bool JobcompWorker::wait_idle(int timeout_ms) const
{
	std::unique_lock<std::mutex> lk(mu_);
	return idle_cv_.wait_for(lk, std::chrono::milliseconds(timeout_ms),
				 [this] { return queue_.empty() && !busy_; });
}

} // namespace loom::health
