#include "lib/place/admit.hpp"

#include <algorithm>

namespace loom::place {

status check_locality_kind(const LocalityHint &hint, const std::vector<std::string> &kinds)
{
	if (hint.mode == Locality::any || std::find(kinds.begin(), kinds.end(), hint.kind) != kinds.end())
		return ok();
	std::string list;
	for (const std::string &k : kinds)
		list += (list.empty() ? "" : ", ") + k;
	return unexpected("--locality=" + hint.kind,
			  "this cluster has no domain of that kind (kinds: " + (list.empty() ? "none" : list) + ")");
}

bool can_ever_fit(const topo::Cluster &c, const std::string &kind, const Allowed &offered, int min_nodes)
{
	auto enough = [&](auto begin, auto end) {
		int n = 0;
		for (auto it = begin; it != end; ++it)
			if (offered.test(*it) && ++n >= min_nodes)
				return true;
		return false;
	};
	if (kind == topo::nvlink_kind)
		return std::any_of(c.nvlink_domains.begin(), c.nvlink_domains.end(),
				   [&](const topo::NvlinkDomain &v) { return enough(v.nodes.begin(), v.nodes.end()); });
	topo::Index k = c.kinds.find(kind);
	if (k == topo::none)
		return false;
	for (const topo::Domain &d : c.domains) {
		if (d.kind != static_cast<uint16_t>(k))
			continue;
		int n = 0;
		for (Index m = d.node_begin; m < d.node_end; m++)
			if (offered.test(m) && ++n >= min_nodes)
				return true;
	}
	return false;
}

NoFit when_unplaced(const Request &r, const std::string &engine_reason, size_t refused)
{
	NoFit f;
	bool strict = r.locality == Locality::strict;
	// A tier or bounds: Slurm offers every class, so cons_tres would not keep to it.
	bool need = r.need.given();
	f.then = strict || need ? Unplaced::wait : Unplaced::cons_tres;
	if (refused > 0)
		f.reason = "cons_tres refused all " + std::to_string(refused) + " candidates; " +
			   (strict ? "waiting (strict locality)"
			    : need ? "waiting (GPU tier)"
				   : "placed by cons_tres");
	else if (need)
		f.reason = "waiting (GPU tier): " + engine_reason;
	else if (strict)
		f.reason = "waiting (strict locality=" + format_locality({r.locality, r.locality_level}) +
			   "): " + engine_reason;
	else
		f.reason = "placed by cons_tres: " + engine_reason;
	return f;
}

} // namespace loom::place
