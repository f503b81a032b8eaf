#include "lib/ckpt/commit_ranks.hpp"

#include "lib/ckpt/layout.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/log.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace loom::ckpt {
namespace {

using Clock = std::chrono::steady_clock;

double now_unix() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

std::string host_name()
{
	char host[256] = "";
	if (::gethostname(host, sizeof(host) - 1) != 0)
		return "";
	host[sizeof(host) - 1] = '\0';
	return host;
}

// "2, 5 and 7" (the first 10, then how many more).
std::string rank_list(const std::vector<int64_t> &ranks)
{
	std::string s;
	size_t shown = std::min<size_t>(ranks.size(), 10);
	for (size_t i = 0; i < shown; i++) {
		bool last = i + 1 == shown && shown == ranks.size();
		s += (i == 0 ? "" : last ? " and " : ", ") + std::to_string(ranks[i]);
	}
	if (shown < ranks.size())
		s += " and " + std::to_string(ranks.size() - shown) + " more";
	return s;
}

// The ranks of 'missing' whose part is not there yet, in order.
std::vector<int64_t> still_missing(const std::string &parts, const std::vector<int64_t> &missing)
{
	std::vector<int64_t> out;
	for (int64_t r : missing) {
		struct stat st;
		if (::lstat(path_join(parts, part_file_name(r)).c_str(), &st) != 0)
			out.push_back(r);
	}
	return out;
}

expected<RankPart> read_part_file(const std::string &parts, int64_t rank, int64_t step, int64_t world)
{
	std::string path = path_join(parts, part_file_name(rank));
	auto text = read_file(path, manifest_max_bytes);
	if (!text)
		return unexpected(text.error());
	auto p = part_parse(*text, path, layout_ranks);
	if (!p)
		return unexpected(p.error());
	if (p->part.rank != rank || p->part.step != step || p->world_size != world)
		return unexpected(path,
				  strprintf("is the part of rank %lld of %lld at step %lld, "
					    "expected rank %lld of %lld at step %lld",
					    static_cast<long long>(p->part.rank), static_cast<long long>(p->world_size),
					    static_cast<long long>(p->part.step), static_cast<long long>(rank),
					    static_cast<long long>(world), static_cast<long long>(step)));
	return std::move(p->part);
}

} // namespace

expected<std::vector<RankPart>> wait_for_parts(const std::string &staging, int64_t step, int64_t world_size,
					       double timeout_s)
{
	std::string parts = path_join(staging, parts_dir_name);
	std::vector<int64_t> missing;
	for (int64_t r = 0; r < world_size; r++)
		missing.push_back(r);
	auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
					       std::chrono::duration<double>(std::max(timeout_s, 0.0)));
	auto pause = std::chrono::milliseconds(1);
	while (!(missing = still_missing(parts, missing)).empty()) {
		bool one = missing.size() == 1;
		if (Clock::now() >= deadline)
			return unexpected(staging, strprintf("%s %s of %lld did not finish %s part of step %lld "
							     "within %g s: nothing committed",
							     one ? "rank" : "ranks", rank_list(missing).c_str(),
							     static_cast<long long>(world_size), one ? "its" : "their",
							     static_cast<long long>(step), timeout_s));
		std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - Clock::now()));
		pause = std::min(pause * 2, std::chrono::milliseconds(50));
	}
	std::vector<RankPart> out;
	for (int64_t r = 0; r < world_size; r++) {
		auto p = read_part_file(parts, r, step, world_size);
		if (!p)
			return unexpected(p.error());
		out.push_back(std::move(*p));
	}
	return out;
}

expected<RankSave> RankSave::begin(const std::string &dir, int64_t step, const RankJob &job, uint64_t seq)
{
	if (job.run.empty())
		return unexpected(dir, "a save of several ranks needs a run id (launch with srun, torchrun "
				       "under srun or MPI, or set LOOM_CKPT_RUN_ID)");
	if (job.world_size < 1 || job.rank < 0 || job.rank >= job.world_size)
		return unexpected(dir, "rank " + std::to_string(job.rank) + " is not a rank of a world of " +
					       std::to_string(job.world_size));
	auto s = Staging::join(dir, step, shared_staging_name(step, job.run, seq));
	if (!s)
		return unexpected(s.error());
	return RankSave(std::move(*s), job, step);
}

expected<FileEntry> RankSave::write_file(const std::string &name, const void *data, size_t size)
{
	if (finished_)
		return unexpected(path(), "rank " + std::to_string(job_.rank) + "'s part is finished already");
	if (auto st = check_relative_name(name); !st)
		return unexpected(st.error());
	return staging_.write_file(rank_dir_name(job_.rank) + "/" + name, data, size);
}

namespace {

// Write 'text' to path.tmp.<pid> and rename it to 'path', without fsync.
status publish_part(const std::string &path, const std::string &text)
{
	std::string tmp = path + ".tmp." + std::to_string(::getpid());
	int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return unexpected(tmp, std::string("cannot create: ") + std::strerror(errno));
	size_t off = 0;
	while (off < text.size()) {
		ssize_t n = ::write(fd, text.data() + off, text.size() - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = errno;
			::close(fd);
			::unlink(tmp.c_str());
			return unexpected(tmp, std::string("write failed: ") + std::strerror(e));
		}
		off += static_cast<size_t>(n);
	}
	if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
		int e = errno;
		::unlink(tmp.c_str());
		return unexpected(path, std::string("cannot publish: ") + std::strerror(e));
	}
	return ok();
}

} // namespace

status RankSave::finish_part(double write_seconds)
{
	RankPart p;
	p.rank = job_.rank;
	p.step = step_;
	p.host = host_name();
	p.write_seconds = std::clamp(write_seconds, 0.0, 9999999.0);
	p.files = staging_.files();
	std::string parts = path_join(path(), parts_dir_name);
	if (::mkdir(parts.c_str(), 0700) != 0 && errno != EEXIST)
		return unexpected(parts, std::string("cannot create directory: ") + std::strerror(errno));
	// Atomic (a .tmp beside it, renamed) but not fsynced: rank 0 removes it
	// before the commit, whose own fsyncs make the checkpoint durable, and
	// the rank's files were fsynced before. An fsync here would wait, on a
	// journaling file system, for the other ranks' data still being written.
	std::string file = path_join(parts, part_file_name(job_.rank));
	if (auto st = publish_part(file, part_to_json(p, job_.world_size)); !st)
		return st;
	finished_ = true;
	return ok();
}

expected<std::string> RankSave::commit(Manifest m, double timeout_s)
{
	if (job_.rank != 0)
		return unexpected(path(), "only rank 0 commits a checkpoint of several ranks");
	if (!finished_)
		return unexpected(path(), "rank 0 commits after its own part is finished");
	auto parts = wait_for_parts(path(), step_, job_.world_size, timeout_s);
	if (!parts)
		return unexpected(parts.error());
	m.version = 2;
	m.layout = layout_ranks;
	m.step = step_;
	m.world_size = job_.world_size;
	m.ranks = std::move(*parts);
	m.files.clear();
	for (const auto &p : m.ranks)
		m.files.insert(m.files.end(), p.files.begin(), p.files.end());
	m.created = now_unix();
	if (auto st = write_file_atomic(path_join(path(), manifest_name), manifest_to_json(m), 0600); !st)
		return unexpected(st.error());
	if (auto st = remove_tree(path_join(path(), parts_dir_name)); !st)
		return unexpected(st.error());
	return staging_.publish();
}

} // namespace loom::ckpt
