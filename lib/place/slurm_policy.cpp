#include "lib/place/slurm_policy.hpp"

#include "lib/place/search.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/log.hpp"

#include <algorithm>

namespace loom::place {

void note_required(SlurmPolicies &p, size_t required, uint32_t max_nodes, uint32_t req_nodes, bool gpu_total)
{
	uint32_t aim = req_nodes > 0 && req_nodes < max_nodes ? req_nodes : max_nodes;
	p.required_all = required > 0 && required >= aim;
	p.required_gpus = required > 0 && gpu_total;
}

std::string step_aside_for(const SlurmPolicies &p)
{
	// Each asks for a shape that is not the tightest one (spreading, an order
	// of nodes, load levelling) or leaves nothing to choose. The engine's
	// choice would break what Slurm promises for them, so cons_tres chooses
	// from every node offered.
	if (p.spread_job)
		return "--spread-job";
	if (p.contiguous)
		return "--contiguous";
	if (p.least_loaded)
		return "partition LLN";
	if (p.select_lln)
		return "SelectTypeParameters LLN";
	if (p.whole_topo)
		return "--exclusive=topo";
	if (p.segment)
		return "--segment";
	if (p.required_all)
		return "--nodelist naming every node of the job";
	if (p.required_gpus)
		return "--nodelist with a GPU total (--gpus)";
	return {};
}

namespace {

bool per_node(const Request &r) { return r.gpus == 0; }

// The lowest common domain of these nodes, and its ancestors up to the root
// (topo::none stands for the whole cluster, last).
std::vector<Index> enclosing_domains(const topo::Cluster &c, const std::vector<Index> &nodes)
{
	std::vector<Index> out;
	Index d = nodes.empty() ? topo::none : c.nodes[static_cast<size_t>(nodes[0])].leaf;
	auto holds = [&](Index dom) {
		const topo::Domain &x = c.domains[static_cast<size_t>(dom)];
		return std::all_of(nodes.begin(), nodes.end(),
				   [&](Index n) { return n >= x.node_begin && n < x.node_end; });
	};
	while (d != topo::none && !holds(d))
		d = c.domains[static_cast<size_t>(d)].parent;
	for (; d != topo::none; d = c.domains[static_cast<size_t>(d)].parent)
		out.push_back(d);
	out.push_back(topo::none);
	return out;
}

std::string names_of(const topo::Cluster &c, const std::vector<Index> &nodes)
{
	std::vector<std::string> v;
	for (Index n : nodes)
		v.push_back(c.nodes[static_cast<size_t>(n)].name);
	return hostlist_compress(v);
}

// One node count (or a GPU total): the engine, with the required nodes in
// every candidate when there are any.
// 'label' names the required nodes in the note ("" = "required NODES").
expected<Within> place_required(const State &state, const Request &request, const Allowed &allowed,
				const std::vector<Index> &required, const std::string &label, const Weights &weights,
				int maxc)
{
	if (required.empty()) {
		auto d = place(state, request, &allowed, weights, maxc);
		if (!d)
			return unexpected(d.error());
		return Within{std::move(*d), ""};
	}
	const topo::Cluster &c = state.cluster();
	int r = static_cast<int>(required.size());
	Request rest = request;
	rest.min_nodes = std::max(1, request.min_nodes - r);
	rest.max_nodes = request.max_nodes > 0 ? std::max(rest.min_nodes, request.max_nodes - r) : 0;
	if (rest.max_nodes == rest.min_nodes)
		rest.max_nodes = 0;
	Decision last;
	for (Index dom : enclosing_domains(c, required)) {
		Allowed inside(state.node_count());
		Index b = dom == topo::none ? 0 : c.domains[static_cast<size_t>(dom)].node_begin;
		Index e = dom == topo::none ? static_cast<Index>(c.nodes.size())
					    : c.domains[static_cast<size_t>(dom)].node_end;
		for (Index n = b; n < e; n++)
			if (allowed.test(n))
				inside.set(n);
		for (Index n : required)
			inside.set(n, false);
		if (inside.count() == 0)
			continue;
		auto d = place(state, rest, &inside, weights, maxc);
		if (!d)
			return unexpected(d.error());
		if (!d->placed()) {
			last = std::move(*d);
			continue;
		}
		// The whole gang: the required nodes and the engine's rest, scored
		// and explained as one.
		Allowed all = allowed;
		for (Index n : required)
			all.set(n);
		Filter f(state, request, &all);
		if (auto st = resolve(f, weights); !st)
			return unexpected(st.error());
		for (Candidate &cand : d->candidates) {
			std::vector<Pick> picks;
			for (Index n : required)
				picks.push_back(
					Pick{n, request.whole_node ? state.total_gpus(n) : request.gpus_per_node});
			for (size_t i = 0; i < cand.nodes.size(); i++)
				picks.push_back(Pick{cand.nodes[i], cand.gpus[i]});
			rank_order(c, picks);
			cand.nodes.clear();
			cand.gpus.clear();
			for (const Pick &p : picks) {
				cand.nodes.push_back(p.node);
				cand.gpus.push_back(p.gpus);
			}
			cand.score = score_picks(f, weights, picks);
		}
		for (size_t i = 0; i < d->candidates.size(); i++)
			d->candidates[i].why =
				(i == 0 ? "chosen: " : "runner-up: ") +
				explain_candidate(f, d->candidates[i], i == 0 ? nullptr : &d->candidates[0]);
		std::string where = dom == topo::none ? "the cluster" : c.domains[static_cast<size_t>(dom)].name;
		return Within{std::move(*d), "with " + (label.empty() ? "required " + names_of(c, required) : label) +
						     ", the rest within " + where};
	}
	if (last.reason.empty())
		last.reason = "no node offered besides the required " + names_of(c, required);
	return Within{std::move(last), ""};
}

// A node-count range of a per-node request: the largest count from the
// minimum up to Slurm's target that fits. Fitting is monotone in the count,
// so a binary search finds it.
expected<Within> place_sized(const State &state, const Request &request, const Allowed &allowed,
			     const SlurmConstraints &cons, const Weights &weights, int maxc,
			     const std::string &required_label = {})
{
	if (!per_node(request) || request.max_nodes <= request.min_nodes)
		return place_required(state, request, allowed, cons.required, required_label, weights, maxc);
	auto at = [&](int n) {
		Request r = request;
		r.min_nodes = n;
		r.max_nodes = 0;
		return place_required(state, r, allowed, cons.required, required_label, weights, maxc);
	};
	std::string range = std::to_string(request.min_nodes) + "-" + std::to_string(request.max_nodes);
	auto note = [&](Within &w, int n) {
		std::string s = std::to_string(n) + " of " + range + " nodes" +
				(cons.use_min_nodes ? " (--use-min-nodes)" : "");
		w.note = w.note.empty() ? s : s + ", " + w.note;
	};
	int target = cons.target_nodes > 0 ? std::clamp(cons.target_nodes, request.min_nodes, request.max_nodes)
					   : request.max_nodes;
	auto best = at(target);
	if (!best || best->decision.placed() || target == request.min_nodes) {
		if (best && best->decision.placed() && (target != request.min_nodes || cons.use_min_nodes))
			note(*best, target); // (no maximum given: nothing to say)
		return best;
	}
	auto low = at(request.min_nodes);
	if (!low || !low->decision.placed())
		return low;
	int lo = request.min_nodes, hi = target; // lo fits, hi does not
	Within fit = std::move(*low);
	while (hi - lo > 1) {
		int mid = lo + (hi - lo) / 2;
		auto m = at(mid);
		if (!m)
			return m;
		if (m->decision.placed()) {
			lo = mid;
			fit = std::move(*m);
		} else {
			hi = mid;
		}
	}
	note(fit, lo);
	return fit;
}

// Sizes and indices of the constraints against the cluster's.
status check_constraints(const State &state, const Allowed &allowed, const SlurmConstraints &cons)
{
	if (allowed.size() != state.node_count())
		return unexpected(
			strprintf("allowed set has %zu nodes, the cluster %zu", allowed.size(), state.node_count()));
	for (Index n : cons.required)
		if (n < 0 || static_cast<size_t>(n) >= state.node_count())
			return unexpected(strprintf("required node %d is not in the cluster", static_cast<int>(n)));
	if (!cons.weight.empty() && cons.weight.size() != state.node_count())
		return unexpected(strprintf("node weights for %zu nodes, the cluster has %zu", cons.weight.size(),
					    state.node_count()));
	return ok();
}

// Weight tiers among the offered nodes, lowest first.
std::vector<uint64_t> weight_tiers(const State &state, const Allowed &allowed, const SlurmConstraints &cons)
{
	std::vector<uint64_t> tiers;
	if (!cons.weight.empty()) {
		for (size_t n = 0; n < state.node_count(); n++)
			if (allowed.test(static_cast<Index>(n)))
				tiers.push_back(cons.weight[n]);
		std::sort(tiers.begin(), tiers.end());
		tiers.erase(std::unique(tiers.begin(), tiers.end()), tiers.end());
	}
	return tiers;
}

// What every step of place_within asks with.
struct Ask {
	const State &state;
	const Request &request;
	const SlurmConstraints &cons;
	const Weights &weights;
	int maxc;
};

// The offered nodes of weight up to 'w' (below: under it).
Allowed weighted(const Ask &a, const Allowed &allowed, uint64_t w, bool below)
{
	Allowed out(a.state.node_count());
	for (size_t n = 0; n < a.state.node_count(); n++)
		if (allowed.test(static_cast<Index>(n)) && (below ? a.cons.weight[n] < w : a.cons.weight[n] <= w))
			out.set(static_cast<Index>(n));
	return out;
}

// The lightest tier (with every lighter one) that holds the job, into t:
// fitting only grows with the set offered, so a binary search over the tiers
// finds it in O(log tiers) decisions however many distinct weights a site
// uses. Not placed (or an error) when not even all the tiers hold it.
expected<Within> lightest_tier(const Ask &a, const Allowed &allowed, const std::vector<uint64_t> &tiers, size_t &t)
{
	size_t lo = 0, hi = tiers.size() - 1;
	expected<Within> best =
		place_sized(a.state, a.request, weighted(a, allowed, tiers[hi], false), a.cons, a.weights, a.maxc);
	if (!best || !best->decision.placed())
		return best;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		auto m = place_sized(a.state, a.request, weighted(a, allowed, tiers[mid], false), a.cons, a.weights,
				     a.maxc);
		if (!m)
			return m;
		if (m->decision.placed()) {
			hi = mid;
			best = std::move(m);
		} else {
			lo = mid + 1;
		}
	}
	t = hi;
	return best;
}

// Above the first tier, as cons_tres: every node of the lighter tiers that
// can take its share is in the gang, and the engine chooses only the rest,
// around them. (Where that cannot hold, with --switches or a strict
// locality, 'best', the tightest placement over the tiers up to t, stands.)
expected<Within> around_lighter(const Ask &a, const Allowed &allowed, const std::vector<uint64_t> &tiers, size_t t,
				Within best)
{
	const State &state = a.state;
	const Request &request = a.request;
	Allowed lighter = weighted(a, allowed, tiers[t], true);
	Filter f(state, request, &lighter);
	if (auto st = resolve(f, a.weights); !st)
		return unexpected(st.error());
	NodeMask taken(state.node_count());
	for (Index n : a.cons.required)
		taken.set(n);
	SlurmConstraints first = a.cons;
	size_t added = 0;
	for (size_t n = 0; n < state.node_count() && static_cast<int>(first.required.size()) < request.node_limit();
	     n++)
		if (lighter.test(static_cast<Index>(n)) && !taken.test(static_cast<Index>(n)) &&
		    f.fits(static_cast<Index>(n))) {
			first.required.push_back(static_cast<Index>(n));
			added++;
		}
	if (added > 0 && static_cast<int>(first.required.size()) < request.node_limit()) {
		std::string label = "the lighter tiers' " + std::to_string(added) + " nodes" +
				    (a.cons.required.empty() ? "" : " and the required ones");
		auto forced = place_sized(state, request, weighted(a, allowed, tiers[t], false), first, a.weights,
					  a.maxc, label);
		if (!forced || forced->decision.placed())
			return forced;
	}
	return best;
}

} // namespace

expected<Within> place_within(const State &state, const Request &request, const Allowed &allowed,
			      const SlurmConstraints &cons, const Weights &weights, int max_candidates)
{
	if (auto st = check_constraints(state, allowed, cons); !st)
		return unexpected(st.error());
	std::vector<uint64_t> tiers = weight_tiers(state, allowed, cons);
	if (tiers.size() <= 1)
		return place_sized(state, request, allowed, cons, weights, max_candidates);
	Ask a{state, request, cons, weights, max_candidates};
	size_t t = 0;
	expected<Within> best = lightest_tier(a, allowed, tiers, t);
	if (!best || !best->decision.placed())
		return best;
	if (t > 0 && per_node(request)) {
		best = around_lighter(a, allowed, tiers, t, std::move(*best));
		if (!best)
			return best;
	}
	std::string s = "weight tier " + std::to_string(t + 1) + " of " + std::to_string(tiers.size());
	best->note = best->note.empty() ? s : s + ", " + best->note;
	return best;
}

} // namespace loom::place
