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
#include "tests/fuzz/sysfs_tree.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <vector>

using namespace loom;
using namespace loom::fuzz;
using namespace loom::health;

namespace {

#define CHECK(cond)                                                                                                    \
	do {                                                                                                           \
		if (!(cond))                                                                                           \
			__builtin_trap();                                                                              \
	} while (0)

// The tree the input's lines describe, at most 256 of them, made afresh.
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
	return neg ? static_cast<int64_t>(0 - static_cast<uint64_t>(n))
		   : static_cast<int64_t>(static_cast<uint64_t>(n));
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
					junk |= static_cast<unsigned char>(c) < 0x20 ||
						static_cast<unsigned char>(c) >= 0x7f;
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
