// The baseline: Slurm topology/tree's greedy choice (_eval_nodes_topo), for
// comparison. It sees the nodes Slurm's earlier filters leave (those that can
// run the job at all) and judges by node counts only: the lowest switch that
// holds enough nodes (fewest nodes on ties), then leaves one by one, nearest
// to those already chosen first, then the tightest leaf that holds the rest
// (else the largest), nodes in order within a leaf. It does not prefer
// partially used nodes, tight GPU fits, healthy nodes or whole blocks.
#include "lib/place/search.hpp"

#include "lib/util/log.hpp"

#include <algorithm>
#include <exception>

namespace loom::place {

namespace {

// Usable capacity under each switch (units of the request) and each switch's
// height; the leaves (switches with nodes of their own) in tree order.
struct Counts {
	std::vector<int64_t> count;
	std::vector<int> height;
	std::vector<Index> leaves;
};

Counts count_usable(const Filter &f, Decision &d)
{
	const topo::Cluster &c = f.c;
	Counts k{std::vector<int64_t>(c.domains.size(), 0), std::vector<int>(c.domains.size(), 0), {}};
	for (size_t i = c.domains.size(); i-- > 0;) { // children come after parents: go backwards
		const topo::Domain &dom = c.domains[i];
		for (Index n = dom.node_begin; n < dom.direct_end; n++) {
			d.nodes_examined++;
			if (f.fits(n))
				k.count[i] += f.units(n);
		}
		if (dom.direct_end > dom.node_begin)
			k.leaves.push_back(static_cast<Index>(i));
		if (dom.parent != topo::none) {
			k.count[dom.parent] += k.count[i];
			k.height[dom.parent] = std::max(k.height[dom.parent], k.height[i] + 1);
		}
	}
	std::reverse(k.leaves.begin(), k.leaves.end());
	return k;
}

// The lowest switch that holds enough, fewest units on ties; none if none does.
Index top_switch(const Filter &f, const Counts &k, Decision &d)
{
	Index top = topo::none;
	for (size_t i = 0; i < f.c.domains.size(); i++) {
		d.domains_examined++;
		if (k.count[i] < f.need)
			continue;
		if (top == topo::none || k.height[i] < k.height[top] ||
		    (k.height[i] == k.height[top] && k.count[i] < k.count[top]))
			top = static_cast<Index>(i);
	}
	return top;
}

// The next leaf: nearest to those chosen (switch hops), then the tightest
// that holds the rest 'rem', else the largest; none when no leaf is left.
Index next_leaf(const topo::Cluster &c, const Counts &k, const std::vector<Index> &under,
		const std::vector<Index> &chosen, int64_t rem)
{
	auto hops = [&](Index a, Index b) {
		Index m = c.common_domain(c.domains[a].node_begin, c.domains[b].node_begin);
		int lvl = m == topo::none ? -1 : c.domains[m].level;
		return (c.domains[a].level - lvl) + (c.domains[b].level - lvl);
	};
	const std::vector<int64_t> &count = k.count;
	Index best = topo::none;
	int best_dist = 0;
	for (Index l : under) {
		if (count[l] <= 0 || std::find(chosen.begin(), chosen.end(), l) != chosen.end())
			continue;
		int dist = 0;
		for (Index o : chosen)
			dist += hops(l, o);
		bool better;
		if (best == topo::none || dist < best_dist)
			better = true;
		else if (dist > best_dist)
			better = false;
		else if (count[l] >= rem)
			better = count[best] < rem || count[l] < count[best];
		else
			better = count[best] < rem && count[l] > count[best];
		if (better) {
			best = l;
			best_dist = dist;
		}
	}
	return best;
}

Decision baseline(const Filter &f, const Weights &w)
{
	const topo::Cluster &c = f.c;
	Decision d;
	Counts k = count_usable(f, d);
	Index top = top_switch(f, k, d);
	if (top == topo::none) {
		d.reason = "no switch has enough usable nodes";
		return d;
	}
	const topo::Domain &t = c.domains[top];
	std::vector<Index> under, chosen;
	for (Index l : k.leaves)
		if (c.domains[l].node_begin >= t.node_begin && c.domains[l].node_end <= t.node_end && k.count[l] > 0)
			under.push_back(l);
	std::vector<Pick> picks;
	int64_t rem = f.need;
	while (rem > 0) {
		Index best = next_leaf(c, k, under, chosen, rem);
		if (best == topo::none)
			break;
		chosen.push_back(best);
		const topo::Domain &leaf = c.domains[best];
		for (Index n = leaf.node_begin; n < leaf.direct_end && rem > 0; n++) {
			if (!f.fits(n))
				continue;
			int64_t u = std::min(rem, f.units(n));
			int gpus = f.whole ? f.s.total_gpus(n) : f.per_node ? f.gpn : static_cast<int>(u);
			picks.push_back(Pick{n, gpus});
			rem -= u;
		}
	}
	if (rem > 0) {
		d.reason = "not enough usable nodes under the top switch";
		return d;
	}
	rank_order(c, picks);
	Candidate cand;
	for (const Pick &p : picks) {
		cand.nodes.push_back(p.node);
		cand.gpus.push_back(p.gpus);
	}
	cand.score = score_picks(f, w, picks);
	cand.why = "baseline (Slurm topology/tree): " + explain_candidate(f, cand, nullptr);
	d.candidates.push_back(std::move(cand));
	return d;
}

} // namespace

expected<Decision> place_baseline(const State &state, const Request &request, const Allowed *allowed,
				  const Weights &weights)
{
	try {
		if (auto st = check_request(request); !st)
			return unexpected(st.error());
		if (allowed && allowed->size() != state.node_count())
			return unexpected("allowed set does not match the cluster");
		Filter f(state, request, allowed);
		if (auto st = resolve(f, weights); !st)
			return unexpected(st.error());
		if (state.cluster().domains.empty())
			return unexpected("the baseline needs a switch tree");
		Decision d = baseline(f, weights);
		d.class_pass = 1;
		return d;
	} catch (const std::exception &e) {
		return unexpected(std::string("baseline failed: ") + e.what());
	} catch (...) {
		return unexpected("baseline failed: unknown exception");
	}
}

} // namespace loom::place
