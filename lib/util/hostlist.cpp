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

// "01-03,7" -> {"01","02","03","7"}
expected<std::vector<std::string>> expand_range(std::string_view body, size_t max_names)
{
	std::vector<std::string> out;
	size_t start = 0;
	while (start <= body.size()) {
		size_t comma = body.find(',', start);
		std::string_view part = body.substr(start, comma == std::string_view::npos ? std::string_view::npos
											: comma - start);
		size_t dash = part.find('-');
		std::string_view lo = part.substr(0, dash), hi = dash == std::string_view::npos ? lo : part.substr(dash + 1);
		if (!all_digits(lo) || !all_digits(hi))
			return unexpected("bad range '" + std::string(part) + "' in hostlist");
		long long a = std::stoll(std::string(lo)), b = std::stoll(std::string(hi));
		if (b < a)
			return unexpected("range '" + std::string(part) + "' runs backwards");
		if (static_cast<unsigned long long>(b - a) >= max_names || out.size() + static_cast<size_t>(b - a) >= max_names)
			return unexpected("hostlist expands to more than " + std::to_string(max_names) + " names");
		for (long long v = a; v <= b; v++)
			out.push_back(padded(v, lo.size()));
		if (comma == std::string_view::npos)
			break;
		start = comma + 1;
	}
	return out;
}

} // namespace

expected<std::vector<std::string>> hostlist_expand(std::string_view expr, size_t max_names)
{
	auto parts = split_top(expr);
	if (!parts)
		return unexpected(parts.error());
	std::vector<std::string> out;
	for (std::string_view part : *parts) {
		if (part.empty())
			return unexpected("empty name in hostlist '" + std::string(expr) + "'");
		std::vector<std::string> names{""};
		size_t i = 0;
		while (i < part.size()) {
			size_t open = part.find('[', i);
			std::string_view lit = part.substr(i, open == std::string_view::npos ? std::string_view::npos : open - i);
			for (auto &n : names)
				n.append(lit);
			if (open == std::string_view::npos)
				break;
			size_t close = part.find(']', open);
			auto range = expand_range(part.substr(open + 1, close - open - 1), max_names);
			if (!range)
				return unexpected(range.error());
			if (names.size() * range->size() + out.size() > max_names)
				return unexpected("hostlist expands to more than " + std::to_string(max_names) + " names");
			std::vector<std::string> next;
			next.reserve(names.size() * range->size());
			for (const auto &n : names)
				for (const auto &r : *range)
					next.push_back(n + r);
			names = std::move(next);
			i = close + 1;
		}
		for (auto &n : names)
			out.push_back(std::move(n));
	}
	return out;
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
