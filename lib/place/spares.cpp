#include "lib/place/spares.hpp"

#include <algorithm>

namespace loom::place {

size_t SparePool::count() const { return static_cast<size_t>(std::count(spare.begin(), spare.end(), uint8_t{1})); }

SparePool choose_spares(const topo::Cluster &c, const SpareSpec &spec, const std::vector<SpareNodeState> &state)
{
	SparePool pool;
	pool.spare.assign(c.nodes.size(), 0);
	auto usable = [&](topo::Index m) {
		return static_cast<size_t>(m) < state.size() &&
		       state[static_cast<size_t>(m)] != SpareNodeState::unusable;
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
				SpareDomain d{r.kind,
					      static_cast<topo::Index>(v),
					      c.nvlink_domains[v].name,
					      c.nvlink_domains[v].nodes,
					      0,
					      {}};
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

exchange::SpareFile spare_file_of(const topo::Cluster &c, const SparePool &pool, int64_t lend_max_s, int64_t now)
{
	exchange::SpareFile f;
	f.written = now;
	f.lend_max_s = lend_max_s;
	for (const SpareDomain &d : pool.domains) {
		exchange::SpareFile::Domain o{d.kind, d.name, {}, {}, d.want};
		o.nodes.reserve(d.nodes.size());
		for (topo::Index m : d.nodes)
			o.nodes.push_back(c.nodes[static_cast<size_t>(m)].name);
		for (topo::Index m : d.spares)
			o.spares.push_back(c.nodes[static_cast<size_t>(m)].name);
		f.domains.push_back(std::move(o));
	}
	return f;
}

} // namespace loom::place
