// loom placement (internal): one decision's view of the request, and the
// pieces the engine and the baseline share.
//
// A Filter turns a Request into what a node must offer and how much of it the
// gang needs, in "units": nodes for per-node requests, GPUs for a total-GPU
// request. bound() reads a domain's Capacity and gives an upper bound of the
// units the domain can offer this job; fits() is the exact test on one node.
#pragma once

#include "lib/place/engine.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::place {

struct Pick {
	Index node = topo::none;
	int gpus = 0;
};

struct Filter {
	const State &s;
	const topo::Cluster &c;
	const Request &r;
	const Allowed *allowed;
	bool per_node = true; // units are nodes; else GPUs (gpus=T)
	int gpn = 0;          // free GPUs a node must have (total mode: 1)
	int cores = 0;        // free cores a node must have
	bool whole = false;
	int64_t need = 0;                   // units
	int max_gpn = 8;                    // GPUs of the largest node: converts GPUs to nodes
	int want_class = -1;                // class id asked for; -1: any
	uint64_t class_mask = ~uint64_t(0); // classes usable in this pass
	int strict_level = -1;              // the gang must fit in one domain of this level or deeper
	int prefer_level = -1;
	bool strict_nvlink = false;      // the gang must fit in one NVLink domain
	std::vector<Index> excluded;     // sorted
	Index root;                      // the whole cluster, as a domain id (= domains.size())
	const std::vector<Index> &roots; // top domains (kept by the State)
	const std::vector<Index> &loose; // nodes outside every domain

	Filter(const State &state, const Request &req, const Allowed *a);

	bool fits(Index n) const;
	// Units this node can give (1, or its free GPUs in total mode).
	int64_t units(Index n) const;
	int64_t bound(const Capacity &k, uint64_t classes) const;
	int64_t bound(Index d) const { return bound(s.domain(d), d == root ? ~uint64_t(0) : s.domain_classes(d)); }
	// A sub-node job: fewer GPUs than a node has (packing rules apply).
	bool sub_node() const { return per_node && !whole && gpn > 0 && gpn < max_gpn; }
	const std::vector<Index> &children(Index d) const { return d == root ? roots : c.domains[d].children; }
	// Units as node equivalents (for the stranded-capacity term).
	double in_nodes(int64_t u) const { return per_node ? double(u) : double(u) / max_gpn; }
};

// Resolve names in the request (class, domain kind, excluded nodes).
status resolve(Filter &f, const Weights &w);
// Classes faster than the one asked for (by Weights::class_order); 0 for any.
uint64_t faster_classes(const Filter &f, const Weights &w);

// Best fit over groups (children, NVLink domains in a leaf): the largest
// groups first until the rest fits in one, then the tightest group that holds
// the rest. Ties by penalty, then by order. Returns (group index, units).
// A child domain in a plan: what it can hold, its penalty (suspect nodes),
// and its link penalty (the weight of the request's communication class x the
// link degradation of a leaf): a gang stays out of groups with a link penalty
// while the others can hold it all, then takes them as any other.
struct Group {
	int64_t bound = 0;
	double penalty = 0;
	double link = 0;
};
std::vector<std::pair<size_t, int64_t>> plan_groups(const std::vector<Group> &groups, int64_t want);

// Builds node sets inside a domain or a list of nodes. Nodes taken in the
// current build are marked so a replanning step never takes them twice.
class Gatherer {
public:
	Gatherer(const Filter &f, const Weights &w);
	// Start a new node set.
	void reset();
	// Take up to 'want' units under domain d (or f.root); returns units taken.
	int64_t domain(Index d, int64_t want, std::vector<Pick> &out);
	// Take up to 'want' units from these nodes.
	int64_t nodes(const Index *list, size_t count, int64_t want, std::vector<Pick> &out);
	int64_t range(Index begin, Index end, int64_t want, std::vector<Pick> &out);

	size_t nodes_examined = 0;
	size_t domains_examined = 0;

private:
	struct Fit {
		Index node;
		int64_t units;
		Index nvl;
	};
	int64_t take(std::vector<Fit> &fit, int64_t want, std::vector<Pick> &out);
	bool node_before(const Fit &a, const Fit &b) const;
	void mark(Index n);
	bool marked(Index n) const;

	const Filter &f_;
	const Weights &w_;
	std::vector<Fit> scratch_;
};

// The rank order: grouped by NVLink domain, then leaf, then node order.
void rank_order(const topo::Cluster &c, std::vector<Pick> &picks);
// Exact score of a node set.
Score score_picks(const Filter &f, const Weights &w, const std::vector<Pick> &picks);
// One line for people; 'chosen' is null for the chosen candidate itself.
std::string explain_candidate(const Filter &f, const Candidate &c, const Candidate *chosen);

// The search for one request (engine.cpp): the lowest level that holds the
// gang, candidates scored, best first; class_mask the GPU classes this pass
// may use (a need's classes for a gang that may span them). class_plan.cpp
// chooses the classes and calls it once per class.
expected<Decision> search_gang(const State &state, const Request &request, const Allowed *allowed,
			       const Weights &weights, int max_candidates, uint64_t class_mask = ~uint64_t(0));

} // namespace loom::place
