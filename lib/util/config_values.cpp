// The values of configuration keys (config.hpp): whole numbers, real
// numbers, yes/no, durations and sizes, and a duration's human form.
#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"

#include "lib/util/log.hpp"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>

namespace loom {
namespace {

bool all_digits(std::string_view s)
{
	if (s.empty())
		return false;
	for (char c : s)
		if (!std::isdigit(static_cast<unsigned char>(c)))
			return false;
	return true;
}

// Parse leading digits of s into v; returns the number of characters used.
size_t take_number(std::string_view s, int64_t &v)
{
	size_t i = 0;
	v = 0;
	while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
		int d = s[i] - '0';
		if (v > (INT64_MAX - d) / 10)
			return 0; // overflow: treat as no number
		v = v * 10 + d;
		i++;
	}
	return i;
}

} // namespace

expected<int64_t> parse_int(std::string_view text, int64_t min, int64_t max)
{
	std::string_view s = text;
	bool neg = false;
	if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
		neg = s[0] == '-';
		s.remove_prefix(1);
	}
	int64_t v = 0;
	if (!all_digits(s) || take_number(s, v) != s.size())
		return unexpected("expected a whole number");
	if (neg)
		v = -v;
	if (v < min || v > max)
		return unexpected(strprintf("must be between %lld and %lld", static_cast<long long>(min),
					    static_cast<long long>(max)));
	return v;
}

expected<double> parse_real(std::string_view text, double min, double max)
{
	std::string s(text);
	char *end = nullptr;
	errno = 0;
	double d = s.empty() || std::isspace(static_cast<unsigned char>(s[0])) ? NAN : std::strtod(s.c_str(), &end);
	if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(d))
		return unexpected("expected a number");
	if (d < min || d > max)
		return unexpected(strprintf("expected a number from %g to %g", min, max));
	return d;
}

expected<bool> parse_bool(std::string_view text)
{
	std::string s = lower(text);
	if (s == "yes" || s == "true" || s == "on" || s == "1")
		return true;
	if (s == "no" || s == "false" || s == "off" || s == "0")
		return false;
	return unexpected("expected yes or no");
}

expected<int64_t> parse_duration(std::string_view text)
{
	static const char *const hint = "expected a duration such as 90s, 15min, 2h, 1d, 1h30m or HH:MM:SS";
	if (text.empty())
		return unexpected(hint);
	// HH:MM:SS or MM:SS
	if (text.find(':') != std::string_view::npos) {
		int64_t total = 0;
		int parts = 0;
		std::string_view rest = text;
		while (true) {
			size_t colon = rest.find(':');
			std::string_view part = rest.substr(0, colon);
			int64_t v;
			if (!all_digits(part) || take_number(part, v) != part.size() || part.size() > 6)
				return unexpected(hint);
			if (parts > 0 && v >= 60)
				return unexpected(hint);
			total = total * 60 + v;
			parts++;
			if (colon == std::string_view::npos)
				break;
			rest.remove_prefix(colon + 1);
		}
		if (parts < 2 || parts > 3)
			return unexpected(hint);
		return total;
	}
	int64_t total = 0;
	std::string_view rest = text;
	bool any = false;
	while (!rest.empty()) {
		int64_t v;
		size_t n = take_number(rest, v);
		if (n == 0)
			return unexpected(hint);
		rest.remove_prefix(n);
		size_t u = 0;
		while (u < rest.size() && std::isalpha(static_cast<unsigned char>(rest[u])))
			u++;
		std::string unit = lower(rest.substr(0, u));
		rest.remove_prefix(u);
		int64_t mult;
		if (unit.empty()) {
			if (!rest.empty() || any)
				return unexpected(hint);
			mult = 1;
		} else if (unit == "s" || unit == "sec" || unit == "secs")
			mult = 1;
		else if (unit == "m" || unit == "min" || unit == "mins")
			mult = 60;
		else if (unit == "h" || unit == "hr" || unit == "hours" || unit == "hour")
			mult = 3600;
		else if (unit == "d" || unit == "day" || unit == "days")
			mult = 86400;
		else
			return unexpected(hint);
		if (v > INT64_MAX / mult || total > INT64_MAX - v * mult)
			return unexpected("duration too large");
		total += v * mult;
		any = true;
	}
	return total;
}

std::string format_duration(int64_t s)
{
	if (s <= 0)
		return "0s";
	std::string out;
	const std::pair<int64_t, const char *> units[] = {{86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}};
	for (auto [size, name] : units) {
		if (s >= size) {
			out += std::to_string(s / size) + name;
			s %= size;
		}
	}
	return out;
}

expected<uint64_t> parse_size(std::string_view text)
{
	static const char *const hint = "expected a size such as 512, 64k, 10M, 2G or 1T";
	int64_t v;
	size_t n = take_number(text, v);
	if (n == 0)
		return unexpected(hint);
	std::string unit = lower(text.substr(n));
	if (unit.size() > 1 && (unit.ends_with("ib")))
		unit.resize(unit.size() - 2);
	else if (unit.size() > 1 && unit.back() == 'b')
		unit.pop_back();
	int shift;
	if (unit.empty() || unit == "b")
		shift = 0;
	else if (unit == "k")
		shift = 10;
	else if (unit == "m")
		shift = 20;
	else if (unit == "g")
		shift = 30;
	else if (unit == "t")
		shift = 40;
	else
		return unexpected(hint);
	uint64_t u = static_cast<uint64_t>(v);
	if (shift && u > (UINT64_MAX >> shift))
		return unexpected("size too large");
	return u << shift;
}

} // namespace loom
