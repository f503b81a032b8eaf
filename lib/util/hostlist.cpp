#include "lib/util/hostlist.hpp"

#include <algorithm>
#include <cctype>
#include <map>

namespace loom {

namespace {

// Split at commas outside brackets.
expected<std::vector<std::string_view>> split_top(std::string_view s)
{
	std::vector<std::string_view> out;
	int depth = 0;
	size_t start = 0;
	for (size_t i = 0; i < s.size(); i++) {
		if (s[i] == '[' && ++depth > 1)
			return unexpected("nested '[' in hostlist '" + std::string(s) + "'");
		if (s[i] == ']' && --depth < 0)
			return unexpected("unbalanced ']' in hostlist '" + std::string(s) + "'");
		if (s[i] == ',' && depth == 0) {
			out.push_back(s.substr(start, i - start));
			start = i + 1;
		}
	}
	if (depth != 0)
		return unexpected("unbalanced '[' in hostlist '" + std::string(s) + "'");
	out.push_back(s.substr(start));
	return out;
}

bool all_digits(std::string_view s)
{
	return !s.empty() && s.size() <= 18 &&
	       std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

std::string padded(long long v, size_t width)
{
	std::string s = std::to_string(v);
	if (s.size() < width)
		s.insert(0, width - s.size(), '0');
	return s;
}

struct Range {
	long long lo, hi;
	size_t width; // zero padding: the digits of the lower bound
};

// "01-03,7" -> {01..03, 7..7}: the ranges of one bracket, checked.
expected<std::vector<Range>> parse_ranges(std::string_view body)
{
	std::vector<Range> out;
	size_t start = 0;
	while (start <= body.size()) {
		size_t comma = body.find(',', start);
		std::string_view part =
			body.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
		size_t dash = part.find('-');
		std::string_view lo = part.substr(0, dash),
				 hi = dash == std::string_view::npos ? lo : part.substr(dash + 1);
		if (!all_digits(lo) || !all_digits(hi))
			return unexpected("bad range '" + std::string(part) + "' in hostlist");
		long long a = std::stoll(std::string(lo)), b = std::stoll(std::string(hi));
		if (b < a)
			return unexpected("range '" + std::string(part) + "' runs backwards");
		out.push_back(Range{a, b, lo.size()});
		if (comma == std::string_view::npos)
			break;
		start = comma + 1;
	}
	return out;
}

// One comma-separated part of a hostlist: its literal pieces and the
// brackets between them ("r[1-2]n[1-4]" -> "r", {1-2}, "n", {1-4}, "").
struct Part {
	std::vector<std::string_view> literals; // one more than brackets
	std::vector<std::vector<Range>> brackets;
};

expected<std::vector<Part>> parse_hostlist(std::string_view expr)
{
	auto pieces = split_top(expr);
	if (!pieces)
		return unexpected(pieces.error());
	std::vector<Part> out;
	for (std::string_view piece : *pieces) {
		if (piece.empty())
			return unexpected("empty name in hostlist '" + std::string(expr) + "'");
		Part p;
		size_t i = 0;
		while (true) {
			size_t open = piece.find('[', i);
			p.literals.push_back(
				piece.substr(i, open == std::string_view::npos ? std::string_view::npos : open - i));
			if (open == std::string_view::npos)
				break;
			size_t close = piece.find(']', open);
			auto ranges = parse_ranges(piece.substr(open + 1, close - open - 1));
			if (!ranges)
				return unexpected(ranges.error());
			p.brackets.push_back(std::move(*ranges));
			i = close + 1;
		}
		out.push_back(std::move(p));
	}
	return out;
}

// Names a part expands to, saturating at SIZE_MAX.
size_t names_in(const Part &p)
{
	size_t n = 1;
	for (const auto &bracket : p.brackets) {
		size_t k = 0;
		for (const Range &r : bracket) {
			unsigned long long span = static_cast<unsigned long long>(r.hi - r.lo) + 1;
			k = span > SIZE_MAX - k ? SIZE_MAX : k + static_cast<size_t>(span);
		}
		n = k != 0 && n > SIZE_MAX / k ? SIZE_MAX : n * k;
	}
	return n;
}

size_t names_in(const std::vector<Part> &parts)
{
	size_t n = 0;
	for (const Part &p : parts) {
		size_t k = names_in(p);
		n = k > SIZE_MAX - n ? SIZE_MAX : n + k;
	}
	return n;
}

// Every name of checked parts, in order.
std::vector<std::string> expand_parts(const std::vector<Part> &parts)
{
	std::vector<std::string> out;
	out.reserve(names_in(parts));
	for (const Part &p : parts) {
		std::vector<std::string> names{std::string(p.literals[0])};
		for (size_t b = 0; b < p.brackets.size(); b++) {
			std::vector<std::string> next;
			for (const auto &n : names)
				for (const Range &r : p.brackets[b])
					for (long long v = r.lo; v <= r.hi; v++)
						next.push_back(n + padded(v, r.width) + std::string(p.literals[b + 1]));
			names = std::move(next);
		}
		for (auto &n : names)
			out.push_back(std::move(n));
	}
	return out;
}

} // namespace

expected<size_t> hostlist_count(std::string_view expr)
{
	auto parts = parse_hostlist(expr);
	if (!parts)
		return unexpected(parts.error());
	return names_in(*parts);
}

expected<std::vector<std::string>> hostlist_expand(std::string_view expr, size_t max_names)
{
	auto parts = parse_hostlist(expr);
	if (!parts)
		return unexpected(parts.error());
	// Counted before anything is built: a hostile range costs no memory.
	if (names_in(*parts) > max_names)
		return unexpected("hostlist expands to more than " + std::to_string(max_names) + " names");
	return expand_parts(*parts);
}

expected<std::vector<std::string>> HostlistBudget::expand(std::string_view expr)
{
	if (expr.empty())
		return std::vector<std::string>{};
	auto parts = parse_hostlist(expr);
	if (!parts)
		return unexpected(parts.error());
	size_t n = names_in(*parts);
	if (n > left_)
		return unexpected("the file names more than " + std::to_string(max_) + " " + what_ +
				  " in all (one file describes at most " + std::to_string(max_) + ")");
	left_ -= n;
	return expand_parts(*parts);
}

std::string hostlist_compress(const std::vector<std::string> &names)
{
	// Group by (prefix, width of numeric suffix); keep first-appearance order.
	struct Group {
		std::string prefix;
		size_t width;
		std::vector<long long> nums;
	};
	std::vector<Group> groups;
	std::map<std::pair<std::string, size_t>, size_t> at;
	std::vector<std::pair<bool, size_t>> order; // (is group, index into groups or names)
	auto digits_at = [](const std::string &n) {
		size_t k = n.size();
		while (k > 0 && std::isdigit(static_cast<unsigned char>(n[k - 1])))
			k--;
		return k;
	};
	// Zero-padded suffixes fix a width per prefix ("n08"); plain numbers of
	// that same length join it, other plain numbers have width 0 ("n7", "n10").
	std::map<std::pair<std::string, size_t>, bool> padded_widths;
	for (const auto &n : names) {
		size_t k = digits_at(n);
		if (n.size() - k > 1 && n[k] == '0')
			padded_widths[{n.substr(0, k), n.size() - k}] = true;
	}
	for (size_t i = 0; i < names.size(); i++) {
		const std::string &n = names[i];
		size_t k = digits_at(n);
		size_t width = n.size() - k;
		if (width == 0 || width > 18 || n.find_first_of("[],") != std::string::npos) {
			order.emplace_back(false, i);
			continue;
		}
		if (!padded_widths.count({n.substr(0, k), width}))
			width = 0;
		auto key = std::make_pair(n.substr(0, k), width);
		auto it = at.find(key);
		if (it == at.end()) {
			it = at.emplace(key, groups.size()).first;
			groups.push_back(Group{key.first, width, {}});
			order.emplace_back(true, it->second);
		}
		groups[it->second].nums.push_back(std::stoll(n.substr(k)));
	}
	std::string out;
	for (auto [is_group, idx] : order) {
		if (!out.empty())
			out += ',';
		if (!is_group) {
			out += names[idx];
			continue;
		}
		Group &g = groups[idx];
		std::sort(g.nums.begin(), g.nums.end());
		g.nums.erase(std::unique(g.nums.begin(), g.nums.end()), g.nums.end());
		if (g.nums.size() == 1) {
			out += g.prefix + padded(g.nums[0], g.width);
			continue;
		}
		out += g.prefix + "[";
		for (size_t i = 0; i < g.nums.size();) {
			size_t j = i;
			while (j + 1 < g.nums.size() && g.nums[j + 1] == g.nums[j] + 1)
				j++;
			if (i)
				out += ',';
			out += padded(g.nums[i], g.width);
			if (j > i)
				out += "-" + padded(g.nums[j], g.width);
			i = j + 1;
		}
		out += "]";
	}
	return out;
}

} // namespace loom
