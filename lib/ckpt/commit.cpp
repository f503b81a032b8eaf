#include "lib/ckpt/commit.hpp"

#include "lib/ckpt/layout.hpp"
#include "lib/ckpt/sha256.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/log.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace loom::ckpt {
namespace {

Error sys_error(const std::string &where, const char *what)
{
	return Error(where, std::string(what) + ": " + std::strerror(errno));
}

double now_unix() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

status make_dir(const std::string &path, mode_t mode)
{
	if (::mkdir(path.c_str(), mode) == 0 || errno == EEXIST) {
		struct stat st;
		if (::lstat(path.c_str(), &st) != 0)
			return unexpected(sys_error(path, "cannot stat"));
		if (!S_ISDIR(st.st_mode))
			return unexpected(path, "exists and is not a directory");
		return ok();
	}
	return unexpected(sys_error(path, "cannot create directory"));
}

// Create the parent directories of 'name' inside 'base'.
status make_parents(const std::string &base, const std::string &name)
{
	size_t pos = 0;
	while ((pos = name.find('/', pos)) != std::string::npos) {
		if (auto st = make_dir(path_join(base, name.substr(0, pos)), 0700); !st)
			return st;
		pos++;
	}
	return ok();
}

status write_all(int fd, const char *p, size_t n, const std::string &path)
{
	constexpr size_t chunk = 8u << 20;
	while (n > 0) {
		ssize_t w = ::write(fd, p, std::min(n, chunk));
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return unexpected(sys_error(path, "write failed"));
		}
		p += w;
		n -= static_cast<size_t>(w);
	}
	return ok();
}

} // namespace

status fsync_dir(const std::string &path)
{
	int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return unexpected(sys_error(path, "cannot open directory"));
	int rc = ::fsync(fd);
	int e = errno;
	::close(fd);
	if (rc != 0 && e != EINVAL) {
		errno = e;
		return unexpected(sys_error(path, "fsync failed"));
	}
	return ok();
}

status remove_tree(const std::string &path)
{
	struct stat st;
	if (::lstat(path.c_str(), &st) != 0)
		return errno == ENOENT ? ok() : status(unexpected(sys_error(path, "cannot stat")));
	if (S_ISDIR(st.st_mode)) {
		DIR *d = ::opendir(path.c_str());
		if (!d)
			return unexpected(sys_error(path, "cannot open directory"));
		std::vector<std::string> names;
		while (struct dirent *e = ::readdir(d))
			if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
				names.emplace_back(e->d_name);
		::closedir(d);
		for (const auto &n : names)
			if (auto r = remove_tree(path_join(path, n)); !r)
				return r;
		if (::rmdir(path.c_str()) != 0 && errno != ENOENT)
			return unexpected(sys_error(path, "cannot remove directory"));
		return ok();
	}
	if (::unlink(path.c_str()) != 0 && errno != ENOENT)
		return unexpected(sys_error(path, "cannot remove"));
	return ok();
}

status write_latest(const std::string &dir, const std::string &name)
{
	return write_file_atomic(path_join(dir, latest_name), name + "\n", 0644);
}

expected<std::string> read_latest(const std::string &dir)
{
	std::string path = path_join(dir, latest_name);
	struct stat st;
	if (::lstat(path.c_str(), &st) != 0)
		return errno == ENOENT ? expected<std::string>(std::string())
				       : expected<std::string>(unexpected(sys_error(path, "cannot stat")));
	if (!S_ISREG(st.st_mode))
		return unexpected(path, "is not a regular file");
	auto text = read_file(path, 4096);
	if (!text)
		return unexpected(text.error());
	std::string name(trim(*text));
	if (!parse_checkpoint_name(name))
		return unexpected(path, "does not name a checkpoint");
	return name;
}

expected<Staging> Staging::begin(const std::string &dir, int64_t step)
{
	if (step < 0 || step > max_step)
		return unexpected(dir, "step " + std::to_string(step) + " is out of range");
	// The checkpoint directory too, where it is absent (as the Python SDK does).
	if (auto st = make_dirs(dir, 0700); !st)
		return unexpected(st.error());
	std::string staging = path_join(dir, staging_dir_name);
	if (auto st = make_dir(staging, 0700); !st)
		return unexpected(st.error());
	std::string path = path_join(staging, staging_name(step));
	if (::mkdir(path.c_str(), 0700) != 0)
		return unexpected(sys_error(path, "cannot create staging directory"));
	return Staging(dir, path, step);
}

expected<Staging> Staging::join(const std::string &dir, int64_t step, const std::string &name)
{
	if (step < 0 || step > max_step)
		return unexpected(dir, "step " + std::to_string(step) + " is out of range");
	// The checkpoint directory too, where it is absent (as the Python SDK does).
	if (auto st = make_dirs(dir, 0700); !st)
		return unexpected(st.error());
	std::string staging = path_join(dir, staging_dir_name);
	if (auto st = make_dir(staging, 0700); !st)
		return unexpected(st.error());
	std::string path = path_join(staging, name);
	if (auto st = make_dir(path, 0700); !st)
		return unexpected(st.error());
	return Staging(dir, path, step, true);
}

Staging::Staging(Staging &&o) noexcept
	: dir_(std::move(o.dir_)), path_(std::move(o.path_)), step_(o.step_), files_(std::move(o.files_)),
	  shared_(o.shared_), done_(o.done_)
{
	o.done_ = true;
}

Staging::~Staging() { abort(); }

void Staging::abort()
{
	if (done_)
		return;
	done_ = true;
	if (!shared_)
		(void)remove_tree(path_);
}

expected<FileEntry> Staging::write_file(const std::string &name, const void *data, size_t size)
{
	if (done_)
		return unexpected(path_, "staging already committed or aborted");
	if (auto st = check_relative_name(name); !st)
		return unexpected(st.error());
	if (auto st = make_parents(path_, name); !st)
		return unexpected(st.error());
	std::string path = path_join(path_, name);
	int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return unexpected(sys_error(path, "cannot create"));
	FileEntry e{name, size, {}};
	// Hash on a second thread: the disk and the hash run side by side.
	constexpr size_t parallel_from = 4u << 20;
	std::thread hasher;
	if (size >= parallel_from)
		hasher = std::thread([&] { e.sha256 = sha256_hex(data, size); });
	else
		e.sha256 = sha256_hex(data, size);
	status st = write_all(fd, static_cast<const char *>(data), size, path);
	if (st && ::fsync(fd) != 0)
		st = unexpected(sys_error(path, "fsync failed"));
	if (::close(fd) != 0 && st)
		st = unexpected(sys_error(path, "close failed"));
	if (hasher.joinable())
		hasher.join();
	if (!st)
		return unexpected(st.error());
	files_.push_back(e);
	return e;
}

expected<FileEntry> Staging::add_existing(const std::string &name)
{
	if (auto st = check_relative_name(name); !st)
		return unexpected(st.error());
	std::string path = path_join(path_, name);
	int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return unexpected(sys_error(path, "cannot open"));
	auto d = sha256_fd(fd, path);
	if (!d) {
		::close(fd);
		return unexpected(d.error());
	}
	if (::fsync(fd) != 0 && errno != EINVAL && errno != EBADF) {
		Error err = sys_error(path, "fsync failed");
		::close(fd);
		return unexpected(err);
	}
	::close(fd);
	FileEntry e{name, d->size, d->sha256};
	files_.push_back(e);
	return e;
}

expected<std::string> Staging::commit(Manifest m)
{
	if (done_)
		return unexpected(path_, "staging already committed or aborted");
	m.step = step_;
	if (m.files.empty())
		m.files = files_;
	m.created = now_unix();
	if (auto st = write_file_atomic(path_join(path_, manifest_name), manifest_to_json(m), 0600); !st)
		return unexpected(st.error());
	return publish();
}

expected<std::string> Staging::publish()
{
	if (done_)
		return unexpected(path_, "staging already committed or aborted");
	if (auto st = fsync_dir(path_); !st)
		return unexpected(st.error());
	std::string name = checkpoint_name(step_);
	std::string target = path_join(dir_, name);
	if (::rename(path_.c_str(), target.c_str()) != 0) {
		if (errno != ENOTEMPTY && errno != EEXIST)
			return unexpected(sys_error(target, "cannot commit (rename)"));
		// The step exists already: swap in one step, then drop the old one.
		if (::renameat2(AT_FDCWD, path_.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) != 0)
			return unexpected(sys_error(target, "cannot commit (exchange)"));
		(void)remove_tree(path_);
	}
	done_ = true;
	if (auto st = fsync_dir(dir_); !st)
		return unexpected(st.error());
	// The pointer names the checkpoint just committed: the newest complete one.
	if (auto st = write_latest(dir_, name); !st)
		return unexpected(st.error());
	return target;
}

} // namespace loom::ckpt
