#include "plugins/spank_ckpt/standby_keeper.hpp"

#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/json.hpp"
#include "lib/util/log.hpp"
#include "lib/util/subprocess.hpp"
#include "plugins/spank_ckpt/slurm_api.hpp"
#include "plugins/spank_ckpt/standby_calls.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace loom::spank_ckpt {

using namespace standby;

void StandbyKeeper::start(KeeperConfig c)
{
	stop();
	c_ = std::move(c);
	judge_ = ckpt::ProgressJudge(c_.hang);
	gen_start_ = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
	stop_ = false;
	thread_ = std::thread([this] { run(); });
}

void StandbyKeeper::stop()
{
	if (!thread_.joinable())
		return;
	{
		std::lock_guard<std::mutex> lk(mu_);
		stop_ = true;
	}
	cv_.notify_all();
	thread_.join();
}

bool StandbyKeeper::open_dir()
{
	auto slash = c_.dir.rfind('/');
	if (auto st = make_dirs(c_.dir.substr(0, slash), 0755); !st) {
		log_error("job %u: standby directory: %s", c_.job_id, st.error().str().c_str());
		return false;
	}
	if (::mkdir(c_.dir.c_str(), 0700) != 0 && errno != EEXIST) {
		log_error("job %u: cannot create %s: %s", c_.job_id, c_.dir.c_str(), std::strerror(errno));
		return false;
	}
	dirfd_ = ::open(c_.dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (dirfd_ < 0 || ::fstat(dirfd_, &st) != 0 || (st.st_uid != 0 && st.st_uid != c_.uid) ||
	    ::fchown(dirfd_, c_.uid, c_.gid) != 0 || ::fchmod(dirfd_, 0700) != 0) {
		log_error("job %u: standby directory %s unusable: %s", c_.job_id, c_.dir.c_str(), std::strerror(errno));
		return false;
	}
	return true;
}

std::vector<int64_t> StandbyKeeper::ended_unanswered() { return unanswered("ended."); }

// The directory's entries (its descriptor's offset is shared: rewound each time).
std::set<std::string> StandbyKeeper::names()
{
	std::set<std::string> out;
	int fd = ::dup(dirfd_);
	DIR *d = fd >= 0 ? ::fdopendir(fd) : nullptr;
	if (!d) {
		if (fd >= 0)
			::close(fd);
		return out;
	}
	::rewinddir(d);
	while (struct dirent *e = ::readdir(d))
		if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
			out.insert(e->d_name);
	::closedir(d);
	return out;
}

// Empty the directory: an earlier run of the job (requeued) left its notices.
void StandbyKeeper::clear()
{
	for (const auto &n : names())
		::unlinkat(dirfd_, n.c_str(), 0);
}

// Steps with a 'kind' notice (started., ended.) and no verdict yet.
std::vector<int64_t> StandbyKeeper::unanswered(const std::string &kind)
{
	std::vector<int64_t> steps;
	auto all = names();
	for (const auto &n : all)
		if (n.rfind(kind, 0) == 0)
			if (auto id = n.substr(kind.size()); !all.count("verdict." + id))
				if (auto s = parse_int(id, 0, INT64_MAX); s)
					steps.push_back(*s);
	return steps;
}

// The answer to one step, written whole (a new file renamed over the name).
void StandbyKeeper::answer(int64_t step, bool relaunch, const std::string &why)
{
	ckpt::StepVerdict v{step, relaunch, generation_, c_.layout, "", why};
	if (!c_.cpus_per_node.empty())
		v.cpus_per_node = ckpt::compress_counts(c_.cpus_per_node);
	std::string text = ckpt::format_verdict(v) + "\n";
	std::string tmp = ".verdict." + std::to_string(step), name = "verdict." + std::to_string(step);
	::unlinkat(dirfd_, tmp.c_str(), 0);
	int fd = ::openat(dirfd_, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
	if (fd >= 0)
		ok = ::close(fd) == 0 && ok;
	if (!ok || ::renameat(dirfd_, tmp.c_str(), dirfd_, name.c_str()) != 0)
		log_error("job %u: cannot answer step %lld in %s: %s", c_.job_id, static_cast<long long>(step),
			  c_.dir.c_str(), std::strerror(errno));
}

void StandbyKeeper::run()
{
	if (!open_dir())
		return;
	clear();
	// The output so far is the job's (an earlier run's, appended to), not a step's.
	if (auto job = call({c_.scontrol, "-o", "show", "job", std::to_string(c_.job_id)}); job)
		log_from_ = file_size(field(*job, "StdOut"));
	auto last = std::chrono::steady_clock::now();
	for (;;) {
		{
			std::unique_lock<std::mutex> lk(mu_);
			cv_.wait_for(lk, std::chrono::duration<double>(tick_s), [this] { return stop_; });
			if (stop_)
				break;
		}
		auto ended = ended_unanswered();
		// Steps that ran when a node was replaced start again when they end.
		for (auto it = ended.begin(); it != ended.end();)
			if (relaunch_.count(*it)) {
				answer(*it, true, replaced_);
				relaunch_.erase(*it);
				it = ended.erase(it);
			} else {
				++it;
			}
		auto now = std::chrono::steady_clock::now();
		if (ended.empty() && now - last < std::chrono::seconds(c_.poll_s))
			continue;
		last = now;
		if (!ended.empty())
			settle_output();
		Evidence e = gather();
		if (e.culprit.empty())
			e = watch_progress();
		bool relaunched = !e.culprit.empty() && recover(e, ended);
		if (!relaunched)
			for (int64_t s : ended) {
				std::string why = !e.culprit.empty() ? "not recovered in the allocation"
						  : e.cls.empty()    ? "no fault of an active node found"
								  : "no fault of an active node found (" + e.cls + ")";
				log_info("job %u: step %lld ended: %s", c_.job_id, static_cast<long long>(s),
					 why.c_str());
				answer(s, false, why);
			}
	}
	clear();
	::close(dirfd_);
	::rmdir(c_.dir.c_str());
}

// srun's I/O thread may still be writing the step's last lines while its
// exit handler reports the end: judge once the output stopped growing.
void StandbyKeeper::settle_output()
{
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
	uint64_t size = file_size(std_out_);
	while (std::chrono::steady_clock::now() < deadline) {
		std::this_thread::sleep_for(std::chrono::milliseconds(300));
		uint64_t now = file_size(std_out_);
		if (now == size)
			return;
		size = now;
	}
}

} // namespace loom::spank_ckpt
