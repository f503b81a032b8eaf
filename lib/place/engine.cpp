// The decision: the lowest level that holds the gang, the best domains there
// by their counts, candidates built and scored exactly, best first.
#include "lib/place/search.hpp"

#include "lib/util/fs.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/log.hpp"

#include <algorithm>
#include <exception>
#include <set>
#include <tuple>

namespace loom::place {

namespace {

constexpr size_t max_failed_builds = 64; // bounds the work when counts overstate (allowed sets)

struct Key {
	double penalty = 0;
	int bestfit = 0;          // sub-node jobs: fewest free GPUs on a fitting node
	double slack = 0;         // units left in the domain
	double load = 0;          // heavy gangs: occupancy, least loaded among the tightest
	int64_t parent_slack = 0; // units left in its parent: keep the next block up whole
	Index id = topo::none;

	bool operator<(const Key &o) const
	{
		return std::tie(penalty, bestfit, slack, load, parent_slack, id) <
		       std::tie(o.penalty, o.bestfit, o.slack, o.load, o.parent_slack, o.id);
	}
};

// What a domain's counts say about placing the gang there (cheap, O(children)).
Key domain_key(const Filter &f, const Weights &w, Index id, const Capacity &k, uint64_t classes, int64_t bound,
	       int64_t parent_bound, const std::vector<Index> *kids, Index leaf_nodes)
{
	Key key;
	key.id = id;
	int64_t gang_nodes = f.per_node ? f.need : (f.need + f.max_gpn - 1) / f.max_gpn;
	int64_t healthy = f.per_node ? bound - k.suspect : bound - int64_t(k.suspect) * f.max_gpn;
	if (healthy < f.need)
		key.penalty +=
			w.suspect * (f.per_node ? f.need - healthy : (f.need - healthy + f.max_gpn - 1) / f.max_gpn);
	if (f.want_class >= 0 && !(classes & class_bit(static_cast<uint16_t>(f.want_class))))
		key.penalty += w.faster_class * gang_nodes;
	if (kids && !kids->empty()) { // only a gang across leaves shares uplinks with others
		key.penalty += w.load(f.r.comm) * k.occupancy();
		if (f.r.comm == Comm::heavy)
			key.load = k.occupancy();
	}
	if (f.sub_node()) {
		int top = std::min(f.max_gpn, Capacity::buckets - 1);
		int64_t partial = k.with_free(f.gpn) - k.with_free(top);
		key.penalty += w.idle_node * std::max<int64_t>(0, f.need - partial);
		key.bestfit = top;
		for (int b = f.gpn; b < top; b++)
			if (k.by_free[b] > 0) {
				key.bestfit = b;
				break;
			}
		key.slack = static_cast<double>(k.free_gpus - f.need * f.gpn) / f.max_gpn;
	} else {
		key.slack = f.in_nodes(bound - f.need);
	}
	if (leaf_nodes > 0 && k.idle == leaf_nodes && (f.sub_node() || gang_nodes < leaf_nodes))
		key.penalty += w.idle_leaf;
	if (kids && kids->size() > 1) { // leaves this domain needs at least, from its children's counts
		std::vector<int64_t> b;
		for (Index c : *kids)
			b.push_back(f.bound(c));
		std::sort(b.begin(), b.end(), std::greater<>());
		int64_t sum = 0;
		int n = 0;
		for (int64_t x : b) {
			if (sum >= f.need)
				break;
			sum += x;
			n++;
		}
		key.penalty += w.leaf * std::max(0, n - 1);
	}
	key.penalty += w.stranded * std::max(0.0, key.slack);
	key.parent_slack = parent_bound - f.need;
	return key;
}

std::string describe_need(const Filter &f)
{
	std::string s;
	if (!f.per_node)
		s = strprintf("%lld GPUs", static_cast<long long>(f.need));
	else if (f.whole)
		s = strprintf("%lld whole node%s", static_cast<long long>(f.need), f.need == 1 ? "" : "s");
	else if (f.gpn > 0)
		s = strprintf("%lld node%s with %d free GPU%s", static_cast<long long>(f.need), f.need == 1 ? "" : "s",
			      f.gpn, f.gpn == 1 ? "" : "s");
	else
		s = strprintf("%lld node%s", static_cast<long long>(f.need), f.need == 1 ? "" : "s");
	if (f.want_class >= 0)
		s += " of class " + f.c.classes.name(static_cast<size_t>(f.want_class));
	return s;
}

class Search {
public:
	Search(const Filter &f, const Weights &w, int max_candidates)
		: f_(f), w_(w), g_(f, w), want_(static_cast<size_t>(max_candidates) + 2)
	{
	}

	Decision run()
	{
		Decision d;
		if (f_.bound(f_.root) < f_.need) {
			d.reason = strprintf("needs %s; the cluster has %s free", describe_need(f_).c_str(),
					     have(f_.bound(f_.root)).c_str());
			return d;
		}
		std::vector<std::vector<Index>> fit{{f_.root}};
		for (;;) {
			std::vector<Index> next;
			for (Index p : fit.back())
				for (Index k : f_.children(p)) {
					d.domains_examined++;
					if (f_.bound(k) >= f_.need)
						next.push_back(k);
				}
			if (next.empty())
				break;
			fit.push_back(std::move(next));
		}
		if (!f_.c.nvlink_domains.empty() && (multi_node() || f_.strict_nvlink))
			nvlink_phase();
		for (size_t t = fit.size();
		     !f_.strict_nvlink && t-- > 0 && cands_.size() < want_ && failed_ < max_failed_builds;) {
			int level = static_cast<int>(t) - 1; // fit[0] is the whole cluster
			if (f_.strict_level >= 0 && level < f_.strict_level)
				break;
			tree_level(fit[t]);
		}
		d.domains_examined += g_.domains_examined;
		d.nodes_examined = g_.nodes_examined;
		std::stable_sort(cands_.begin(), cands_.end(),
				 [](const Candidate &a, const Candidate &b) { return a.score.total < b.score.total; });
		if (cands_.size() > want_ - 2)
			cands_.resize(want_ - 2);
		for (size_t i = 0; i < cands_.size(); i++)
			cands_[i].why = (i == 0 ? "chosen: " : "runner-up: ") +
					explain_candidate(f_, cands_[i], i == 0 ? nullptr : &cands_[0]);
		d.candidates = std::move(cands_);
		if (!d.placed())
			d.reason = reason(fit);
		return d;
	}

private:
	bool multi_node() const { return f_.per_node ? f_.need > 1 : f_.need > f_.max_gpn; }

	std::string have(int64_t units) const
	{
		return f_.per_node ? strprintf("%lld such node%s", static_cast<long long>(units), units == 1 ? "" : "s")
				   : strprintf("%lld GPUs", static_cast<long long>(units));
	}

	void nvlink_phase()
	{
		std::vector<Key> keys;
		for (size_t v = 0; v < f_.c.nvlink_domains.size(); v++) {
			const Capacity &k = f_.s.nvlink(static_cast<Index>(v));
			int64_t b = f_.bound(k, f_.s.nvlink_classes(static_cast<Index>(v)));
			if (b >= f_.need)
				keys.push_back(domain_key(f_, w_, static_cast<Index>(v), k,
							  f_.s.nvlink_classes(static_cast<Index>(v)), b, 0, nullptr,
							  0));
		}
		build_best(keys, true);
	}

	void tree_level(const std::vector<Index> &doms)
	{
		std::vector<Key> keys;
		keys.reserve(doms.size());
		for (Index id : doms) {
			if (id == f_.root) {
				keys.push_back(Key{0, 0, 0, 0, 0, id});
				continue;
			}
			const topo::Domain &dom = f_.c.domains[id];
			int64_t pb = dom.parent == topo::none ? f_.bound(f_.root) : f_.bound(dom.parent);
			keys.push_back(domain_key(f_, w_, id, f_.s.domain(id), f_.s.domain_classes(id), f_.bound(id),
						  pb, &dom.children, dom.children.empty() ? dom.node_count() : 0));
		}
		build_best(keys, false);
	}

	void build_best(std::vector<Key> &keys, bool nvlink)
	{
		size_t head = std::min(keys.size(), want_ + max_failed_builds);
		std::partial_sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(head), keys.end());
		for (size_t i = 0; i < head && cands_.size() < want_ && failed_ < max_failed_builds; i++)
			build(keys[i].id, nvlink);
	}

	void build(Index id, bool nvlink)
	{
		g_.reset();
		std::vector<Pick> picks;
		int64_t got;
		if (nvlink) {
			const auto &nodes = f_.c.nvlink_domains[id].nodes;
			got = g_.nodes(nodes.data(), nodes.size(), f_.need, picks);
		} else {
			got = g_.domain(id, f_.need, picks);
		}
		if (got < f_.need) {
			failed_++;
			short_++;
			return;
		}
		if (!f_.per_node && (static_cast<int>(picks.size()) > f_.r.node_limit() ||
				     static_cast<int>(picks.size()) < f_.r.min_nodes)) {
			failed_++;
			node_count_++;
			return;
		}
		rank_order(f_.c, picks);
		Candidate c;
		for (const Pick &p : picks) {
			c.nodes.push_back(p.node);
			c.gpus.push_back(p.gpus);
		}
		c.score = score_picks(f_, w_, picks);
		if (f_.r.max_leaves > 0 && c.score.leaves > f_.r.max_leaves) {
			failed_++;
			too_wide_++;
			return;
		}
		if (f_.strict_level >= 0 && c.score.level < f_.strict_level) {
			failed_++;
			too_wide_++;
			return;
		}
		std::vector<Index> sorted = c.nodes;
		std::sort(sorted.begin(), sorted.end());
		for (const Candidate &o : cands_) {
			std::vector<Index> os = o.nodes;
			std::sort(os.begin(), os.end());
			if (os == sorted)
				return;
		}
		cands_.push_back(std::move(c));
	}

	std::string reason(const std::vector<std::vector<Index>> &fit) const
	{
		std::string need = describe_need(f_);
		if (f_.strict_nvlink)
			return strprintf("needs %s within one NVLink domain; none has room", need.c_str());
		if (f_.strict_level >= 0 && static_cast<int>(fit.size()) - 1 <= f_.strict_level)
			return strprintf("needs %s within one domain of level %d ('%s'); none has room", need.c_str(),
					 f_.strict_level, f_.r.locality_level.c_str());
		if (too_wide_ > 0 && f_.r.max_leaves > 0)
			return strprintf("needs %s on at most %d lea%s; the free nodes are spread wider", need.c_str(),
					 f_.r.max_leaves, f_.r.max_leaves == 1 ? "f" : "ves");
		if (node_count_ > 0)
			return strprintf("needs %s on %d to %d nodes; the free GPUs are spread over other node counts",
					 need.c_str(), f_.r.min_nodes, f_.r.node_limit());
		return strprintf("needs %s; the free ones counted are on nodes this job may not use "
				 "(not offered, excluded, too few free cores) (%zu domains tried)",
				 need.c_str(), short_);
	}

	const Filter &f_;
	const Weights &w_;
	Gatherer g_;
	size_t want_;
	std::vector<Candidate> cands_;
	size_t failed_ = 0, short_ = 0, node_count_ = 0, too_wide_ = 0;
};

} // namespace

expected<Decision> search_gang(const State &state, const Request &request, const Allowed *allowed,
			       const Weights &weights, int max_candidates, uint64_t class_mask)
{
	try {
		if (auto st = check_request(request); !st)
			return unexpected(st.error());
		if (allowed && allowed->size() != state.node_count())
			return unexpected(strprintf("allowed set has %zu nodes, the cluster %zu", allowed->size(),
						    state.node_count()));
		Filter f(state, request, allowed);
		if (auto st = resolve(f, weights); !st)
			return unexpected(st.error());
		f.class_mask &= class_mask;
		int maxc = std::max(1, max_candidates);
		Decision d = Search(f, weights, maxc).run();
		d.class_pass = 1;
		uint64_t faster = request.allow_faster_class ? faster_classes(f, weights) : 0;
		if (!d.placed() && faster) {
			f.class_mask |= faster;
			Decision d2 = Search(f, weights, maxc).run();
			d2.class_pass = 2;
			d2.domains_examined += d.domains_examined;
			d2.nodes_examined += d.nodes_examined;
			if (!d2.placed())
				d2.reason = d.reason + "; faster classes are full too";
			return d2;
		}
		return d;
	} catch (const std::exception &e) {
		return unexpected(std::string("placement failed: ") + e.what());
	} catch (...) {
		return unexpected("placement failed: unknown exception");
	}
}

status commit(State &state, const Request &request, const Candidate &c)
{
	if (c.gpus.size() != c.nodes.size())
		return unexpected("candidate has no GPU count per node");
	for (size_t i = 0; i < c.nodes.size(); i++) {
		Index n = c.nodes[i];
		if (n < 0 || static_cast<size_t>(n) >= state.node_count())
			return unexpected("candidate node out of range");
		int cores = request.whole_node ? state.free_cores(n)
					       : std::min(request.cores_per_node, state.free_cores(n));
		if (auto st = state.allocate(n, c.gpus[i], cores); !st) {
			for (size_t j = 0; j < i; j++) { // all or nothing
				int back = request.whole_node
						   ? state.total_cores(c.nodes[j]) - state.free_cores(c.nodes[j])
						   : std::min(request.cores_per_node,
							      state.total_cores(c.nodes[j]) -
								      state.free_cores(c.nodes[j]));
				(void)state.release(c.nodes[j], c.gpus[j], back);
			}
			return st;
		}
	}
	return ok();
}

} // namespace loom::place
