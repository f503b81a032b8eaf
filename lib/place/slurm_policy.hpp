// Slurm's node-selection semantics under select/topo's engine, Slurm-free:
// the plugin reads the job and node records, this decides.
//
// Two kinds of Slurm option meet the engine (doc/slurm-placement-options.md
// has the whole inventory):
//  - policies that ask for something other than "as tight as possible"
//    (--spread-job, --contiguous, LLN, required nodes that are the whole job):
//    the engine steps aside and cons_tres chooses from every node offered;
//  - constraints the engine honours inside its candidates (node Weight and
//    the other parts of slurmctld's scheduling weight, required nodes plus
//    locality, node-count ranges and --use-min-nodes): place_within().
#pragma once

#include "lib/place/engine.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::place {

struct SlurmPolicies {
	bool spread_job = false;    // --spread-job: over as many nodes as possible
	bool contiguous = false;    // --contiguous: consecutive nodes in slurm.conf order
	bool least_loaded = false;  // partition LLN: the least loaded nodes first
	bool select_lln = false;    // SelectTypeParameters=CR_LLN (LLN on 25.05+): the same, cluster-wide
	bool whole_topo = false;    // --exclusive=topo or partition ExclusiveTopo (24.05+): whole topology segments
	bool segment = false;       // --segment=N (24.05+, topology/block): the job in segments of N nodes
	bool required_all = false;  // -w names every node the job may get: nothing left to choose
	bool required_gpus = false; // -w with --gpus=N (a GPU total): cons_tres shares the GPUs out
};

// The option that makes the engine step aside, as a user would name it
// ("--spread-job", "--contiguous", "partition LLN", ...); "" when the engine
// decides. Where more than one is set, the first in that order is named.
std::string step_aside_for(const SlurmPolicies &p);

// Required nodes (-w/--nodelist, 'required' of them): nothing is left to
// choose when they are as many as the job may get (max_nodes) or as many as
// Slurm aims for (req_nodes: -w n[3-4] without -N asks for those two nodes);
// with a GPU total (--gpus=N, no per-node count) cons_tres shares the GPUs
// out over them. Sets required_all and required_gpus.
void note_required(SlurmPolicies &p, size_t required, uint32_t max_nodes, uint32_t req_nodes, bool gpu_total);

// What Slurm asks of the nodes beyond the request itself.
struct SlurmConstraints {
	// Nodes the job must get (-w/--nodelist), by model index.
	std::vector<Index> required;
	// Scheduling weight per model node (Weight=, and slurmctld's marks for
	// nodes that need a boot or lie outside a FLEX reservation): lower first.
	// Empty: all equal.
	std::vector<uint64_t> weight;
	// Node-count range: the count Slurm aims for (its req_nodes: the maximum
	// the user gave, the minimum with --use-min-nodes or no maximum given);
	// 0: the request's maximum.
	int target_nodes = 0;
	bool use_min_nodes = false; // only named in the note
};

// How the constraints shaped the decision, for the placed line: "weight
// tier 1 of 2", "6 of 2-8 nodes", "with required n3"; "" when none did.
struct Within {
	Decision decision;
	std::string note;
};

// The engine's decision under Slurm's constraints:
//  - weight: the nodes of the lowest weight first; the next tier is added only
//    when the job does not fit in those (cons_tres's order);
//  - node ranges (min_nodes..max_nodes of per-node requests): the largest
//    count from the minimum up to Slurm's target that fits now, tightest for
//    that count (as cons_tres: as many as it can up to the target);
//  - required nodes: every candidate holds them all, and the rest of the gang
//    is taken from the smallest domain around them that has room.
// Errors as place(). Every candidate holds only allowed or required nodes.
expected<Within> place_within(const State &state, const Request &request, const Allowed &allowed,
			      const SlurmConstraints &cons, const Weights &weights, int max_candidates = 2);

} // namespace loom::place
