#include "lib/ckpt/policy.hpp"

#include "lib/health/failure_stats.hpp"

#include <algorithm>
#include <cmath>

namespace loom::ckpt {

double young_interval(double cost_s, double mtbf_s) { return std::sqrt(2.0 * cost_s * mtbf_s); }

double daly_interval(double cost_s, double mtbf_s)
{
	if (cost_s >= 2.0 * mtbf_s)
		return mtbf_s;
	double r = cost_s / (2.0 * mtbf_s);
	return std::sqrt(2.0 * cost_s * mtbf_s) * (1.0 + std::sqrt(r) / 3.0 + r / 9.0) - cost_s;
}

int64_t auto_interval(double cost_s, double mtbf_s, IntervalBounds b)
{
	if (!(cost_s > 0) || !(mtbf_s > 0) || !std::isfinite(cost_s) || !std::isfinite(mtbf_s))
		return b.max_s;
	double t = std::llround(daly_interval(cost_s, mtbf_s));
	return std::clamp(static_cast<int64_t>(t), b.min_s, b.max_s);
}

int64_t time_limit_margin(double last_write_s, int64_t min_s)
{
	double m = std::isfinite(last_write_s) && last_write_s > 0 ? 2.0 * last_write_s + 10.0 : 0.0;
	return std::max<int64_t>(min_s, static_cast<int64_t>(std::ceil(std::min(m, 1e7))));
}

expected<FailureStats> parse_failure_stats(std::string_view text, const std::string &source)
{
	auto h = health::parse_failure_stats(text, source);
	if (!h)
		return unexpected(h.error());
	FailureStats s;
	for (const auto &[name, n] : h->nodes)
		s.nodes[name] = NodeHistory{n.exposure_s, n.failures};
	return s;
}

double node_mtbf(const NodeHistory &h, double site_node_mtbf_s)
{
	return health::mtbf_estimate(h.exposure_s, h.failures, site_node_mtbf_s);
}

double job_mtbf(const FailureStats &stats, const std::vector<std::string> &nodes, double site_node_mtbf_s)
{
	if (nodes.empty())
		return site_node_mtbf_s;
	double rate = 0;
	for (const auto &n : nodes) {
		auto it = stats.nodes.find(n);
		double m = it != stats.nodes.end() ? node_mtbf(it->second, site_node_mtbf_s) : site_node_mtbf_s;
		if (m > 0)
			rate += 1.0 / m;
	}
	return rate > 0 ? 1.0 / rate : site_node_mtbf_s;
}

namespace {

// Split at commas outside brackets.
std::vector<std::string_view> split_top(std::string_view s)
{
	std::vector<std::string_view> out;
	int depth = 0;
	size_t start = 0;
	for (size_t i = 0; i <= s.size(); i++) {
		if (i == s.size() || (s[i] == ',' && depth == 0)) {
			out.push_back(s.substr(start, i - start));
			start = i + 1;
		} else if (s[i] == '[') {
			depth++;
		} else if (s[i] == ']') {
			depth--;
		}
	}
	return out;
}

bool number(std::string_view s, long &v)
{
	if (s.empty() || s.size() > 9)
		return false;
	v = 0;
	for (char c : s) {
		if (c < '0' || c > '9')
			return false;
		v = v * 10 + (c - '0');
	}
	return true;
}

} // namespace

expected<std::vector<std::string>> expand_hostlist(std::string_view list, size_t max_hosts)
{
	std::vector<std::string> out;
	auto bad = [&](const char *why) { return unexpected("host list '" + std::string(list) + "'", why); };
	for (std::string_view item : split_top(list)) {
		if (item.empty())
			continue;
		size_t open = item.find('[');
		if (open == std::string_view::npos) {
			out.emplace_back(item);
			continue;
		}
		size_t close = item.find(']', open);
		if (close == std::string_view::npos || item.find('[', open + 1) < close)
			return bad("unbalanced brackets");
		std::string prefix(item.substr(0, open)), suffix(item.substr(close + 1));
		if (suffix.find_first_of("[]") != std::string::npos)
			return bad("only one bracket range per name is supported");
		for (std::string_view range : split_top(item.substr(open + 1, close - open - 1))) {
			size_t dash = range.find('-');
			std::string_view a = range.substr(0, dash);
			std::string_view b = dash == std::string_view::npos ? a : range.substr(dash + 1);
			long lo, hi;
			if (!number(a, lo) || !number(b, hi) || hi < lo)
				return bad("bad range");
			for (long i = lo; i <= hi; i++) {
				std::string n = std::to_string(i);
				if (n.size() < a.size())
					n.insert(0, a.size() - n.size(), '0');
				out.push_back(prefix + n + suffix);
				if (out.size() > max_hosts)
					return bad("too many hosts");
			}
		}
	}
	return out;
}

} // namespace loom::ckpt
