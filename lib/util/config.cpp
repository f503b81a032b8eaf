#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"

#include "lib/util/log.hpp"

#include <cctype>
#include <cmath>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

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

// Shortest text that reads back as the same double ("0.5", "1e-06").
std::string shown_real(double v)
{
	char buf[32];
	for (int prec = 6; prec <= 17; prec++) {
		std::snprintf(buf, sizeof buf, "%.*g", prec, v);
		if (std::strtod(buf, nullptr) == v)
			break;
	}
	return buf;
}

std::string shown_list(const std::vector<std::string> &items)
{
	std::string out;
	for (const auto &i : items)
		out += (out.empty() ? "" : ",") + i;
	return out;
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
	static const char *const hint =
		"expected a duration such as 90s, 15min, 2h, 1d, 1h30m or HH:MM:SS";
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

ConfigSchema &ConfigSchema::add(std::string key, std::string help, Setter setter, Show show)
{
	if (!keys_.count(key))
		order_.push_back(key);
	keys_[key] = Key{std::move(help), std::move(setter), std::move(show)};
	return *this;
}

std::vector<std::pair<std::string, std::string>> ConfigSchema::values() const
{
	std::vector<std::pair<std::string, std::string>> out;
	for (const auto &k : order_)
		if (const Key &key = keys_.at(k); key.show)
			out.emplace_back(k, key.show());
	return out;
}

ConfigSchema &ConfigSchema::string(std::string key, std::string *out, std::string help)
{
	return add(std::move(key), std::move(help), [out](std::string_view v) -> status {
		if (v.empty())
			return unexpected("empty value");
		*out = std::string(v);
		return ok();
	}, [out] { return *out; });
}

ConfigSchema &ConfigSchema::integer(std::string key, int64_t *out, int64_t min, int64_t max,
				    std::string help)
{
	return add(std::move(key), std::move(help), [=](std::string_view v) -> status {
		auto r = parse_int(v, min, max);
		if (!r)
			return unexpected(r.error());
		*out = *r;
		return ok();
	}, [out] { return std::to_string(*out); });
}

ConfigSchema &ConfigSchema::real(std::string key, double *out, double min, double max, std::string help)
{
	return add(std::move(key), std::move(help), [=](std::string_view v) -> status {
		auto r = parse_real(v, min, max);
		if (!r)
			return unexpected(r.error());
		*out = *r;
		return ok();
	}, [out] { return shown_real(*out); });
}

ConfigSchema &ConfigSchema::boolean(std::string key, bool *out, std::string help)
{
	return add(std::move(key), std::move(help), [=](std::string_view v) -> status {
		auto r = parse_bool(v);
		if (!r)
			return unexpected(r.error());
		*out = *r;
		return ok();
	}, [out] { return std::string(*out ? "yes" : "no"); });
}

ConfigSchema &ConfigSchema::duration(std::string key, int64_t *out, int64_t min, int64_t max,
				     std::string help)
{
	return add(std::move(key), std::move(help), [=](std::string_view v) -> status {
		auto r = parse_duration(v);
		if (!r)
			return unexpected(r.error());
		if (*r < min || *r > max)
			return unexpected("must be between " + format_duration(min) + " and " +
					  format_duration(max));
		*out = *r;
		return ok();
	}, [out] { return std::to_string(*out); });
}

ConfigSchema &ConfigSchema::size(std::string key, uint64_t *out, std::string help)
{
	return add(std::move(key), std::move(help), [=](std::string_view v) -> status {
		auto r = parse_size(v);
		if (!r)
			return unexpected(r.error());
		*out = *r;
		return ok();
	}, [out] { return std::to_string(*out); });
}

ConfigSchema &ConfigSchema::choice(std::string key, std::string *out, std::vector<std::string> allowed,
				   std::string help)
{
	return add(std::move(key), std::move(help), [=](std::string_view v) -> status {
		for (const auto &a : allowed)
			if (a == v) {
				*out = a;
				return ok();
			}
		std::string list;
		for (const auto &a : allowed)
			list += (list.empty() ? "" : ", ") + a;
		return unexpected("expected one of: " + list);
	}, [out] { return *out; });
}

ConfigSchema &ConfigSchema::list(std::string key, std::vector<std::string> *out, std::string help)
{
	return add(std::move(key), std::move(help), [=](std::string_view v) -> status {
		std::vector<std::string> items;
		size_t start = 0;
		while (start <= v.size()) {
			size_t comma = v.find(',', start);
			if (comma == std::string_view::npos)
				comma = v.size();
			if (comma == start)
				return unexpected("empty item in comma-separated list");
			items.emplace_back(v.substr(start, comma - start));
			start = comma + 1;
		}
		*out = std::move(items);
		return ok();
	}, [out] { return shown_list(*out); });
}

status ConfigSchema::split_word(std::string_view word, const std::string &where, std::vector<Word> &out)
{
	size_t eq = word.find('=');
	if (eq == std::string_view::npos)
		return unexpected(where, "'" + std::string(word) + "': expected key=value");
	if (eq == 0)
		return unexpected(where, "'" + std::string(word) + "': missing key before '='");
	out.push_back(Word{where, std::string(word.substr(0, eq)), std::string(word.substr(eq + 1))});
	return ok();
}

status ConfigSchema::apply(const std::vector<Word> &words) const
{
	std::map<std::string, std::string> seen;
	for (const auto &w : words) {
		auto it = keys_.find(w.key);
		const Prefix *family = nullptr;
		if (it == keys_.end())
			for (const Prefix &p : prefixes_)
				if (w.key.size() > p.prefix.size() + 1 && w.key.compare(0, p.prefix.size(), p.prefix) == 0 &&
				    w.key[p.prefix.size()] == '.')
					family = &p;
		if (it == keys_.end() && !family) {
			std::string known;
			for (const auto &k : order_)
				known += (known.empty() ? "" : ", ") + k;
			for (const Prefix &p : prefixes_)
				known += (known.empty() ? "" : ", ") + p.prefix + ".NAME";
			return unexpected(w.where, "unknown key '" + w.key + "' (known keys: " + known + ")");
		}
		if (auto prev = seen.find(w.key); prev != seen.end())
			return unexpected(w.where, "key '" + w.key + "' given twice (first at " +
							   prev->second + ")");
		seen[w.key] = w.where;
		status st;
		if (family) {
			std::string_view name = std::string_view(w.key).substr(family->prefix.size() + 1);
			for (char ch : name)
				if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_')
					return unexpected(w.where, "key '" + w.key + "': '" + std::string(name) +
									   "' is not a name (letters, digits, '-', '_')");
			st = family->setter(name, w.value);
		} else {
			st = it->second.setter(w.value);
		}
		if (!st)
			return unexpected(w.where, "key '" + w.key + "': bad value '" + w.value +
							   "': " + st.error().str());
	}
	return ok();
}

status ConfigSchema::parse_args(int argc, char *const argv[], const std::string &where) const
{
	std::vector<Word> words;
	for (int i = 0; i < argc; i++) {
		status st = split_word(argv[i] ? argv[i] : "",
				       where + (where.empty() ? "" : " ") + "argument " + std::to_string(i + 1),
				       words);
		if (!st)
			return st;
	}
	return apply(words);
}

status ConfigSchema::parse_words(std::string_view text, const std::string &where) const
{
	std::vector<Word> words;
	std::istringstream in{std::string(text)};
	std::string word;
	while (in >> word) {
		status st = split_word(word, where, words);
		if (!st)
			return st;
	}
	return apply(words);
}

status ConfigSchema::parse_text(std::string_view text, const std::string &name) const
{
	std::vector<Word> words;
	std::istringstream in{std::string(text)};
	std::string line;
	int lineno = 0;
	while (std::getline(in, line)) {
		lineno++;
		size_t hash = line.find('#');
		if (hash != std::string::npos)
			line.resize(hash);
		std::istringstream ls(line);
		std::string word;
		std::string where = name + ":" + std::to_string(lineno);
		while (ls >> word) {
			status st = split_word(word, where, words);
			if (!st)
				return st;
		}
	}
	return apply(words);
}

status ConfigSchema::parse_file(const std::string &path) const
{
	std::ifstream in(path);
	if (!in)
		return unexpected(path, std::string("cannot open: ") + std::strerror(errno));
	std::ostringstream ss;
	ss << in.rdbuf();
	if (in.bad())
		return unexpected(path, "read error");
	return parse_text(ss.str(), path);
}

ConfigSchema &ConfigSchema::prefix(std::string prefix, std::string help, NamedSetter setter)
{
	prefixes_.push_back({std::move(prefix), std::move(help), std::move(setter)});
	return *this;
}

std::string ConfigSchema::describe() const
{
	std::string out;
	for (const auto &k : order_) {
		out += "  " + k;
		const auto &h = keys_.at(k).help;
		if (!h.empty())
			out += std::string(k.size() < 22 ? 22 - k.size() : 1, ' ') + h;
		out += "\n";
	}
	for (const Prefix &p : prefixes_) {
		std::string k = p.prefix + ".NAME";
		out += "  " + k + std::string(k.size() < 22 ? 22 - k.size() : 1, ' ') + p.help + "\n";
	}
	return out;
}

} // namespace loom
