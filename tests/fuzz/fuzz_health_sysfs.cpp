// Fuzz target: the sysfs readers of loom health (hwmon, net, EDAC,
// InfiniBand) and gather() on a tree built from the input in a temporary
// directory. The invariant is that garbage is never healthy: a value that is
// not clean, in a file a reader reads, is a problem naming that file, and is
// absent from the sample; what the sample holds is each file's clean value;
// every problem names a file or directory of the tree; and a tree with a
// problem never judges ok. The readers must not crash or hang on FIFOs,
// devices, directories or oversized files in place of attributes.
//
// Input: lines "<area>/<path>\t<value>", area hwmon, net, edac or ib (for
// sys/class/hwmon, sys/class/net, sys/devices/system/edac/mc and
// sys/class/infiniband). The value takes \n, \t, \\ and \xNN escapes, or is
// @fifo, @dir, @eio (a link to /proc/self/mem, whose read at 0 is EIO), @dev
// (a link to /dev/zero) or @big (70000 bytes).
#include "lib/health/config.hpp"
#include "lib/health/gather.hpp"
#include "lib/health/host_sysfs.hpp"
#include "lib/health/infiniband.hpp"
#include "lib/health/rules.hpp"
#include "lib/util/fs.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fcntl.h>
#include <ftw.h>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace loom;
using namespace loom::health;

namespace {

#define CHECK(cond)                                                                                    \
	do {                                                                                           \
		if (!(cond))                                                                           \
			__builtin_trap();                                                              \
	} while (0)

enum class Kind { file, fifo, dir, eio, dev, big };

struct Tree {
	std::string root;
	std::map<std::string, Kind> kinds;        // full path -> what is there
	std::map<std::string, std::string> value; // full path -> content of a file
	std::map<std::string, std::set<std::string>> children; // directory -> names
};

int remove_one(const char *p, const struct stat *, int, struct FTW *) { return ::remove(p); }

void remove_tree(const std::string &dir) { ::nftw(dir.c_str(), remove_one, 16, FTW_DEPTH | FTW_PHYS); }

// One directory per process, removed at exit; in memory (/dev/shm) where
// there is one: a tree is made and removed for every input.
const std::string &base_dir()
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

std::string unescape(std::string_view v)
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
std::string sysfs_rel(std::string_view p)
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

bool make_dirs(Tree &t, const std::string &path)
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

bool create(Tree &t, const std::string &path, std::string_view spec)
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

Tree build(std::string_view input)
{
	Tree t;
	t.root = base_dir() + "/root";
	remove_tree(t.root);
	CHECK(::mkdir(t.root.c_str(), 0755) == 0);
	int n = 0;
	for (const std::string &line : split_lines(input)) {
		size_t tab = line.find('\t');
		std::string rel = tab == std::string::npos ? "" : sysfs_rel(std::string_view(line).substr(0, tab));
		if (rel.empty())
			continue;
		if (create(t, t.root + "/" + rel, std::string_view(line).substr(tab + 1)) && ++n >= 256)
			break;
	}
	return t;
}

// The oracle's own reading of a value: the clean number, or nothing.
std::optional<int64_t> clean_int(std::string_view v, bool may_be_negative, uint64_t max)
{
	v = trim(v);
	bool neg = may_be_negative && !v.empty() && v.front() == '-';
	if (neg)
		v.remove_prefix(1);
	if (v.empty() || v.size() > 25)
		return std::nullopt;
	unsigned __int128 n = 0;
	for (char c : v) {
		if (c < '0' || c > '9')
			return std::nullopt;
		n = n * 10 + static_cast<unsigned>(c - '0');
	}
	if (n > (neg ? static_cast<unsigned __int128>(max) + 1 : max))
		return std::nullopt;
	return neg ? static_cast<int64_t>(0 - static_cast<uint64_t>(n)) : static_cast<int64_t>(static_cast<uint64_t>(n));
}

struct Expect {
	enum { absent, value, garbage } what = absent;
	int64_t v = 0;
};

// What a reader must make of path: absent (no such file, or EIO where that
// means "no value now"), a value, or garbage it must name.
Expect expect(const Tree &t, const std::string &path, bool may_be_negative, uint64_t max, bool eio_is_absent)
{
	auto k = t.kinds.find(path);
	if (k == t.kinds.end())
		return {};
	if (k->second == Kind::eio && eio_is_absent)
		return {};
	if (k->second != Kind::file)
		return {Expect::garbage};
	auto v = clean_int(t.value.at(path), may_be_negative, max);
	return v ? Expect{Expect::value, *v} : Expect{Expect::garbage};
}

bool named(const std::vector<Error> &problems, const std::string &path)
{
	for (const auto &e : problems)
		if (e.where == path)
			return true;
	return false;
}

std::vector<std::string> dirs_in(const Tree &t, const std::string &dir)
{
	std::vector<std::string> out;
	auto c = t.children.find(dir);
	if (c != t.children.end())
		for (const auto &name : c->second)
			out.push_back(name);
	return out;
}

constexpr uint64_t i64max = 0x7fffffffffffffffull;

void check_hwmon(const Tree &t)
{
	std::string dir = t.root + "/sys/class/hwmon";
	std::vector<Error> p;
	auto got = read_hwmon(dir, p);
	size_t i = 0;
	for (const auto &chip : dirs_in(t, dir)) {
		std::string base = dir + "/" + chip;
		for (const auto &file : dirs_in(t, base)) {
			size_t us = file.find('_');
			if (us == std::string::npos || file.substr(us) != "_input")
				continue;
			std::string stem = file.substr(0, us);
			std::string kind = stem.substr(0, stem.find_first_of("0123456789"));
			if (kind.size() == stem.size() || (kind != "temp" && kind != "fan" && kind != "in"))
				continue;
			Expect in = expect(t, base + "/" + file, true, i64max, true);
			if (in.what == Expect::garbage)
				CHECK(named(p, base + "/" + file));
			if (in.what != Expect::value)
				continue;
			CHECK(i < got.size());
			const HwmonSensor &s = got[i++];
			double scale = kind == "fan" ? 1.0 : 1000.0;
			CHECK(s.kind == kind && s.value == static_cast<double>(in.v) / scale);
			auto limit = [&](const char *suffix, const Reading &r) {
				Expect e = expect(t, base + "/" + stem + suffix, true, i64max, true);
				if (e.what == Expect::garbage)
					CHECK(named(p, base + "/" + stem + suffix));
				CHECK(e.what == Expect::value ? r && *r == static_cast<double>(e.v) / scale : !r);
			};
			limit("_crit", s.crit);
			limit("_max", s.max);
			limit("_min", s.min);
			bool alarm = false;
			for (const char *suffix : {"_alarm", "_crit_alarm", "_fault"}) {
				Expect e = expect(t, base + "/" + stem + suffix, true, i64max, true);
				if (e.what == Expect::garbage)
					CHECK(named(p, base + "/" + stem + suffix));
				alarm |= e.what == Expect::value && e.v != 0;
			}
			CHECK(s.alarm == alarm);
		}
	}
	CHECK(i == got.size());
	for (const auto &e : p)
		CHECK(t.kinds.count(e.where));
}

void check_net(const Tree &t)
{
	std::string dir = t.root + "/sys/class/net";
	std::vector<Error> p;
	auto got = read_net(dir, {"lo"}, p);
	size_t i = 0;
	for (const auto &name : dirs_in(t, dir)) {
		std::string base = dir + "/" + name;
		if (name.rfind("lo", 0) == 0 || t.kinds.at(base) != Kind::dir)
			continue;
		CHECK(i < got.size() && got[i].name == name);
		const NetIface &n = got[i++];
		Expect c = expect(t, base + "/carrier", true, i64max, false);
		bool bad = c.what == Expect::garbage || (c.what == Expect::value && c.v != 0 && c.v != 1);
		if (bad)
			CHECK(named(p, base + "/carrier"));
		CHECK(bad || c.what == Expect::absent ? !n.carrier : n.carrier && *n.carrier == (c.v == 1));
		auto count = [&](const char *file, const Count &got_v) {
			Expect e = expect(t, base + "/" + file, false, i64max, false);
			if (e.what == Expect::garbage)
				CHECK(named(p, base + "/" + file));
			CHECK(e.what == Expect::value ? got_v && *got_v == e.v : !got_v);
		};
		count("carrier_changes", n.carrier_changes);
		count("statistics/rx_errors", n.rx_errors);
		count("statistics/tx_errors", n.tx_errors);
		count("statistics/rx_dropped", n.rx_dropped);
	}
	CHECK(i == got.size());
	for (const auto &e : p)
		CHECK(t.kinds.count(e.where));
}

void check_edac(const Tree &t)
{
	std::string dir = t.root + "/sys/devices/system/edac/mc";
	std::vector<Error> p;
	auto got = read_edac(dir, p);
	size_t i = 0;
	for (const auto &mc : dirs_in(t, dir)) {
		if (mc.rfind("mc", 0) != 0 || mc.size() < 3 || mc[2] < '0' || mc[2] > '9')
			continue;
		std::string base = dir + "/" + mc;
		Expect ce = expect(t, base + "/ce_count", false, i64max, false);
		Expect ue = expect(t, base + "/ue_count", false, i64max, false);
		if (ce.what == Expect::garbage)
			CHECK(named(p, base + "/ce_count"));
		if (ue.what == Expect::garbage)
			CHECK(named(p, base + "/ue_count"));
		if (ce.what == Expect::absent && ue.what == Expect::absent)
			CHECK(named(p, base));
		if (ce.what != Expect::value && ue.what != Expect::value)
			continue;
		CHECK(i < got.size() && got[i].name == mc);
		const EdacController &c = got[i++];
		CHECK(ce.what == Expect::value ? c.corrected && *c.corrected == ce.v : !c.corrected);
		CHECK(ue.what == Expect::value ? c.uncorrected && *c.uncorrected == ue.v : !c.uncorrected);
	}
	CHECK(i == got.size());
	for (const auto &e : p)
		CHECK(t.kinds.count(e.where));
}

void check_counters(const Tree &t, const std::string &dir, const std::map<std::string, uint64_t> &got,
		    const std::vector<Error> &p)
{
	size_t n = 0;
	for (const auto &name : dirs_in(t, dir)) {
		Expect e = expect(t, dir + "/" + name, false, ~0ull, false);
		auto it = got.find(name);
		if (e.what == Expect::garbage)
			CHECK(named(p, dir + "/" + name) && it == got.end());
		if (e.what == Expect::value) {
			// clean_int holds 64 bits in int64_t: compare as unsigned.
			CHECK(it != got.end() && it->second == static_cast<uint64_t>(e.v));
			n++;
		}
	}
	CHECK(n == got.size());
}

void check_ib(const Tree &t)
{
	std::string dir = t.root + "/sys/class/infiniband";
	std::vector<Error> p;
	auto got = read_ib_sysfs(dir, p);
	size_t i = 0;
	for (const auto &dev : dirs_in(t, dir)) {
		std::string pdir = dir + "/" + dev + "/ports";
		for (const auto &pn : dirs_in(t, pdir)) {
			std::string base = pdir + "/" + pn;
			auto st = t.kinds.find(base + "/state");
			if (st == t.kinds.end())
				CHECK(named(p, base + "/state"));
			else if (st->second == Kind::file) {
				std::string_view v = trim(t.value.at(base + "/state"));
				bool junk = v.empty();
				for (char c : v)
					junk |= static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f;
				if (junk)
					CHECK(named(p, base + "/state"));
			}
			if (named(p, base + "/state"))
				continue; // a port without a state is left out
			CHECK(i < got.size() && got[i].device == dev);
			const IbPort &port = got[i++];
			check_counters(t, base + "/counters", port.counters, p);
			check_counters(t, base + "/hw_counters", port.hw_counters, p);
		}
	}
	CHECK(i == got.size());
	for (const auto &e : p)
		CHECK(t.kinds.count(e.where) || (e.where.size() > 6 && e.where.substr(e.where.size() - 6) == "/state"));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Tree t = build(std::string_view(reinterpret_cast<const char *>(data), size));
	check_hwmon(t);
	check_net(t);
	check_edac(t);
	check_ib(t);
	// Through gather() and judge(): any problem is a collector error, and a
	// node with one is never ok.
	std::vector<Error> all;
	(void)read_hwmon(t.root + "/sys/class/hwmon", all);
	(void)read_net(t.root + "/sys/class/net", {"lo"}, all);
	(void)read_edac(t.root + "/sys/devices/system/edac/mc", all);
	(void)read_ib_sysfs(t.root + "/sys/class/infiniband", all);
	GatherOptions opt;
	opt.root = t.root;
	opt.gpu_source = "none";
	opt.kernel_logs = {};
	opt.syslog = "";
	NodeSample s = gather(opt);
	CHECK(all.empty() == s.errors.empty());
	if (!all.empty())
		CHECK(judge(s, HealthConfig()).outcome != Outcome::ok);
	return 0;
}
