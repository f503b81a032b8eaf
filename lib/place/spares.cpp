#include "lib/place/spares.hpp"

#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"

#include <algorithm>
#include <cmath>

namespace loom::place {
namespace {
std::vector<std::string> split_commas(std::string_view s)
{
	std::vector<std::string> out;
	size_t b = 0;
	for (size_t i = 0; i <= s.size(); i++)
		if (i == s.size() || s[i] == ',') {
			out.emplace_back(s.substr(b, i - b));
			b = i + 1;
		}
	return out;
}
} // namespace

int SpareRule::want(size_t domain_nodes) const
{
	if (share > 0)
		return static_cast<int>(std::ceil(share * static_cast<double>(domain_nodes) - 1e-9));
	return count;
}

expected<SpareSpec> parse_spares(std::string_view text)
{
	SpareSpec spec;
	std::string t(trim(text));
	if (t.empty() || t == "none")
		return spec;
	for (const std::string &item : split_commas(t)) {
		std::string it(trim(item));
		auto colon = it.find(':');
		if (it.empty() || colon == std::string::npos || colon == 0 || colon + 1 == it.size())
			return unexpected("spares: '" + it + "': expected KIND:N or KIND:P% (leaf:1, nvlink:2, pod:5%)");
		SpareRule r;
		r.kind = it.substr(0, colon);
		std::string n = it.substr(colon + 1);
		if (n.back() == '%') {
			auto p = parse_real(std::string_view(n).substr(0, n.size() - 1), 0, 50);
			if (!p || *p <= 0)
				return unexpected("spares: '" + it + "': a share is more than 0% and at most 50% of a domain");
			r.share = *p / 100.0;
		} else {
			auto c = parse_int(n, 1, 64);
			if (!c)
				return unexpected("spares: '" + it + "': expected 1 to 64 spares per domain");
			r.count = static_cast<int>(*c);
		}
		for (const SpareRule &o : spec.rules)
			if (o.kind == r.kind)
				return unexpected("spares: kind '" + r.kind + "' given twice");
		spec.rules.push_back(std::move(r));
	}
	return spec;
}

status check_spare_kinds(const SpareSpec &spec, const std::vector<std::string> &kinds)
{
	for (const SpareRule &r : spec.rules)
		if (std::find(kinds.begin(), kinds.end(), r.kind) == kinds.end())
			return unexpected("spares: this fabric has no domain of kind '" + r.kind + "' (kinds: " +
					  join(kinds, ", ") + ")");
	return ok();
}

size_t SparePool::count() const
{
	return static_cast<size_t>(std::count(spare.begin(), spare.end(), uint8_t{1}));
}

SparePool choose_spares(const topo::Cluster &c, const SpareSpec &spec, const std::vector<SpareNodeState> &state)
{
	SparePool pool;
	pool.spare.assign(c.nodes.size(), 0);
	auto usable = [&](topo::Index m) {
		return static_cast<size_t>(m) < state.size() && state[static_cast<size_t>(m)] != SpareNodeState::unusable;
	};
	auto fill = [&](SpareDomain &d) {
		d.want = 0;
		for (const SpareRule &r : spec.rules)
			if (r.kind == d.kind)
				d.want = r.want(d.nodes.size());
		int have = 0;
		for (topo::Index m : d.nodes) // spares of an earlier rule count here
			if (pool.spare[static_cast<size_t>(m)] && usable(m)) {
				d.spares.push_back(m);
				have++;
			}
		for (auto it = d.nodes.rbegin(); it != d.nodes.rend() && have < d.want; ++it) {
			topo::Index m = *it;
			if (!usable(m) || pool.spare[static_cast<size_t>(m)])
				continue;
			pool.spare[static_cast<size_t>(m)] = 1;
			d.spares.push_back(m);
			have++;
		}
		std::sort(d.spares.begin(), d.spares.end());
	};
	for (const SpareRule &r : spec.rules) {
		if (r.kind == topo::nvlink_kind) {
			for (size_t v = 0; v < c.nvlink_domains.size(); v++) {
				SpareDomain d{r.kind, static_cast<topo::Index>(v), c.nvlink_domains[v].name,
					      c.nvlink_domains[v].nodes, 0, {}};
				fill(d);
				pool.domains.push_back(std::move(d));
			}
			continue;
		}
		topo::Index k = c.kinds.find(r.kind);
		if (k == topo::none)
			continue;
		for (size_t i = 0; i < c.domains.size(); i++) {
			const topo::Domain &dom = c.domains[i];
			if (dom.kind != static_cast<uint16_t>(k))
				continue;
			SpareDomain d{r.kind, static_cast<topo::Index>(i), dom.name, {}, 0, {}};
			for (topo::Index m = dom.node_begin; m < dom.node_end; m++)
				d.nodes.push_back(m);
			fill(d);
			pool.domains.push_back(std::move(d));
		}
	}
	return pool;
}

bool may_borrow_spares(const SpareSpec &spec, int64_t time_limit_s)
{
	return spec.lend_max_s > 0 && time_limit_s > 0 && time_limit_s <= spec.lend_max_s;
}

} // namespace loom::place
