#include "lib/ckpt/catalog.hpp"

#include "lib/ckpt/commit.hpp"
#include "lib/ckpt/layout.hpp"
#include "lib/ckpt/sha256.hpp"
#include "lib/util/fs.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace loom::ckpt {
namespace {

expected<std::vector<std::string>> dir_names(const std::string &dir)
{
	DIR *d = ::opendir(dir.c_str());
	if (!d)
		return unexpected(dir, std::string("cannot open directory: ") + std::strerror(errno));
	std::vector<std::string> names;
	while (struct dirent *e = ::readdir(d))
		names.emplace_back(e->d_name);
	::closedir(d);
	return names;
}

status check_file(const std::string &path, const FileEntry &f, Verify level)
{
	int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return unexpected(path, errno == ELOOP ? std::string("is a symlink")
						       : std::string("cannot open: ") + std::strerror(errno));
	struct stat st;
	if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		::close(fd);
		return unexpected(path, "is not a regular file");
	}
	if (static_cast<uint64_t>(st.st_size) != f.size) {
		::close(fd);
		return unexpected(path, "size " + std::to_string(st.st_size) + " differs from the manifest's " +
						std::to_string(f.size));
	}
	if (level == Verify::quick) {
		::close(fd);
		return ok();
	}
	Sha256 h;
	std::vector<char> buf(4u << 20);
	while (true) {
		ssize_t n = ::read(fd, buf.data(), buf.size());
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			::close(fd);
			return unexpected(path, std::string("read error: ") + std::strerror(e));
		}
		if (n == 0)
			break;
		h.update(buf.data(), static_cast<size_t>(n));
	}
	::close(fd);
	if (h.hex() != f.sha256)
		return unexpected(path, "checksum differs from the manifest (corrupt)");
	return ok();
}

bool pid_alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

std::string host_name()
{
	char host[256] = "";
	if (::gethostname(host, sizeof(host) - 1) != 0)
		return {};
	host[sizeof(host) - 1] = '\0';
	for (char *c = host; *c; c++)
		if (*c == '.' || *c == '/')
			*c = '_';
	return host;
}

// Rename into .trash first so that the removal is atomic to readers.
status remove_checkpoint(const std::string &dir, const std::string &name)
{
	std::string trash = path_join(dir, trash_dir_name);
	if (::mkdir(trash.c_str(), 0700) != 0 && errno != EEXIST)
		return unexpected(trash, std::string("cannot create: ") + std::strerror(errno));
	std::string to = path_join(trash, name + "." + std::to_string(::getpid()));
	std::string from = path_join(dir, name);
	if (::rename(from.c_str(), to.c_str()) != 0)
		return unexpected(from, std::string("cannot move to trash: ") + std::strerror(errno));
	return remove_tree(to);
}

} // namespace

expected<std::vector<Entry>> list_checkpoints(const std::string &dir)
{
	auto names = dir_names(dir);
	if (!names)
		return unexpected(names.error());
	std::vector<Entry> out;
	for (const auto &n : *names) {
		auto step = parse_checkpoint_name(n);
		if (!step)
			continue;
		Entry e;
		e.name = n;
		e.path = path_join(dir, n);
		e.step = *step;
		struct stat st;
		if (::lstat(e.path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
			e.problem = "not a directory (symlinks are not followed)";
		} else {
			auto m = manifest_read(e.path);
			if (!m)
				e.problem = m.error().str();
			else if (m->step != *step)
				e.problem = "manifest says step " + std::to_string(m->step);
			else
				e.manifest = std::move(*m);
		}
		out.push_back(std::move(e));
	}
	std::sort(out.begin(), out.end(), [](const Entry &a, const Entry &b) { return a.step > b.step; });
	return out;
}

status verify_checkpoint(const std::string &path, const Manifest &m, Verify level)
{
	for (const auto &f : m.files)
		if (auto st = check_file(path_join(path, f.path), f, level); !st)
			return st;
	return ok();
}

expected<std::optional<Latest>> find_latest(const std::string &dir, Verify level)
{
	auto list = list_checkpoints(dir);
	if (!list)
		return unexpected(list.error());
	Latest l;
	for (auto &e : *list) {
		if (e.manifest) {
			auto st = verify_checkpoint(e.path, *e.manifest, level);
			if (st) {
				l.entry = std::move(e);
				return std::optional<Latest>(std::move(l));
			}
			e.problem = st.error().str();
		}
		l.skipped.push_back(std::move(e));
	}
	return std::optional<Latest>();
}

expected<PruneResult> prune(const std::string &dir, int keep, double stale_seconds, bool dry_run)
{
	if (keep < 1)
		return unexpected(dir, "keep must be at least 1");
	auto list = list_checkpoints(dir);
	if (!list)
		return unexpected(list.error());
	PruneResult r;
	int64_t oldest_kept = -1;
	std::vector<const Entry *> broken;
	for (const auto &e : *list) {
		bool good = e.manifest && verify_checkpoint(e.path, *e.manifest, Verify::quick);
		if (!good) {
			broken.push_back(&e);
		} else if (static_cast<int>(r.kept.size()) < keep) {
			r.kept.push_back(e.name);
			oldest_kept = e.step;
		} else {
			r.removed.push_back(e.name);
		}
	}
	for (const Entry *e : broken)
		if (oldest_kept >= 0 && e->step < oldest_kept)
			r.removed.push_back(e->name);
	// Staging and trash debris of writers that are gone.
	std::string me = host_name();
	for (const char *sub : {staging_dir_name, trash_dir_name}) {
		std::string sdir = path_join(dir, sub);
		auto names = dir_names(sdir);
		if (!names)
			continue;
		for (const auto &n : *names) {
			if (n == "." || n == "..")
				continue;
			std::string p = path_join(sdir, n);
			struct stat st;
			if (::lstat(p.c_str(), &st) != 0)
				continue;
			bool gone;
			auto owner = parse_staging_name(n);
			if (std::string(sub) == staging_dir_name && owner && owner->host == me)
				gone = !pid_alive(owner->pid);
			else
				gone = std::difftime(std::time(nullptr), st.st_mtime) > stale_seconds;
			if (gone)
				r.staging_removed.push_back(p);
		}
	}
	if (dry_run)
		return r;
	for (const auto &n : r.removed)
		if (auto st = remove_checkpoint(dir, n); !st)
			return unexpected(st.error());
	for (const auto &p : r.staging_removed)
		(void)remove_tree(p);
	return r;
}

} // namespace loom::ckpt
