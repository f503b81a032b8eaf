// Building one node set: best fit over child domains, then over NVLink
// domains inside a leaf, then over nodes; replanning when a domain turns out
// to offer less than its counts promised (nodes outside the allowed set).
#include "lib/place/search.hpp"

#include <algorithm>
#include <climits>
#include <map>

namespace loom::place {

std::vector<std::pair<size_t, int64_t>> plan_groups(const std::vector<Group> &groups, int64_t want)
{
	std::vector<std::pair<size_t, int64_t>> plan;
	std::vector<char> used(groups.size(), 0);
	int64_t clean = 0;
	bool linked = false;
	for (const Group &g : groups) {
		if (g.link > 0)
			linked = true;
		else
			clean += std::max<int64_t>(0, g.bound);
	}
	if (linked && clean >= want)
		for (size_t i = 0; i < groups.size(); i++)
			used[i] = groups[i].link > 0;
	while (want > 0) {
		// The tightest group that holds the rest, fewest penalties first.
		size_t best = SIZE_MAX;
		for (size_t i = 0; i < groups.size(); i++) {
			if (used[i] || groups[i].bound < want)
				continue;
			if (best == SIZE_MAX || groups[i].penalty < groups[best].penalty ||
			    (groups[i].penalty == groups[best].penalty && groups[i].bound < groups[best].bound))
				best = i;
		}
		if (best != SIZE_MAX) {
			plan.emplace_back(best, want);
			return plan;
		}
		// Else the largest group.
		for (size_t i = 0; i < groups.size(); i++) {
			if (used[i] || groups[i].bound <= 0)
				continue;
			if (best == SIZE_MAX || groups[i].bound > groups[best].bound ||
			    (groups[i].bound == groups[best].bound && groups[i].penalty < groups[best].penalty))
				best = i;
		}
		if (best == SIZE_MAX)
			break;
		used[best] = 1;
		plan.emplace_back(best, groups[best].bound);
		want -= groups[best].bound;
	}
	return plan;
}

namespace {

// Marks of the nodes in the current build, by epoch: no clearing per build.
thread_local std::vector<uint32_t> t_mark;
thread_local uint32_t t_epoch = 0;

} // namespace

Gatherer::Gatherer(const Filter &f, const Weights &w) : f_(f), w_(w)
{
	if (t_mark.size() < f.c.nodes.size())
		t_mark.assign(f.c.nodes.size(), 0);
	reset();
}

void Gatherer::reset()
{
	if (++t_epoch == 0) {
		std::fill(t_mark.begin(), t_mark.end(), 0);
		t_epoch = 1;
	}
}

void Gatherer::mark(Index n) { t_mark[static_cast<size_t>(n)] = t_epoch; }
bool Gatherer::marked(Index n) const { return t_mark[static_cast<size_t>(n)] == t_epoch; }

bool Gatherer::node_before(const Fit &a, const Fit &b) const
{
	const State &s = f_.s;
	if (s.suspect(a.node) != s.suspect(b.node))
		return !s.suspect(a.node);
	if (f_.sub_node() && s.free_gpus(a.node) != s.free_gpus(b.node))
		return s.free_gpus(a.node) < s.free_gpus(b.node); // partially used nodes first
	if (!f_.per_node && a.units != b.units)
		return a.units > b.units; // largest first: fewest nodes
	if (s.health(a.node) != s.health(b.node))
		return s.health(a.node) > s.health(b.node);
	return a.node < b.node;
}

int64_t Gatherer::take(std::vector<Fit> &fit, int64_t want, std::vector<Pick> &out)
{
	auto pick = [&](const Fit &x, int64_t units) {
		mark(x.node);
		int gpus = f_.whole ? f_.s.total_gpus(x.node) : f_.per_node ? f_.gpn : static_cast<int>(units);
		out.push_back(Pick{x.node, gpus});
	};
	if (!f_.per_node) {
		std::sort(fit.begin(), fit.end(), [this](const Fit &a, const Fit &b) { return node_before(a, b); });
		int64_t got = 0;
		std::vector<char> used(fit.size(), 0);
		while (got < want) {
			int64_t rem = want - got;
			size_t best = SIZE_MAX;
			for (size_t i = 0; i < fit.size(); i++) // the tightest healthy node for the rest
				if (!used[i] && fit[i].units >= rem && !f_.s.suspect(fit[i].node) &&
				    (best == SIZE_MAX || fit[i].units < fit[best].units))
					best = i;
			for (size_t i = 0; best == SIZE_MAX && i < fit.size(); i++) // else the next largest
				if (!used[i])
					best = i;
			if (best == SIZE_MAX)
				break;
			used[best] = 1;
			int64_t u = std::min(rem, fit[best].units);
			pick(fit[best], f_.whole ? fit[best].units : u);
			got += u;
		}
		return got;
	}
	// Per-node: best fit over the NVLink domains present, then the best nodes in each.
	std::sort(fit.begin(), fit.end(), [this](const Fit &a, const Fit &b) {
		if (a.nvl != b.nvl)
			return a.nvl < b.nvl;
		return node_before(a, b);
	});
	std::vector<size_t> start;
	std::vector<Group> groups;
	for (size_t i = 0; i < fit.size(); i++) {
		if (i == 0 || fit[i].nvl != fit[i - 1].nvl) {
			start.push_back(i);
			groups.push_back(Group{0, 0, 0});
		}
		groups.back().bound++;
		if (f_.s.suspect(fit[i].node))
			groups.back().penalty += w_.suspect;
	}
	int64_t got = 0;
	if (groups.size() == 1) {
		for (size_t i = 0; i < fit.size() && got < want; i++, got++)
			pick(fit[i], 1);
		return got;
	}
	for (auto [g, n] : plan_groups(groups, want))
		for (int64_t k = 0; k < n; k++, got++)
			pick(fit[start[g] + static_cast<size_t>(k)], 1);
	return got;
}

int64_t Gatherer::nodes(const Index *list, size_t count, int64_t want, std::vector<Pick> &out)
{
	scratch_.clear();
	for (size_t i = 0; i < count; i++) {
		Index n = list[i];
		nodes_examined++;
		if (!marked(n) && f_.fits(n))
			scratch_.push_back(Fit{n, f_.units(n), f_.c.nodes[n].nvlink_domain});
	}
	std::vector<Fit> fit;
	fit.swap(scratch_);
	int64_t got = take(fit, want, out);
	fit.swap(scratch_);
	return got;
}

int64_t Gatherer::range(Index begin, Index end, int64_t want, std::vector<Pick> &out)
{
	scratch_.clear();
	for (Index n = begin; n < end; n++) {
		nodes_examined++;
		if (!marked(n) && f_.fits(n))
			scratch_.push_back(Fit{n, f_.units(n), f_.c.nodes[n].nvlink_domain});
	}
	std::vector<Fit> fit;
	fit.swap(scratch_);
	int64_t got = take(fit, want, out);
	fit.swap(scratch_);
	return got;
}

int64_t Gatherer::domain(Index d, int64_t want, std::vector<Pick> &out)
{
	domains_examined++;
	const std::vector<Index> &kids = f_.children(d);
	bool is_root = d == f_.root;
	if (kids.empty()) {
		if (is_root)
			return nodes(f_.loose.data(), f_.loose.size(), want, out);
		const topo::Domain &dom = f_.c.domains[d];
		return range(dom.node_begin, dom.node_end, want, out);
	}
	std::vector<Group> groups;
	groups.reserve(kids.size() + 1);
	for (Index k : kids) {
		const Capacity &cap = f_.s.domain(k);
		double link = f_.c.domains[k].children.empty() ? w_.link(f_.r.comm) * f_.s.link_degradation(k) : 0;
		groups.push_back(Group{f_.bound(k), w_.suspect * cap.suspect + link, link});
	}
	// Nodes attached to this domain itself (or to no domain, at the root).
	size_t direct = is_root ? f_.loose.size()
				: static_cast<size_t>(f_.c.domains[d].direct_end - f_.c.domains[d].node_begin);
	if (direct > 0)
		groups.push_back(Group{static_cast<int64_t>(direct) * (f_.per_node ? 1 : f_.max_gpn), 0, 0});
	int64_t got = 0;
	while (got < want) {
		auto plan = plan_groups(groups, want - got);
		if (plan.empty())
			break;
		for (auto [g, n] : plan) {
			int64_t took;
			if (g < kids.size())
				took = domain(kids[g], n, out);
			else if (is_root)
				took = nodes(f_.loose.data(), f_.loose.size(), n, out);
			else
				took = range(f_.c.domains[d].node_begin, f_.c.domains[d].direct_end, n, out);
			got += took;
			groups[g].bound = took < n ? 0 : groups[g].bound - took;
		}
	}
	return got;
}

void rank_order(const topo::Cluster &c, std::vector<Pick> &picks)
{
	// An NVLink domain's nodes stay together, placed where its first leaf is.
	std::map<Index, Index> first_leaf;
	for (const Pick &p : picks) {
		Index v = c.nodes[p.node].nvlink_domain;
		if (v == topo::none)
			continue;
		auto [it, fresh] = first_leaf.emplace(v, c.nodes[p.node].leaf);
		if (!fresh)
			it->second = std::min(it->second, c.nodes[p.node].leaf);
	}
	auto key = [&](const Pick &p) {
		const topo::Node &n = c.nodes[p.node];
		Index group = n.nvlink_domain == topo::none ? n.leaf : first_leaf[n.nvlink_domain];
		return std::make_tuple(group, n.nvlink_domain, n.leaf, p.node);
	};
	std::sort(picks.begin(), picks.end(), [&](const Pick &a, const Pick &b) { return key(a) < key(b); });
}

} // namespace loom::place
