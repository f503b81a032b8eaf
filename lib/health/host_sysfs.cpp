#include "lib/health/host_sysfs.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <limits>
#include <sys/stat.h>

namespace loom::health {
namespace {

// The errnos that mean "no value now" (see the header), per kind of file.
constexpr int hwmon_no_value[] = {ENODATA, EIO, ENXIO, EAGAIN, ENODEV, EOPNOTSUPP};
constexpr int carrier_no_value[] = {EINVAL};

// hwmon scales: temp in millidegrees C, in* in millivolts, fan in RPM.
double scale_of(const std::string &kind) { return kind == "fan" ? 1.0 : 1000.0; }

// The kernel's operstate words (Documentation/networking/operstates.rst).
bool is_operstate(std::string_view s)
{
	for (const char *w : {"unknown", "notpresent", "down", "lowerlayerdown", "testing", "dormant", "up"})
		if (s == w)
			return true;
	return false;
}

// Unsigned decimal digits of a trimmed text into v; false when there are none,
// something else, or more than 64 bits.
bool digits_u64(std::string_view t, uint64_t &v)
{
	if (t.empty())
		return false;
	v = 0;
	for (char ch : t) {
		if (ch < '0' || ch > '9')
			return false;
		uint64_t d = static_cast<uint64_t>(ch - '0');
		if (v > (std::numeric_limits<uint64_t>::max() - d) / 10)
			return false;
		v = v * 10 + d;
	}
	return true;
}

bool is_dir(const std::string &p)
{
	struct stat st;
	return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool all_digits(std::string_view t)
{
	return !t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// One hwmon sensor from its chip directory, or nothing.
std::optional<HwmonSensor> read_sensor(SysfsAttrs &a, const std::string &base, const std::string &chip,
				       const std::string &stem, const std::string &kind)
{
	auto raw = a.integer(path_join(base, stem + "_input"), hwmon_no_value);
	if (!raw)
		return std::nullopt; // absent, not readable now, or an error noted
	double scale = scale_of(kind);
	HwmonSensor s;
	s.chip = chip;
	s.kind = kind;
	s.label = a.text(path_join(base, stem + "_label")).value_or(stem);
	s.value = static_cast<double>(*raw) / scale;
	auto limit = [&](const char *suffix) -> Reading {
		auto c = a.integer(path_join(base, stem + suffix), hwmon_no_value);
		return c ? Reading(static_cast<double>(*c) / scale) : std::nullopt;
	};
	s.crit = limit("_crit");
	s.max = limit("_max");
	s.min = limit("_min");
	for (const char *suffix : {"_alarm", "_crit_alarm", "_fault"})
		if (a.integer(path_join(base, stem + suffix), hwmon_no_value).value_or(0) != 0)
			s.alarm = true;
	return s;
}

} // namespace

expected<std::string> read_collector_file(const std::string &path, uint64_t max_bytes)
{
	ReadBounds b;
	b.max_bytes = max_bytes;
	b.deadline_ms = collector_file_deadline_ms;
	return read_file_bounded(path, b);
}

expected<int64_t> parse_sysfs_int(std::string_view text)
{
	std::string_view t = trim(text);
	bool neg = !t.empty() && t.front() == '-';
	std::string_view d = neg ? t.substr(1) : t;
	if (!all_digits(d))
		return unexpected(std::string("is not a number"));
	uint64_t v = 0;
	uint64_t limit =
		neg ? uint64_t(std::numeric_limits<int64_t>::max()) + 1 : uint64_t(std::numeric_limits<int64_t>::max());
	if (!digits_u64(d, v) || v > limit)
		return unexpected(std::string("is out of range"));
	return neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
}

expected<uint64_t> parse_sysfs_count(std::string_view text)
{
	std::string_view t = trim(text);
	if (!t.empty() && t.front() == '-' && all_digits(t.substr(1)))
		return unexpected(std::string("is negative, not a count"));
	if (!all_digits(t))
		return unexpected(std::string("is not a number"));
	uint64_t v = 0;
	if (!digits_u64(t, v))
		return unexpected(std::string("is out of range"));
	return v;
}

Error first_of(const std::vector<Error> &problems)
{
	if (problems.empty())
		return Error("no problem");
	Error e = problems.front();
	if (problems.size() > 1)
		e.message += " (and " + std::to_string(problems.size() - 1) + " more)";
	return e;
}

std::optional<std::string> SysfsAttrs::text(const std::string &path, std::span<const int> no_value)
{
	ReadBounds b;
	b.max_bytes = sysfs_max_bytes;
	b.deadline_ms = sysfs_deadline_ms;
	int errnum = 0;
	auto t = read_file_bounded(path, b, &errnum);
	if (t)
		return std::string(trim(*t));
	if (errnum == ENOENT || errnum == ENOTDIR)
		return std::nullopt;
	if (errnum != 0 && std::find(no_value.begin(), no_value.end(), errnum) != no_value.end())
		return std::nullopt;
	problems_.push_back(t.error());
	return std::nullopt;
}

std::optional<int64_t> SysfsAttrs::integer(const std::string &path, std::span<const int> no_value)
{
	auto t = text(path, no_value);
	if (!t)
		return std::nullopt;
	auto v = parse_sysfs_int(*t);
	if (!v) {
		bad(path, *t, v.error().message);
		return std::nullopt;
	}
	return *v;
}

std::optional<uint64_t> SysfsAttrs::count(const std::string &path, std::span<const int> no_value)
{
	auto t = text(path, no_value);
	if (!t)
		return std::nullopt;
	auto v = parse_sysfs_count(*t);
	if (!v) {
		bad(path, *t, v.error().message);
		return std::nullopt;
	}
	return *v;
}

Count SysfsAttrs::counter(const std::string &path, std::span<const int> no_value)
{
	auto t = text(path, no_value);
	if (!t)
		return std::nullopt;
	auto v = parse_sysfs_count(*t);
	if (v && *v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
		v = unexpected(std::string("is out of range"));
	if (!v) {
		bad(path, *t, v.error().message);
		return std::nullopt;
	}
	return static_cast<int64_t>(*v);
}

void SysfsAttrs::bad(const std::string &path, std::string_view value, const std::string &what)
{
	problems_.emplace_back(path, "'" + shown(value) + "' " + what);
}

void SysfsAttrs::problem(const std::string &path, const std::string &message) { problems_.emplace_back(path, message); }

std::vector<HwmonSensor> read_hwmon(const std::string &class_dir, std::vector<Error> &problems)
{
	SysfsAttrs a(problems);
	std::vector<HwmonSensor> out;
	auto chips = list_dir_checked(class_dir);
	if (!chips) {
		problems.push_back(chips.error());
		return out;
	}
	for (const auto &chip_dir : *chips) {
		std::string base = path_join(class_dir, chip_dir);
		std::string chip = a.text(path_join(base, "name")).value_or(chip_dir);
		for (const auto &file : list_dir(base)) {
			// tempN_input, fanN_input, inN_input
			size_t us = file.find('_');
			if (us == std::string::npos || file.substr(us) != "_input")
				continue;
			std::string stem = file.substr(0, us); // temp1
			size_t digits = stem.find_first_of("0123456789");
			if (digits == std::string::npos)
				continue;
			std::string kind = stem.substr(0, digits);
			if (kind != "temp" && kind != "fan" && kind != "in")
				continue;
			if (auto s = read_sensor(a, base, chip, stem, kind))
				out.push_back(std::move(*s));
		}
	}
	return out;
}

std::vector<EdacController> read_edac(const std::string &mc_dir, std::vector<Error> &problems)
{
	SysfsAttrs a(problems);
	std::vector<EdacController> out;
	auto mcs = list_dir_checked(mc_dir);
	if (!mcs) {
		problems.push_back(mcs.error());
		return out;
	}
	for (const auto &mc : *mcs) {
		if (mc.rfind("mc", 0) != 0 || mc.size() < 3 || !std::isdigit(static_cast<unsigned char>(mc[2])))
			continue;
		std::string base = path_join(mc_dir, mc);
		size_t before = a.problems();
		EdacController c;
		c.name = mc;
		c.corrected = a.counter(path_join(base, "ce_count"));
		c.uncorrected = a.counter(path_join(base, "ue_count"));
		if (!c.corrected && !c.uncorrected) {
			if (a.problems() == before)
				a.problem(base, "no ce_count or ue_count");
			continue;
		}
		out.push_back(std::move(c));
	}
	return out;
}

std::vector<NetIface> read_net(const std::string &class_dir, const std::vector<std::string> &skip,
			       std::vector<Error> &problems)
{
	SysfsAttrs a(problems);
	std::vector<NetIface> out;
	auto names = list_dir_checked(class_dir);
	if (!names) {
		problems.push_back(names.error());
		return out;
	}
	for (const auto &name : *names) {
		bool skipped = false;
		for (const auto &s : skip)
			skipped |= name.rfind(s, 0) == 0;
		if (skipped)
			continue;
		std::string base = path_join(class_dir, name);
		if (!is_dir(base))
			continue; // bonding_masters, a file beside the interfaces
		NetIface n;
		n.name = name;
		std::string carrier = path_join(base, "carrier");
		if (auto c = a.integer(carrier, carrier_no_value)) {
			if (*c == 0 || *c == 1)
				n.carrier = *c != 0;
			else
				a.bad(carrier, std::to_string(*c), "is not 0 or 1");
		}
		std::string operstate = path_join(base, "operstate");
		if (auto o = a.text(operstate)) {
			if (is_operstate(*o))
				n.operstate = *o;
			else
				a.bad(operstate, *o, "is not an operstate");
		}
		n.carrier_changes = a.counter(path_join(base, "carrier_changes"));
		n.rx_errors = a.counter(path_join(base, "statistics/rx_errors"));
		n.tx_errors = a.counter(path_join(base, "statistics/tx_errors"));
		n.rx_dropped = a.counter(path_join(base, "statistics/rx_dropped"));
		out.push_back(std::move(n));
	}
	return out;
}

expected<std::vector<HwmonSensor>> read_hwmon(const std::string &class_dir)
{
	std::vector<Error> problems;
	auto out = read_hwmon(class_dir, problems);
	if (!problems.empty())
		return unexpected(first_of(problems));
	return out;
}

expected<std::vector<EdacController>> read_edac(const std::string &mc_dir)
{
	std::vector<Error> problems;
	auto out = read_edac(mc_dir, problems);
	if (!problems.empty())
		return unexpected(first_of(problems));
	return out;
}

expected<std::vector<NetIface>> read_net(const std::string &class_dir, const std::vector<std::string> &skip)
{
	std::vector<Error> problems;
	auto out = read_net(class_dir, skip, problems);
	if (!problems.empty())
		return unexpected(first_of(problems));
	return out;
}

} // namespace loom::health
