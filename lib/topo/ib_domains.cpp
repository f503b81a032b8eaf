// From the ibnetdiscover graph's switches and hosts to the fabric's switch
// levels, domains and rails (see ibnetdiscover.hpp, ib_graph.hpp).
#include "lib/topo/ib_graph.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>
#include <set>

namespace loom::topo {

namespace {

struct Uf {
	std::vector<size_t> p;
	explicit Uf(size_t n) : p(n) { std::iota(p.begin(), p.end(), 0); }
	size_t find(size_t x)
	{
		while (p[x] != x)
			x = p[x] = p[p[x]];
		return x;
	}
	void join(size_t a, size_t b) { p[find(a)] = find(b); }
};

// The domains as they are built, bottom-up, and where each leaf switch is.
struct Tree {
	const IbSwitches &sw;
	std::vector<DomainSpec> domains;
	std::map<std::string, size_t> domain_at; // name -> index in domains
	std::vector<std::string> dom_of_sw;      // current top domain of each leaf switch
	std::vector<std::string> lowest;         // the lowest domain of each leaf switch
	Uf uf;

	explicit Tree(const IbSwitches &s) : sw(s), dom_of_sw(s.dev.size()), lowest(s.dev.size()), uf(s.dev.size()) {}
	void add(DomainSpec d)
	{
		domain_at[d.name] = domains.size();
		domains.push_back(std::move(d));
	}
};

// Leaf switches joined through their hosts, by the group's root.
std::map<size_t, std::vector<size_t>> leaf_groups(Tree &t, const IbHosts &hosts)
{
	for (auto &[host, hcas] : hosts.hcas)
		for (const IbHca &h : hcas)
			t.uf.join(h.sw, hcas[0].sw);
	std::map<size_t, std::vector<size_t>> groups;
	for (size_t s = 0; s < t.sw.dev.size(); s++)
		if (t.sw.level[s] == 1)
			groups[t.uf.find(s)].push_back(s);
	return groups;
}

// A leaf that shares no host with another leaf is a domain; leaves joined
// through their hosts form one rail group (a domain the nodes hang on) and
// become its rails.
void leaf_domains(Tree &t, std::map<size_t, std::vector<size_t>> &groups, ClusterSpec &spec, size_t *rail_groups)
{
	const std::vector<std::string> &names = t.sw.names;
	for (auto &[root, leaves] : groups) {
		std::sort(leaves.begin(), leaves.end(), [&](size_t a, size_t b) { return names[a] < names[b]; });
		if (leaves.size() == 1) {
			size_t s = leaves[0];
			t.add(DomainSpec{names[s], "", "", 0, t.sw.where(s)});
			t.dom_of_sw[s] = t.lowest[s] = names[s];
			continue;
		}
		(*rail_groups)++;
		std::string gname = "railgroup-" + names[leaves[0]];
		t.add(DomainSpec{gname, "", "", 0, t.sw.where(leaves[0])});
		for (size_t k = 0; k < leaves.size(); k++) {
			spec.rails.push_back(
				RailSpec{names[leaves[k]], gname, static_cast<int>(k), 0, t.sw.where(leaves[k])});
			t.dom_of_sw[leaves[k]] = t.lowest[leaves[k]] = gname;
		}
	}
}

// Above the leaves: the domains joined through the switches of a level form
// one domain of that level, named after its first switch of that level; a
// level that joins nothing new is skipped (the top level never is).
void upper_domains(Tree &t, size_t prev_parts, const std::string &source)
{
	const IbSwitches &sw = t.sw;
	for (int L = 2; L <= sw.top_level; L++) {
		for (size_t s = 0; s < sw.dev.size(); s++)
			if (sw.level[s] >= 1 && sw.level[s] <= L)
				for (const IbPort &p : sw.ports(s))
					if (long u = sw.peer(p); u >= 0 && sw.level[u] >= 1 && sw.level[u] <= L)
						t.uf.join(s, static_cast<size_t>(u));
		std::map<size_t, std::vector<size_t>> parts; // root -> leaf switches
		for (size_t s = 0; s < sw.dev.size(); s++)
			if (sw.level[s] == 1)
				parts[t.uf.find(s)].push_back(s);
		if (parts.size() == prev_parts && L < sw.top_level)
			continue;
		prev_parts = parts.size();
		for (auto &[root, leaves] : parts) {
			std::string best;
			for (size_t s = 0; s < sw.dev.size(); s++)
				if (sw.level[s] == L && t.uf.find(s) == root && (best.empty() || sw.names[s] < best))
					best = sw.names[s];
			if (best.empty())
				best = t.dom_of_sw[leaves[0]] + "-up";
			t.add(DomainSpec{best, "", "", 0, source});
			std::set<std::string> kids;
			for (size_t s : leaves)
				kids.insert(t.dom_of_sw[s]);
			for (const std::string &k : kids)
				t.domains[t.domain_at[k]].parent = best;
			for (size_t s : leaves)
				t.dom_of_sw[s] = best;
		}
	}
}

// Uplink capacity of a domain: links from its switches to switches outside it.
void domain_uplinks(Tree &t)
{
	const IbSwitches &sw = t.sw;
	std::map<std::string, std::set<size_t>> span;
	for (size_t s = 0; s < sw.dev.size(); s++) {
		if (sw.level[s] != 1)
			continue;
		for (std::string d = t.lowest[s]; !d.empty(); d = t.domains[t.domain_at[d]].parent)
			span[d].insert(s);
	}
	for (auto &d : t.domains) {
		if (d.parent.empty())
			continue;
		const auto &mine = span[d.name];
		for (size_t s : mine)
			for (const IbPort &p : sw.ports(s))
				if (long u = sw.peer(p);
				    u >= 0 && sw.level[u] > 1 && !mine.count(static_cast<size_t>(u)))
					d.uplink_gbps += p.gbps;
	}
}

// Uplink capacity of each rail switch: its links to the levels above.
void rail_uplinks(const IbSwitches &sw, ClusterSpec &spec)
{
	std::map<std::string, size_t> rail_at;
	for (size_t r = 0; r < spec.rails.size(); r++)
		rail_at[spec.rails[r].name] = r;
	for (size_t s = 0; s < sw.dev.size(); s++) {
		auto it = rail_at.find(sw.names[s]);
		if (sw.level[s] != 1 || it == rail_at.end())
			continue;
		for (const IbPort &p : sw.ports(s))
			if (long u = sw.peer(p); u >= 0 && sw.level[u] > 1)
				spec.rails[it->second].uplink_gbps += p.gbps;
	}
}

} // namespace

size_t ib_switch_levels(IbSwitches &sw)
{
	std::deque<size_t> queue;
	size_t leaves = 0;
	for (size_t s = 0; s < sw.dev.size(); s++)
		if (sw.level[s] == 1) {
			queue.push_back(s);
			leaves++;
		}
	if (queue.empty())
		return 0;
	sw.top_level = 1;
	while (!queue.empty()) {
		size_t s = queue.front();
		queue.pop_front();
		for (const IbPort &p : sw.ports(s))
			if (long u = sw.peer(p); u >= 0 && sw.level[u] == 0) {
				sw.level[u] = sw.level[s] + 1;
				sw.top_level = std::max(sw.top_level, sw.level[u]);
				queue.push_back(static_cast<size_t>(u));
			}
	}
	return leaves;
}

std::vector<std::string> ib_domains(const IbSwitches &sw, const IbHosts &hosts, const std::string &source,
				    ClusterSpec &spec, size_t *rail_groups)
{
	Tree t(sw);
	std::map<size_t, std::vector<size_t>> groups = leaf_groups(t, hosts);
	leaf_domains(t, groups, spec, rail_groups);
	upper_domains(t, groups.size(), source);
	domain_uplinks(t);
	rail_uplinks(sw, spec);
	spec.domains = std::move(t.domains);
	return std::move(t.lowest);
}

} // namespace loom::topo
