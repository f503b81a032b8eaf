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

// Open 'name' (checked by check_relative_name) inside the checkpoint 'dir',
// one component at a time, never through a symlink.
int open_in_checkpoint(const std::string &dir, const std::string &name, Problem *why, std::string *what)
{
	int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		*why = Problem::io_error;
		*what = std::string("cannot open the checkpoint: ") + std::strerror(errno);
		return -1;
	}
	size_t start = 0;
	while (true) {
		size_t slash = name.find('/', start);
		bool last = slash == std::string::npos;
		std::string comp = name.substr(start, last ? std::string::npos : slash - start);
		int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | (last ? O_NONBLOCK | O_NOCTTY : O_DIRECTORY);
		int next = ::openat(fd, comp.c_str(), flags);
		int e = errno;
		::close(fd);
		if (next < 0) {
			if (e == ENOENT) {
				*why = Problem::file_missing;
				*what = "is missing";
			} else if (e == ELOOP || e == ENOTDIR) {
				*why = Problem::file_refused;
				*what = last ? "is a symlink: refused"
					     : "is reached through a symlink or a non-directory: refused";
			} else {
				*why = Problem::io_error;
				*what = std::string("cannot open: ") + std::strerror(e);
			}
			return -1;
		}
		if (last)
			return next;
		fd = next;
		start = slash + 1;
	}
}

status check_file(const std::string &dir, const FileEntry &f, Verify level, Problem *why)
{
	std::string path = path_join(dir, f.path);
	std::string what;
	int fd = open_in_checkpoint(dir, f.path, why, &what);
	if (fd < 0)
		return unexpected(path, what);
	struct stat st;
	if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		::close(fd);
		*why = Problem::file_refused;
		return unexpected(path, "is not a regular file");
	}
	if (static_cast<uint64_t>(st.st_size) != f.size) {
		::close(fd);
		*why = Problem::size_mismatch;
		return unexpected(path, "size " + std::to_string(st.st_size) + " differs from the manifest's " +
						std::to_string(f.size));
	}
	if (level == Verify::quick) {
		::close(fd);
		return ok();
	}
	auto d = sha256_fd(fd, path);
	::close(fd);
	if (!d) {
		*why = Problem::io_error;
		return unexpected(d.error());
	}
	if (d->size != f.size) { // it changed while it was read
		*why = Problem::size_mismatch;
		return unexpected(path, "size " + std::to_string(d->size) + " read differs from the manifest's " +
						std::to_string(f.size));
	}
	if (d->sha256 != f.sha256) {
		*why = Problem::hash_mismatch;
		return unexpected(path, "checksum differs from the manifest (corrupt)");
	}
	return ok();
}

// After a loom-ckpt/2 manifest parses: every part of its step, every rank there.
status check_parts(const std::string &path, const Manifest &m, Problem *why)
{
	std::string source = path_join(path, manifest_name);
	for (size_t i = 0; i < m.ranks.size(); i++)
		if (m.ranks[i].step != m.step) {
			*why = Problem::step_mismatch;
			return unexpected(source + ": $.ranks[" + std::to_string(i) + "].step",
					  "rank " + std::to_string(m.ranks[i].rank) + "'s part is of step " +
						  std::to_string(m.ranks[i].step) + ", the manifest's is " +
						  std::to_string(m.step) + " (parts of different saves)");
		}
	if (m.version != 2 || m.ranks.size() == static_cast<size_t>(m.world_size))
		return ok();
	std::vector<int64_t> ranks;
	for (const auto &p : m.ranks)
		ranks.push_back(p.rank);
	std::sort(ranks.begin(), ranks.end());
	int64_t absent = 0;
	while (absent < static_cast<int64_t>(ranks.size()) && ranks[absent] == absent)
		absent++;
	*why = Problem::rank_missing;
	return unexpected(source, "rank " + std::to_string(absent) + " of " + std::to_string(m.world_size) +
					  " has no part (torn: that rank did not finish)");
}

bool pid_alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

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

const char *problem_name(Problem p)
{
	switch (p) {
	case Problem::none:
		return "ok";
	case Problem::not_directory:
		return "not-directory";
	case Problem::manifest_missing:
		return "manifest-missing";
	case Problem::manifest_refused:
		return "manifest-refused";
	case Problem::manifest_invalid:
		return "manifest-invalid";
	case Problem::step_mismatch:
		return "step-mismatch";
	case Problem::file_missing:
		return "file-missing";
	case Problem::file_refused:
		return "file-refused";
	case Problem::size_mismatch:
		return "size-mismatch";
	case Problem::hash_mismatch:
		return "hash-mismatch";
	case Problem::io_error:
		return "io-error";
	case Problem::rank_missing:
		return "rank-missing";
	case Problem::world_size_mismatch:
		return "world-size-mismatch";
	}
	return "io-error";
}

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
			e.reason = Problem::not_directory;
		} else {
			ManifestFault fault = ManifestFault::none;
			auto m = manifest_read(e.path, &fault);
			if (!m) {
				e.problem = m.error().str();
				e.reason = fault == ManifestFault::missing   ? Problem::manifest_missing
					   : fault == ManifestFault::refused ? Problem::manifest_refused
									     : Problem::manifest_invalid;
			} else if (m->step != *step) {
				e.problem = "manifest says step " + std::to_string(m->step);
				e.reason = Problem::step_mismatch;
			} else if (auto parts = check_parts(e.path, *m, &e.reason); !parts) {
				e.problem = parts.error().str();
			} else {
				e.manifest = std::move(*m);
			}
		}
		out.push_back(std::move(e));
	}
	std::sort(out.begin(), out.end(), [](const Entry &a, const Entry &b) { return a.step > b.step; });
	return out;
}

status verify_checkpoint(const std::string &path, const Manifest &m, Verify level, Problem *why)
{
	return verify_files(path, m.files, level, why);
}

status verify_files(const std::string &path, const std::vector<FileEntry> &files, Verify level, Problem *why)
{
	Problem scratch;
	Problem &w = why ? *why : scratch;
	w = Problem::none;
	for (const auto &f : files)
		if (auto st = check_file(path, f, level, &w); !st)
			return st;
	return ok();
}

namespace {

expected<std::optional<Latest>> find_latest_for(const std::string &dir, Verify level, const Job *job)
{
	auto list = list_checkpoints(dir);
	if (!list)
		return unexpected(list.error());
	Latest l;
	for (auto &e : *list) {
		if (e.manifest) {
			auto st = verify_checkpoint(e.path, *e.manifest, level, &e.reason);
			if (st && job)
				st = check_job(e.path, *e.manifest, *job, &e.reason);
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

} // namespace

expected<std::optional<Latest>> find_latest(const std::string &dir, Verify level)
{
	return find_latest_for(dir, level, nullptr);
}

expected<std::optional<Latest>> find_latest(const std::string &dir, Verify level, const Job &job)
{
	return find_latest_for(dir, level, &job);
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
	std::string me = staging_host();
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
