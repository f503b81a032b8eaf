// What one job needs from a node and from a domain.
#include "lib/place/search.hpp"

#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/log.hpp"

#include <algorithm>

namespace loom::place {

Filter::Filter(const State &state, const Request &req, const Allowed *a)
	: s(state), c(state.cluster()), r(req), allowed(a), root(static_cast<Index>(state.cluster().domains.size())),
	  roots(state.roots()), loose(state.loose_nodes())
{
	whole = req.whole_node;
	cores = req.cores_per_node;
	if (req.gpus_per_node > 0 || req.gpus == 0) {
		per_node = true;
		gpn = req.gpus_per_node;
		need = req.min_nodes;
	} else {
		per_node = false;
		gpn = 1;
		need = req.gpus;
	}
	int most = s.max_node_gpus();
	max_gpn = most > 0 ? most : 8;
}

bool Filter::fits(Index n) const
{
	if (!s.available(n) || (allowed && !allowed->test(n)))
		return false;
	if (!(class_bit(c.nodes[n].perf_class) & class_mask))
		return false;
	if (whole) {
		if (!s.idle(n) || s.total_gpus(n) < gpn)
			return false;
		if (s.total_cores(n) > 0 && s.total_cores(n) < cores)
			return false;
	} else {
		if (s.free_gpus(n) < gpn)
			return false;
		if (s.total_cores(n) > 0 && s.free_cores(n) < cores)
			return false;
	}
	return excluded.empty() || !std::binary_search(excluded.begin(), excluded.end(), n);
}

int64_t Filter::units(Index n) const
{
	if (per_node)
		return 1;
	return whole ? s.total_gpus(n) : s.free_gpus(n);
}

int64_t Filter::bound(const Capacity &k, uint64_t classes) const
{
	if (!(classes & class_mask))
		return 0;
	if (!per_node)
		return k.free_gpus;
	if (whole)
		return k.idle;
	return gpn > 0 ? k.with_free(gpn) : k.nodes;
}

namespace {

// A level from a kind name ("leaf") or a number.
expected<int> resolve_level(const topo::Cluster &c, const std::string &text)
{
	if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
		auto v = parse_int(text, 0, 1 << 16);
		if (!v)
			return unexpected(v.error());
		if (*v >= c.levels)
			return unexpected("locality", strprintf("level %lld is below the deepest level %d",
								static_cast<long long>(*v), c.levels - 1));
		return static_cast<int>(*v);
	}
	Index kind = c.kinds.find(text);
	int level = -1;
	for (const topo::Domain &d : c.domains)
		if (static_cast<Index>(d.kind) == kind && (level < 0 || d.level < level))
			level = d.level;
	if (kind == topo::none || level < 0)
		return unexpected("locality", "no domain of kind '" + text + "' in the cluster (kinds: " +
						      join(topo::locality_kinds(c), ", ") + ")");
	return level;
}

} // namespace

status resolve(Filter &f, const Weights &w)
{
	(void)w;
	if (!f.r.gpu_class.empty()) {
		Index id = f.c.classes.find(f.r.gpu_class);
		if (id == topo::none || id == 0) {
			std::string known;
			for (size_t i = 1; i < f.c.classes.size(); i++)
				known += (known.empty() ? "" : ", ") + f.c.classes.name(i);
			return unexpected("class", "no GPU class '" + f.r.gpu_class + "' in the cluster (classes: " +
							   (known.empty() ? "none" : known) + ")");
		}
		f.want_class = id;
		f.class_mask = class_bit(static_cast<uint16_t>(id));
	}
	if (f.r.locality != Locality::any && f.r.locality_level == topo::nvlink_kind) {
		// NVLink domains cut across the tree: strict searches only inside
		// them; prefer is the score's NVLink term.
		if (f.c.nvlink_domains.empty())
			return unexpected("locality", "the cluster has no NVLink domains (kinds: " +
							      join(topo::locality_kinds(f.c), ", ") + ")");
		f.strict_nvlink = f.r.locality == Locality::strict;
	} else if (f.r.locality != Locality::any) {
		auto level = resolve_level(f.c, f.r.locality_level);
		if (!level)
			return unexpected(level.error());
		(f.r.locality == Locality::strict ? f.strict_level : f.prefer_level) = *level;
	}
	for (const std::string &entry : f.r.exclude) { // each entry a name or a hostlist
		auto names = hostlist_expand(entry, f.c.nodes.size() + 1);
		if (!names)
			return unexpected(names.error().within("exclude"));
		for (const std::string &name : *names) {
			Index n = f.c.find_node(name);
			if (n == topo::none)
				return unexpected("exclude", "node '" + name + "' is not in the cluster");
			f.excluded.push_back(n);
		}
	}
	std::sort(f.excluded.begin(), f.excluded.end());
	return ok();
}

// Classes faster than the one asked for, by the weights' class order.
uint64_t faster_classes(const Filter &f, const Weights &w)
{
	if (f.want_class < 0)
		return 0;
	const std::string &want = f.c.classes.name(static_cast<size_t>(f.want_class));
	auto pos = std::find(w.class_order.begin(), w.class_order.end(), want);
	uint64_t mask = 0;
	if (pos == w.class_order.end())
		return 0;
	for (auto it = pos + 1; it != w.class_order.end(); ++it) {
		Index id = f.c.classes.find(*it);
		if (id > 0)
			mask |= class_bit(static_cast<uint16_t>(id));
	}
	return mask;
}

} // namespace loom::place
