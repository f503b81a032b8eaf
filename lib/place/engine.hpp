// loom placement: the gang-placement engine (public API).
//
// The select/topo plugin keeps one State per cluster model (state.hpp),
// updates it as jobs start and end, and for each job_test asks place() for
// ranked candidate node sets for the whole gang:
//
//   loom::place::State state(cluster);                // once; then allocate()/release()
//   auto d = loom::place::place(state, request, &allowed, weights, 2);
//   if (!d)                 -> bad request (d.error()): refuse the job
//   else if (!d->placed())  -> cannot fit now (d->reason)
//   else                    -> d->candidates[0].nodes, in rank order
//
// Rules, in order: the lowest domain level that holds the whole gang (an
// NVLink domain counts as the tightest level); at that level the best domain:
// tightest fit, fewest leaves and NVLink domains spanned, partially used nodes
// before idle ones for small jobs, heavy communication on the least loaded
// domain, the GPU class asked for (a faster one only when allowed and the
// class is full), suspect nodes last. All or nothing: a candidate always holds
// the whole gang. Weights (weights.hpp) set how the rules trade off.
//
// Work per decision is bounded by the domain counts it reads and the nodes of
// the domains it builds candidates in, never by the cluster's node count.
// place() never throws: any failure inside comes back as an Error.
#pragma once

#include "lib/place/request.hpp"
#include "lib/place/state.hpp"
#include "lib/place/weights.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::place {

// Why a candidate ranks where it does. Counts first, then the weighted parts
// (their sum is 'total'; lower is better).
struct Score {
	Index common = topo::none;  // lowest domain holding the whole gang; none: several trees
	int level = 0;              // its level (0 = root)
	int height = 0;             // levels between it and the leaves (0 = one leaf)
	int leaves = 0;             // leaf domains spanned
	int nvlink_domains = 0;     // NVLink domains spanned (0: nodes without one)
	int idle_nodes_broken = 0;  // idle nodes the gang takes only part of
	int idle_leaves_broken = 0; // fully idle leaves the gang takes only part of
	double stranded = 0;        // capacity left free in the common domain, in nodes
	int faster_nodes = 0;       // nodes of a faster class than asked for
	int classes = 0;            // GPU classes in the gang
	int suspect_nodes = 0;
	double health = 0; // sum over nodes of (1 - health weight)
	double load = 0;   // occupancy of the common domain before the gang, 0..1

	double locality = 0;         // level + leaf + nvlink terms
	double fragmentation = 0;    // idle_node + idle_leaf + stranded terms
	double class_penalty = 0;    // faster_class + mixed_class terms
	double health_penalty = 0;   // suspect + health terms
	double load_penalty = 0;     // load term
	double link_degradation = 0; // sum over the gang's leaves of their link degradation
	double link_penalty = 0;     // link term
	double total = 0;
};

struct Candidate {
	std::vector<Index> nodes; // the gang in rank order: consecutive ranks sit closest
	std::vector<int> gpus;    // GPUs taken on each node (same order)
	Score score;
	std::string why;         // one line for people
	double price_per_h = -1; // the GPUs' price per hour (tiers.hpp); < 0: not priced
};

struct Decision {
	std::vector<Candidate> candidates; // best first; empty: cannot fit now
	std::string reason;                // why nothing fits (empty when placed)
	int class_pass = 0;                // 1: the class asked for; 2: faster classes allowed
	std::string tier;                  // a need's classes, as tried (describe_plan); "" without one
	std::string gpu_class;             // the class a need chose ("" without one, or none fit;
					   // "a100+h100" for a gang across classes)
	std::string waiting;               // a value tier waiting by choice: for what ("" otherwise)
	size_t domains_examined = 0;       // work done, for tuning and tests
	size_t nodes_examined = 0;

	bool placed() const { return !candidates.empty(); }
};

// Ranked candidates for the whole gang. allowed (may be null) is the set of
// nodes Slurm offers for this job; only those are returned. max_candidates
// (at least 1) bounds the list: the chosen one and runners-up.
// Errors: an invalid request, an unknown class, domain kind or excluded node.
expected<Decision> place(const State &state, const Request &request, const Allowed *allowed, const Weights &weights,
			 int max_candidates = 2);

// The minute of the day prices and off-peak hours are read at: the weights'
// clock (loom place --clock, loom sim) or the local time.
int minute_of_day(const Weights &w);

// The candidate's GPUs at the class prices of 'minute' (of the day), set in
// cand.price_per_h and returned; -1 when a node's class has no price.
double set_price(const topo::Cluster &c, const TierTable &t, int minute, Candidate &cand);
// What a run on these nodes (GPUs per node) costs: each GPU at its class's
// mean price over 'minutes' from 'minute' (of the day; off-peak hours at
// their price), times the hours. -1 when a node's class has no price.
double run_cost(const topo::Cluster &c, const TierTable &t, const std::vector<Index> &nodes,
		const std::vector<int> &gpus, int minute, double minutes);

// Slurm topology/tree's greedy choice on the same inputs (one candidate),
// scored like the engine's: for comparison in benchmarks and --explain.
expected<Decision> place_baseline(const State &state, const Request &request, const Allowed *allowed,
				  const Weights &weights);

// Apply a candidate to the state (what Slurm does when the job starts).
status commit(State &state, const Request &request, const Candidate &c);

} // namespace loom::place
