#include "lib/util/fs.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace loom {

namespace {

// Why a file of this type is not read, or nullptr when it is.
const char *refusal(mode_t mode, bool allow_char_device)
{
	if (S_ISREG(mode))
		return nullptr;
	if (S_ISDIR(mode))
		return "is a directory";
	if (S_ISFIFO(mode))
		return "is a FIFO, not a file: refused";
	if (S_ISSOCK(mode))
		return "is a socket, not a file: refused";
	if (S_ISCHR(mode))
		return allow_char_device ? nullptr : "is a character device, not a file: refused";
	if (S_ISBLK(mode))
		return "is a block device, not a file: refused";
	return "is not a regular file: refused";
}

std::string errno_text(const char *what, int e) { return std::string(what) + std::strerror(e); }

// Reads fd within the bounds into data; an empty string or the reason it stopped short.
std::string read_fd(int fd, const struct stat &st, const ReadBounds &b, std::string &data, int &errnum)
{
	using clock = std::chrono::steady_clock;
	const bool device = !S_ISREG(st.st_mode);
	const uint64_t cap = b.max_bytes;
	// A device cannot be read from its end: keep_tail reads it like keep_head.
	const auto over = device && b.over == ReadBounds::Over::keep_tail ? ReadBounds::Over::keep_head : b.over;
	// The tail of a big file on disk: skip what would be thrown away. Files
	// with no blocks (sysfs, procfs) report sizes that are not their length.
	if (over == ReadBounds::Over::keep_tail && st.st_blocks > 0 && static_cast<uint64_t>(st.st_size) > cap)
		(void)::lseek(fd, static_cast<off_t>(static_cast<uint64_t>(st.st_size) - cap), SEEK_SET);
	const auto t0 = clock::now();
	char buf[65536];
	int epipes = 0;
	while (true) {
		if (b.deadline_ms > 0 && clock::now() - t0 > std::chrono::milliseconds(b.deadline_ms))
			return "no end of file within " + std::to_string(b.deadline_ms) + " ms: refused";
		ssize_t n = ::read(fd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return {}; // what there is now, all read
			if (errno == EPIPE && S_ISCHR(st.st_mode) && ++epipes < 65536)
				continue;
			errnum = errno;
			return errno_text("read error: ", errno);
		}
		if (n == 0)
			return {};
		size_t got = static_cast<size_t>(n);
		switch (over) {
		case ReadBounds::Over::error:
			if (data.size() + got > cap)
				return "larger than the " + std::to_string(cap) + "-byte cap: refused";
			data.append(buf, got);
			break;
		case ReadBounds::Over::keep_head:
			data.append(buf, std::min<uint64_t>(got, cap - data.size()));
			if (data.size() >= cap)
				return {};
			break;
		case ReadBounds::Over::keep_tail:
			data.append(buf, got);
			if (data.size() > 2 * cap + sizeof(buf))
				data.erase(0, data.size() - cap);
			break;
		}
	}
}

} // namespace

expected<std::string> read_file_bounded(const std::string &path, const ReadBounds &bounds, int *errnum)
{
	int scratch = 0;
	int &en = errnum ? *errnum : scratch;
	en = 0;
	// Refuse on stat() first, so that a FIFO or a device is never opened.
	struct stat st;
	if (::stat(path.c_str(), &st) != 0) {
		en = errno;
		return unexpected(path, errno_text("cannot open: ", errno));
	}
	if (const char *why = refusal(st.st_mode, bounds.allow_char_device))
		return unexpected(path, why);
	int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		en = errno;
		return unexpected(path, errno_text("cannot open: ", errno));
	}
	// What was opened may not be what was stat()ed (a rename in between).
	if (::fstat(fd, &st) != 0) {
		en = errno;
		::close(fd);
		return unexpected(path, errno_text("cannot stat: ", en));
	}
	if (const char *why = refusal(st.st_mode, bounds.allow_char_device)) {
		::close(fd);
		return unexpected(path, why);
	}
	std::string data;
	std::string why = read_fd(fd, st, bounds, data, en);
	::close(fd);
	if (!why.empty())
		return unexpected(path, why);
	if (bounds.over == ReadBounds::Over::keep_tail && data.size() > bounds.max_bytes)
		data.erase(0, data.size() - bounds.max_bytes);
	return data;
}

expected<std::string> read_file(const std::string &path, uint64_t max_bytes)
{
	ReadBounds b;
	b.max_bytes = max_bytes;
	return read_file_bounded(path, b);
}

status make_dirs(const std::string &dir, unsigned mode)
{
	if (dir.empty())
		return unexpected("make_dirs", "empty path");
	for (size_t pos = 0; pos != std::string::npos;) {
		pos = dir.find('/', pos + 1);
		std::string part = dir.substr(0, pos);
		if (part.empty() || part.back() == '/')
			continue;
		if (::mkdir(part.c_str(), static_cast<mode_t>(mode)) == 0)
			continue;
		int e = errno;
		struct stat st;
		if (e == EEXIST && ::stat(part.c_str(), &st) == 0) {
			if (S_ISDIR(st.st_mode))
				continue;
			return unexpected(part, "exists and is not a directory");
		}
		return unexpected(part, std::string("cannot create: ") + std::strerror(e));
	}
	return ok();
}

status write_file_atomic(const std::string &path, std::string_view text, unsigned mode)
{
	return write_file_atomic(path, text, AtomicWrite{.mode = mode});
}

status write_file_atomic(const std::string &path, std::string_view text, const AtomicWrite &how)
{
	std::string tmp = path + ".tmp." + std::to_string(::getpid());
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (how.exclusive ? O_EXCL : O_TRUNC);
	int fd = ::open(tmp.c_str(), flags, how.mode);
	if (fd < 0)
		return unexpected(tmp, std::string("cannot create: ") + std::strerror(errno));
	const char *p = text.data();
	size_t left = text.size();
	while (left > 0) {
		ssize_t w = ::write(fd, p, left);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			::close(fd);
			::unlink(tmp.c_str());
			return unexpected(tmp, std::string("write failed: ") + std::strerror(e));
		}
		p += w;
		left -= static_cast<size_t>(w);
	}
	if (how.durable && ::fsync(fd) != 0) {
		int e = errno;
		::close(fd);
		::unlink(tmp.c_str());
		return unexpected(tmp, std::string("fsync failed: ") + std::strerror(e));
	}
	if (::close(fd) != 0) {
		int e = errno;
		::unlink(tmp.c_str());
		return unexpected(tmp, std::string("close failed: ") + std::strerror(e));
	}
	if (::rename(tmp.c_str(), path.c_str()) != 0) {
		int e = errno;
		::unlink(tmp.c_str());
		return unexpected(path, std::string("rename failed: ") + std::strerror(e));
	}
	if (!how.durable)
		return ok();
	size_t slash = path.find_last_of('/');
	std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
	int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		(void)::fsync(dfd);
		::close(dfd);
	}
	return ok();
}

std::string path_join(std::string_view a, std::string_view b)
{
	if (a.empty())
		return std::string(b);
	if (b.empty())
		return std::string(a);
	std::string r(a);
	while (r.size() > 1 && r.back() == '/')
		r.pop_back();
	while (!b.empty() && b.front() == '/')
		b.remove_prefix(1);
	r += '/';
	r += b;
	return r;
}

std::vector<std::string> list_dir(const std::string &dir)
{
	std::vector<std::string> out;
	if (DIR *d = ::opendir(dir.c_str())) {
		while (struct dirent *e = ::readdir(d))
			if (e->d_name[0] != '.')
				out.emplace_back(e->d_name);
		::closedir(d);
	}
	std::sort(out.begin(), out.end());
	return out;
}

expected<std::vector<std::string>> list_dir_checked(const std::string &dir)
{
	std::vector<std::string> out;
	DIR *d = ::opendir(dir.c_str());
	if (!d) {
		if (errno == ENOENT || errno == ENOTDIR)
			return out;
		return unexpected(dir, errno_text("cannot list: ", errno));
	}
	while (true) {
		errno = 0;
		struct dirent *e = ::readdir(d);
		if (!e)
			break;
		if (e->d_name[0] != '.')
			out.emplace_back(e->d_name);
	}
	int e = errno;
	::closedir(d);
	if (e != 0)
		return unexpected(dir, errno_text("cannot list: ", e));
	std::sort(out.begin(), out.end());
	return out;
}

std::vector<std::string> split_lines(std::string_view text)
{
	std::vector<std::string> out;
	size_t start = 0;
	while (start < text.size()) {
		size_t nl = text.find('\n', start);
		if (nl == std::string_view::npos)
			nl = text.size();
		std::string_view line = text.substr(start, nl - start);
		if (!line.empty() && line.back() == '\r')
			line.remove_suffix(1);
		out.emplace_back(line);
		start = nl + 1;
	}
	return out;
}

std::string_view trim(std::string_view s)
{
	const char *ws = " \t\r\n\f\v";
	size_t b = s.find_first_not_of(ws);
	if (b == std::string_view::npos)
		return {};
	size_t e = s.find_last_not_of(ws);
	return s.substr(b, e - b + 1);
}

std::string shown(std::string_view s, size_t max)
{
	std::string out;
	for (size_t i = 0; i < s.size() && i < max; i++) {
		unsigned char ch = static_cast<unsigned char>(s[i]);
		if (ch < 0x20 || ch >= 0x7f) {
			char buf[8];
			std::snprintf(buf, sizeof buf, "\\x%02x", ch);
			out += buf;
		} else {
			out += static_cast<char>(ch);
		}
	}
	if (s.size() > max)
		out += "...";
	return out;
}

std::string lower(std::string_view s)
{
	std::string out(s);
	for (char &ch : out)
		ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
	return out;
}

std::string join(const std::vector<std::string> &words, std::string_view sep)
{
	std::string out;
	for (size_t i = 0; i < words.size(); i++) {
		if (i)
			out += sep;
		out += words[i];
	}
	return out;
}

} // namespace loom
