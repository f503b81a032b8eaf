// The GPU classes a request may take and the order to try them in, above
// the search (engine.cpp's search_gang): a tier's plan (tiers.hpp), a value
// tier's wait for a cheaper class or off-peak hours, a gang that spans
// classes; and the prices of what the search chose.
#include "lib/place/engine.hpp"
#include "lib/place/search.hpp"
#include "lib/place/tiers.hpp"

#include "lib/util/fs.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/log.hpp"

#include <algorithm>
#include <ctime>
#include <optional>
#include <set>

namespace loom::place {

namespace {

int minute_now(const Weights &w)
{
	if (w.clock_minute >= 0)
		return w.clock_minute % 1440;
	time_t t = time(nullptr);
	struct tm lt;
	if (!localtime_r(&t, &lt))
		return 0;
	return lt.tm_hour * 60 + lt.tm_min;
}

// Could the nodes of class 'id' that this job may use ever hold its gang,
// were they all free? (Up nodes, the allowed set, its exclude list, GPUs per
// node; not the domains: a strict locality may still refuse it.)
bool class_could_hold(const State &state, const Request &request, const Allowed *allowed, Index id)
{
	const topo::Cluster &c = state.cluster();
	std::vector<Index> excluded;
	for (const std::string &entry : request.exclude)
		if (auto names = hostlist_expand(entry, c.nodes.size() + 1))
			for (const std::string &name : *names)
				if (Index n = c.find_node(name); n != topo::none)
					excluded.push_back(n);
	std::sort(excluded.begin(), excluded.end());
	int gpn = request.gpus_per_node > 0 ? request.gpus_per_node : 1;
	int64_t nodes = 0, gpus = 0;
	for (Index n = 0; static_cast<size_t>(n) < state.node_count(); n++) {
		if (c.nodes[static_cast<size_t>(n)].perf_class != id || !state.available(n) ||
		    (allowed && !allowed->test(n)) || std::binary_search(excluded.begin(), excluded.end(), n))
			continue;
		if (state.total_gpus(n) < gpn)
			continue;
		nodes++;
		gpus += state.total_gpus(n);
	}
	if (request.gpus > 0 && request.gpus_per_node == 0)
		return nodes >= request.min_nodes && gpus >= request.gpus;
	return nodes >= request.min_nodes;
}

// The job's gang on one class (class_mask 0: its own class, by name).
expected<Decision> place_on(const State &state, const Request &request, const Allowed *allowed, const Weights &weights,
			    int max_candidates, const std::string &cls)
{
	Request r = request;
	r.need = {};
	r.gpu_class = cls;
	r.allow_faster_class = false;
	return search_gang(state, r, allowed, weights, max_candidates);
}

std::string minutes_words(int64_t seconds)
{
	int64_t m = (seconds + 59) / 60;
	return m < 120 ? strprintf("%lld min", static_cast<long long>(m))
		       : strprintf("%.1f h", static_cast<double>(seconds) / 3600);
}

// One need's planning: the classes in the tier's order, the decision as it
// is being made, and the work of every search it ran.
struct NeedPlan {
	const State &state;
	const Request &request;
	const Allowed *allowed;
	const Weights &weights;
	int max_candidates;
	const TierTable &tiers;
	int minute;
	double run_minutes;
	TierPlan plan;
	Decision out;

	// Its work added to every search's before it: a decision reports all.
	void add_work(Decision &d)
	{
		out.domains_examined += d.domains_examined;
		out.nodes_examined += d.nodes_examined;
		d.domains_examined = out.domains_examined;
		d.nodes_examined = out.nodes_examined;
	}
	// The first eligible class of 'p' that could ever hold the gang.
	const ClassOption *first_that_could_hold(const TierPlan &p) const
	{
		const topo::Cluster &c = state.cluster();
		for (size_t i = 0; i < p.eligible; i++) {
			Index id = c.classes.find(p.options[i].name);
			if (id != topo::none && class_could_hold(state, request, allowed, id))
				return &p.options[i];
		}
		return nullptr;
	}
	Decision waiting(const std::string &what)
	{
		out.waiting = what;
		out.reason = "value tier: waiting for " + out.waiting;
		return out;
	}
};

// A value tier that may wait for off-peak hours: the decision to wait when
// the cheapest class that could ever hold the gang is at least 1% cheaper
// per unit of work then; nullopt to go on.
std::optional<Decision> wait_for_offpeak(NeedPlan &p, const ClassOption &best)
{
	int to_off = p.tiers.minutes_to_offpeak(p.minute);
	if (to_off <= 0 || static_cast<int64_t>(to_off) * 60 > p.request.may_wait_s)
		return std::nullopt;
	auto later = plan_tier(p.tiers, p.request.need, p.minute + to_off, p.run_minutes, p.weights.balance_time);
	// The first class then that could hold the gang and has a cost per unit
	// of work (an unpriced one, < 0, is passed over).
	const ClassOption *then = nullptr;
	const topo::Cluster &c = p.state.cluster();
	for (size_t i = 0; later && i < later->eligible && (!then || then->cost_per_work < 0); i++) {
		Index id = c.classes.find(later->options[i].name);
		if (id != topo::none && class_could_hold(p.state, p.request, p.allowed, id))
			then = &later->options[i];
	}
	if (!then || then->cost_per_work <= 0 || then->cost_per_work >= best.cost_per_work * 0.99)
		return std::nullopt;
	return p.waiting(strprintf(
		"off-peak hours in %s (%s %.3g/work over the run, %s %.3g/work now); waits up to %s more",
		minutes_words(static_cast<int64_t>(to_off) * 60).c_str(), then->name.c_str(), then->cost_per_work,
		best.name.c_str(), best.cost_per_work, minutes_words(p.request.may_wait_s).c_str()));
}

// A value tier with time to wait (request.may_wait_s, Weights::value_wait):
// its target is the cheapest eligible class that could ever hold the gang,
// now or at the next off-peak start; it waits for it rather than take a
// dearer one. nullopt when no class could ever hold it (the tier's order then).
std::optional<expected<Decision>> place_value_waiting(NeedPlan &p)
{
	const ClassOption *best = p.first_that_could_hold(p.plan);
	if (!best)
		return std::nullopt;
	if (auto w = wait_for_offpeak(p, *best))
		return *w;
	auto d = place_on(p.state, p.request, p.allowed, p.weights, p.max_candidates, best->name);
	if (!d)
		return unexpected(d.error());
	p.add_work(*d);
	if (d->placed()) {
		d->gpu_class = best->name;
		d->tier = p.out.tier + "; chose " + best->name;
		return d;
	}
	return p.waiting(strprintf("%s (cheapest per unit of work, %s now); waits up to %s more", best->name.c_str(),
				   d->reason.c_str(), minutes_words(p.request.may_wait_s).c_str()));
}

// No one class holds it: a gang that may span classes (--gpu-mixed) takes
// the eligible ones together (mixed_class keeps them few).
expected<Decision> place_mixed(NeedPlan &p, uint64_t mask, std::string &tried)
{
	Request r = p.request;
	r.need = {};
	r.gpu_class.clear();
	r.allow_faster_class = false;
	auto d = search_gang(p.state, r, p.allowed, p.weights, p.max_candidates, mask);
	if (!d)
		return unexpected(d.error());
	p.add_work(*d);
	if (!d->placed()) {
		tried += "; together: " + d->reason;
		return p.out;
	}
	const topo::Cluster &c = p.state.cluster();
	std::set<std::string> used;
	for (Index n : d->candidates.front().nodes)
		used.insert(c.classes.name(c.nodes[static_cast<size_t>(n)].perf_class));
	d->gpu_class = join(std::vector<std::string>(used.begin(), used.end()), "+");
	d->tier = p.out.tier + "; chose " + d->gpu_class + " together (--gpu-mixed; " + tried + ")";
	return d;
}

// The eligible classes in the tier's order: the first that holds the whole
// gang now, then (--gpu-mixed) all of them together.
expected<Decision> place_in_order(NeedPlan &p)
{
	const topo::Cluster &c = p.state.cluster();
	std::string tried;
	uint64_t mask = 0;
	for (size_t i = 0; i < p.plan.eligible; i++) {
		const ClassOption &o = p.plan.options[i];
		std::string note = "no nodes of this class";
		if (Index id = c.classes.find(o.name); id != topo::none) {
			mask |= class_bit(static_cast<uint16_t>(id));
			auto d = place_on(p.state, p.request, p.allowed, p.weights, p.max_candidates, o.name);
			if (!d)
				return unexpected(d.error());
			p.add_work(*d);
			if (d->placed()) {
				d->gpu_class = o.name;
				d->tier = p.out.tier + "; chose " + o.name + (tried.empty() ? "" : " (" + tried + ")");
				return d;
			}
			note = d->reason;
		}
		tried += (tried.empty() ? "" : "; ") + o.name + ": " + note;
	}
	if (p.request.need.mixed && mask && p.plan.eligible > 1) {
		auto d = place_mixed(p, mask, tried);
		if (!d || d->placed())
			return d;
	}
	p.out.reason = p.plan.eligible == 0 ? "no GPU class meets the job's need: " + p.out.tier
					    : "no eligible class holds the whole gang now: " + tried;
	return p.out;
}

// A need (tier, min_class, gpu_mem): the plan of classes, then the search
// on each in turn (place_value_waiting, place_in_order).
expected<Decision> place_need(const State &state, const Request &request, const Allowed *allowed,
			      const Weights &weights, int max_candidates)
{
	if (!weights.tiers || weights.tiers->empty())
		return unexpected("tier", "this cluster defines no GPU classes (gpu_class.NAME= in loom-topo.conf)");
	const TierTable &t = *weights.tiers;
	int minute = minute_now(weights);
	double run_minutes = request.limit_s > 0 ? static_cast<double>(request.limit_s) / 60 : 0;
	auto plan = plan_tier(t, request.need, minute, run_minutes, weights.balance_time);
	if (!plan)
		return unexpected(plan.error());
	NeedPlan p{state, request, allowed, weights, max_candidates, t, minute, run_minutes, std::move(*plan), {}};
	p.out.tier = describe_plan(p.plan);
	if (p.plan.objective == Objective::value && request.may_wait_s > 0)
		if (auto d = place_value_waiting(p))
			return *d;
	return place_in_order(p);
}

} // namespace

int minute_of_day(const Weights &w) { return minute_now(w); }

double set_price(const topo::Cluster &c, const TierTable &t, int minute, Candidate &cand)
{
	double sum = 0;
	for (size_t i = 0; i < cand.nodes.size(); i++) {
		const topo::Node &n = c.nodes[static_cast<size_t>(cand.nodes[i])];
		const PerfClass *pc = n.perf_class ? t.find_class(c.classes.name(n.perf_class)) : nullptr;
		if (!pc || pc->price <= 0) {
			cand.price_per_h = -1;
			return -1;
		}
		sum += t.price_at(*pc, minute) * (i < cand.gpus.size() ? cand.gpus[i] : 0);
	}
	cand.price_per_h = sum;
	return sum;
}

double run_cost(const topo::Cluster &c, const TierTable &t, const std::vector<Index> &nodes,
		const std::vector<int> &gpus, int minute, double minutes)
{
	double sum = 0;
	for (size_t i = 0; i < nodes.size(); i++) {
		const topo::Node &n = c.nodes[static_cast<size_t>(nodes[i])];
		const PerfClass *pc = n.perf_class ? t.find_class(c.classes.name(n.perf_class)) : nullptr;
		if (!pc || pc->price <= 0)
			return -1;
		sum += t.price_over(*pc, minute, minutes) * (i < gpus.size() ? gpus[i] : 0);
	}
	return sum * minutes / 60;
}

expected<Decision> place(const State &state, const Request &request, const Allowed *allowed, const Weights &weights,
			 int max_candidates)
{
	auto d = request.need.given() ? place_need(state, request, allowed, weights, max_candidates)
				      : search_gang(state, request, allowed, weights, max_candidates);
	if (d && weights.tiers && !weights.tiers->empty()) {
		int minute = minute_now(weights);
		for (Candidate &cand : d->candidates)
			(void)set_price(state.cluster(), *weights.tiers, minute, cand);
	}
	return d;
}

} // namespace loom::place
