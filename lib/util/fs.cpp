#include "lib/util/fs.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace loom {

expected<std::string> read_file(const std::string &path, uint64_t max_bytes)
{
	int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return unexpected(path, std::string("cannot open: ") + std::strerror(errno));
	struct stat st;
	if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		::close(fd);
		return unexpected(path, "is a directory");
	}
	std::string data;
	char buf[65536];
	while (true) {
		ssize_t n = ::read(fd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			::close(fd);
			return unexpected(path, std::string("read error: ") + std::strerror(e));
		}
		if (n == 0)
			break;
		data.append(buf, static_cast<size_t>(n));
		if (data.size() > max_bytes) {
			::close(fd);
			return unexpected(path, "larger than " + std::to_string(max_bytes) + " bytes");
		}
	}
	::close(fd);
	return data;
}

status write_file_atomic(const std::string &path, std::string_view text, unsigned mode)
{
	std::string tmp = path + ".tmp." + std::to_string(::getpid());
	int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
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
	if (::fsync(fd) != 0) {
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
