// The exact score of a node set, and the line that explains it.
#include "lib/place/search.hpp"

#include "lib/util/log.hpp"

#include <algorithm>
#include <bit>

namespace loom::place {

namespace {

// Lowest domain holding every node, walking down the levels. O(nodes x depth).
Index common_domain(const topo::Cluster &c, const std::vector<Pick> &picks)
{
	Index common = topo::none;
	for (unsigned l = 0; l < c.levels; l++) {
		Index a = c.ancestor(picks.front().node, l);
		if (a == topo::none)
			break;
		for (const Pick &p : picks)
			if (c.ancestor(p.node, l) != a)
				return common;
		common = a;
	}
	return common;
}

template <typename T>
size_t distinct(std::vector<T> v)
{
	std::sort(v.begin(), v.end());
	return static_cast<size_t>(std::unique(v.begin(), v.end()) - v.begin());
}

} // namespace

Score score_picks(const Filter &f, const Weights &w, const std::vector<Pick> &picks)
{
	Score sc;
	if (picks.empty())
		return sc;
	const topo::Cluster &c = f.c;
	const State &s = f.s;
	sc.common = common_domain(c, picks);
	int deepest = c.levels > 0 ? c.levels - 1 : 0;
	sc.level = sc.common == topo::none ? -1 : c.domains[sc.common].level;
	sc.height = sc.common == topo::none ? deepest + 1 : deepest - sc.level;

	std::vector<Index> leaves, nvls;
	uint64_t classes = 0;
	for (const Pick &p : picks) {
		const topo::Node &n = c.nodes[p.node];
		leaves.push_back(n.leaf);
		if (n.nvlink_domain != topo::none)
			nvls.push_back(n.nvlink_domain);
		classes |= class_bit(n.perf_class);
		if (f.want_class >= 0 && n.perf_class != f.want_class)
			sc.faster_nodes++;
		if (s.suspect(p.node))
			sc.suspect_nodes++;
		sc.health += 1.0 - s.health(p.node);
		if (s.idle(p.node) && p.gpus > 0 && p.gpus < s.total_gpus(p.node))
			sc.idle_nodes_broken++;
	}
	sc.leaves = static_cast<int>(distinct(leaves));
	sc.nvlink_domains = static_cast<int>(distinct(nvls));
	sc.classes = std::popcount(classes);

	// Per leaf the gang uses: its link degradation, and whether the gang
	// takes only part of a fully idle leaf.
	std::sort(leaves.begin(), leaves.end());
	for (size_t i = 0; i < leaves.size();) {
		size_t j = i;
		while (j < leaves.size() && leaves[j] == leaves[i])
			j++;
		Index l = leaves[i];
		sc.link_degradation += s.link_degradation(l); // once per leaf the gang uses
		if (l != topo::none && c.domains[l].children.empty()) {
			const Capacity &k = s.domain(l);
			bool idle = k.idle == c.domains[l].node_count();
			bool all = static_cast<Index>(j - i) == c.domains[l].node_count();
			if (all && !f.whole)
				for (const Pick &p : picks)
					if (c.nodes[p.node].leaf == l && p.gpus < s.total_gpus(p.node))
						all = false;
			if (idle && !all)
				sc.idle_leaves_broken++;
		}
		i = j;
	}

	Index dom = sc.common == topo::none ? f.root : sc.common;
	int64_t taken = f.per_node ? static_cast<int64_t>(picks.size()) : f.need;
	if (f.sub_node()) // room left in GPUs, as nodes
		sc.stranded = static_cast<double>(s.domain(dom).free_gpus - taken * f.gpn) / f.max_gpn;
	else
		sc.stranded = f.in_nodes(std::max<int64_t>(0, f.bound(dom) - taken));
	sc.load = s.domain(dom).occupancy();

	sc.locality = w.level * sc.height + w.leaf * std::max(0, sc.leaves - 1) +
		      w.nvlink * std::max(0, sc.nvlink_domains - 1);
	sc.fragmentation = w.idle_node * sc.idle_nodes_broken + w.idle_leaf * sc.idle_leaves_broken +
			   w.stranded * std::max(0.0, sc.stranded);
	sc.class_penalty = w.faster_class * sc.faster_nodes + w.mixed_class * std::max(0, sc.classes - 1);
	sc.health_penalty = w.suspect * sc.suspect_nodes + w.health * sc.health;
	// Inside one leaf (a non-blocking switch) or NVLink domain the gang shares no
	// uplink: load only counts for gangs across leaves.
	sc.load_penalty = sc.height > 0 ? w.load(f.r.comm) * sc.load : 0;
	sc.link_penalty = w.link(f.r.comm) * sc.link_degradation;
	sc.total = sc.locality + sc.fragmentation + sc.class_penalty + sc.health_penalty + sc.load_penalty +
		   sc.link_penalty;
	return sc;
}

namespace {

std::string domain_name(const Filter &f, Index d)
{
	if (d == topo::none || d == f.root)
		return "the whole cluster";
	const topo::Domain &dom = f.c.domains[d];
	return f.c.kinds.name(dom.kind) + " " + dom.name;
}

void diff(std::string &s, const char *what, double mine, double theirs)
{
	if (mine - theirs > 1e-9)
		s += strprintf("%s%s +%.1f", s.empty() ? "" : ", ", what, mine - theirs);
}

} // namespace

std::string explain_candidate(const Filter &f, const Candidate &c, const Candidate *chosen)
{
	const Score &sc = c.score;
	std::string s = strprintf("in %s: %zu node%s on %d lea%s", domain_name(f, sc.common).c_str(), c.nodes.size(),
				  c.nodes.size() == 1 ? "" : "s", sc.leaves, sc.leaves == 1 ? "f" : "ves");
	if (sc.nvlink_domains > 0)
		s += strprintf(", %d NVLink domain%s", sc.nvlink_domains, sc.nvlink_domains == 1 ? "" : "s");
	if (f.sub_node())
		s += sc.idle_nodes_broken ? strprintf("; starts %d idle node%s", sc.idle_nodes_broken,
						      sc.idle_nodes_broken == 1 ? "" : "s")
					  : "; on partially used nodes";
	if (sc.idle_leaves_broken)
		s += strprintf("; breaks %d idle lea%s", sc.idle_leaves_broken,
			       sc.idle_leaves_broken == 1 ? "f" : "ves");
	s += strprintf("; %.1f nodes' worth left free there", sc.stranded);
	if (f.want_class >= 0)
		s += sc.faster_nodes ? strprintf("; %d node%s of a faster class", sc.faster_nodes,
						 sc.faster_nodes == 1 ? "" : "s")
				     : "; class " + f.c.classes.name(static_cast<size_t>(f.want_class));
	else if (sc.classes > 1)
		s += strprintf("; mixes %d GPU classes", sc.classes);
	if (sc.suspect_nodes)
		s += strprintf("; %d suspect node%s", sc.suspect_nodes, sc.suspect_nodes == 1 ? "" : "s");
	if (f.r.comm == Comm::heavy && sc.height > 0)
		s += strprintf("; domain %.0f%% busy", sc.load * 100);
	if (sc.link_degradation > 0)
		s += strprintf("; degraded links (%.0f%% of a leaf's nodes)", sc.link_degradation * 100);
	if (f.prefer_level >= 0 && sc.level < f.prefer_level)
		s += "; wider than the preferred level";
	s += strprintf("; score %.1f", sc.total);
	if (chosen) {
		std::string d;
		diff(d, "locality", sc.locality, chosen->score.locality);
		diff(d, "fragmentation", sc.fragmentation, chosen->score.fragmentation);
		diff(d, "class", sc.class_penalty, chosen->score.class_penalty);
		diff(d, "health", sc.health_penalty, chosen->score.health_penalty);
		diff(d, "load", sc.load_penalty, chosen->score.load_penalty);
		diff(d, "links", sc.link_penalty, chosen->score.link_penalty);
		s += d.empty() ? " (ties with the chosen; ranked after it on tightness)" : " (worse: " + d + ")";
	}
	return s;
}

} // namespace loom::place
