// A sysfs tree made from fuzz_health_sysfs's input: each path's kind (a
// file, a FIFO, a directory, a link to EIO or to a device, an oversized file)
// and content, kept beside the tree made on disk, in one directory per
// process, so that the oracle knows what every reader finds there.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <ftw.h>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace loom::fuzz {

enum class Kind { file, fifo, dir, eio, dev, big };

struct Tree {
	std::string root;
	std::map<std::string, Kind> kinds;                     // full path -> what is there
	std::map<std::string, std::string> value;              // full path -> content of a file
	std::map<std::string, std::set<std::string>> children; // directory -> names
};

inline int remove_one(const char *p, const struct stat *, int, struct FTW *) { return ::remove(p); }

inline void remove_tree(const std::string &dir) { ::nftw(dir.c_str(), remove_one, 16, FTW_DEPTH | FTW_PHYS); }

// One directory per process, removed at exit; in memory (/dev/shm) where
// there is one: a tree is made and removed for every input.
inline const std::string &base_dir()
{
	static const std::string dir = [] {
		std::string tmpl = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm/loom-fuzz-sysfs.XXXXXX"
								   : "/tmp/loom-fuzz-sysfs.XXXXXX";
		const char *d = ::mkdtemp(tmpl.data());
		if (!d)
			std::abort();
		return std::string(d);
	}();
	static const bool cleanup = std::atexit([] { remove_tree(dir); }) == 0;
	(void)cleanup;
	return dir;
}

inline std::string unescape(std::string_view v)
{
	std::string out;
	for (size_t i = 0; i < v.size(); i++) {
		if (v[i] != '\\' || i + 1 == v.size()) {
			out += v[i];
			continue;
		}
		char c = v[++i];
		if (c == 'n')
			out += '\n';
		else if (c == 't')
			out += '\t';
		else if (c == 'x' && i + 2 < v.size() && std::isxdigit(static_cast<unsigned char>(v[i + 1])) &&
			 std::isxdigit(static_cast<unsigned char>(v[i + 2]))) {
			out += static_cast<char>(std::strtol(std::string(v.substr(i + 1, 2)).c_str(), nullptr, 16));
			i += 2;
		} else
			out += c;
	}
	return out;
}

// "hwmon/hwmon0/temp1_input" -> "sys/class/hwmon/hwmon0/temp1_input"; "" when not allowed.
inline std::string sysfs_rel(std::string_view p)
{
	static const std::pair<const char *, const char *> areas[] = {
		{"hwmon/", "sys/class/hwmon/"},
		{"net/", "sys/class/net/"},
		{"edac/", "sys/devices/system/edac/mc/"},
		{"ib/", "sys/class/infiniband/"},
	};
	for (const auto &[area, dir] : areas) {
		if (p.substr(0, std::string_view(area).size()) != area)
			continue;
		std::string_view rest = p.substr(std::string_view(area).size());
		if (rest.empty() || rest.size() > 160)
			return "";
		int depth = 0;
		for (size_t at = 0; at <= rest.size();) {
			size_t slash = std::min(rest.find('/', at), rest.size());
			std::string_view part = rest.substr(at, slash - at);
			if (part.empty() || part.front() == '.' || ++depth > 6)
				return "";
			for (char c : part)
				if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
					return "";
			at = slash + 1;
		}
		return dir + std::string(rest);
	}
	return "";
}

inline bool make_dirs(Tree &t, const std::string &path)
{
	size_t slash = path.rfind('/');
	std::string parent = path.substr(0, slash);
	if (parent.size() <= t.root.size()) // the root exists
		return true;
	auto k = t.kinds.find(parent);
	if (k != t.kinds.end())
		return k->second == Kind::dir;
	if (!make_dirs(t, parent) || ::mkdir(parent.c_str(), 0755) != 0)
		return false;
	t.kinds[parent] = Kind::dir;
	t.children[parent.substr(0, parent.rfind('/'))].insert(parent.substr(parent.rfind('/') + 1));
	return true;
}

inline bool create(Tree &t, const std::string &path, std::string_view spec)
{
	if (t.kinds.count(path) || !make_dirs(t, path))
		return false;
	Kind kind = Kind::file;
	std::string text;
	if (spec == "@fifo")
		kind = Kind::fifo;
	else if (spec == "@dir")
		kind = Kind::dir;
	else if (spec == "@eio")
		kind = Kind::eio;
	else if (spec == "@dev")
		kind = Kind::dev;
	else if (spec == "@big")
		kind = Kind::big, text = std::string(70000, '1');
	else
		text = unescape(spec);
	bool made = false;
	if (kind == Kind::fifo)
		made = ::mkfifo(path.c_str(), 0644) == 0;
	else if (kind == Kind::dir)
		made = ::mkdir(path.c_str(), 0755) == 0;
	else if (kind == Kind::eio || kind == Kind::dev)
		made = ::symlink(kind == Kind::eio ? "/proc/self/mem" : "/dev/zero", path.c_str()) == 0;
	else if (int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644); fd >= 0) {
		made = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
		::close(fd);
	}
	if (!made)
		return false;
	t.kinds[path] = kind;
	t.value[path] = text;
	t.children[path.substr(0, path.rfind('/'))].insert(path.substr(path.rfind('/') + 1));
	return true;
}

} // namespace loom::fuzz
