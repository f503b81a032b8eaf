// loom placement: the weights of the score, and their fail-closed parser.
//
// A candidate's score is a sum of penalties; lower is better. The defaults
// follow the decision rules in order of importance:
//
//   level=1000       per level between the gang's common domain and the leaves.
//                    The lowest domain level that holds the gang comes first:
//                    every level up adds switch hops and shares oversubscribed
//                    uplinks with everyone under that domain. It outweighs all
//                    other terms together in any usual placement.
//   leaf=20          per leaf spanned beyond the first: each leaf boundary puts
//                    the gang's collectives through the spine uplinks.
//   nvlink=20        per NVLink domain spanned beyond the first: NVLink gives
//                    about ten times the per-GPU bandwidth of the fabric.
//   suspect=50       per suspect node: one failing node kills the whole gang,
//                    so suspect nodes come last within a level.
//   health=20        times (1 - health weight) per node: of two healthy nodes,
//                    the one with the better record.
//   faster_class=40  per node of a faster class than asked for: keeps the fast
//                    GPUs for the jobs that ask for them.
//   mixed_class=100  per GPU class in the gang beyond the first: a synchronous
//                    gang runs at the pace of its slowest GPU.
//   idle_leaf=16     per fully idle leaf the gang takes only part of: keeps
//                    large blocks whole for large gangs.
//   idle_node=8      per idle node a sub-node job starts on: partially used
//                    nodes are filled first, keeping whole nodes for gangs.
//   stranded=0.1     per node's worth of capacity the gang leaves free in its
//                    common domain: tightest fit; small, so it mostly breaks ties.
//   load_heavy=0     times the occupancy (0..1) of the common domain, for
//   load_normal=0    heavy, normal and light communication. Heavy gangs go to
//   load_light=0     the least loaded domain among the equally tight ones in
//                    any case (a tie-break); a weight above 0 trades tightness
//                    for less loaded uplinks. Off by default: in bench_place's
//                    job stream (1k GPUs) a weight of 2 to 30 made 36-68% more
//                    of the later gangs span several leaves. Only gangs across
//                    leaves pay it: inside one leaf switch (non-blocking) or
//                    NVLink domain no uplink is shared.
//   link_heavy=400   times the link degradation of the leaves the gang uses
//   link_normal=40   (per leaf: the share of its nodes whose own links look
//   link_light=0     degraded, loom:suspect marks of link checks), for heavy,
//                    normal and light communication: a heavy gang leaves a
//                    degraded leaf for a clean one first, a light one may use it;
//                    a gang larger than a leaf is gathered from the clean leaves
//                    while they hold it (gather.cpp: plan_groups).
//   value_wait=0.25  the share of its time limit a job of a value tier may wait,
//                    from when it became eligible, for the class that is
//                    cheapest per unit of work or for off-peak hours when they
//                    make the run cheaper; then it takes the next cheapest class
//                    that holds it now. Never past the latest start that ends
//                    by its deadline (--deadline); 0: never waits. A quarter of
//                    the time limit: the job ends by at most 1.25 limits after it
//                    became eligible, and in the simulator's search
//                    (bench/results/tiers-search.md) larger shares bought little
//                    more saving for much longer waits.
//   balance_time=1   the weight of time in a balanced tier's key: (price per
//                    work / cheapest) x (time per work / fastest)^balance_time;
//                    1 weighs a halving of the price as much as a halving of the
//                    time (tiers-search.md).
//   class_order=v100,a100,h100,h200,b200,gb200
//                    GPU classes from slowest to fastest ("faster" in requests);
//                    classes not listed are never taken as faster.
#pragma once

#include "lib/place/request.hpp"
#include "lib/util/config.hpp"
#include "lib/util/expected.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace loom::place {

struct Weights {
	// Not weights, but the site's policy the engine reads with them: the GPU
	// classes, prices and tiers of loom-topo.conf (tiers.hpp; null: none),
	// and the minute of the day their prices are taken at (-1: the local
	// time now; set for replays and the simulator).
	std::shared_ptr<const TierTable> tiers;
	int clock_minute = -1;

	double level = 1000;
	double leaf = 20;
	double nvlink = 20;
	double suspect = 50;
	double health = 20;
	double faster_class = 40;
	double mixed_class = 100;
	double idle_leaf = 16;
	double idle_node = 8;
	double stranded = 0.1;
	double load_heavy = 0;
	double load_normal = 0;
	double load_light = 0;
	double link_heavy = 400;
	double link_normal = 40;
	double link_light = 0;
	double value_wait = 0.25;
	double balance_time = 1;
	std::vector<std::string> class_order = {"v100", "a100", "h100", "h200", "b200", "gb200"};

	double load(Comm c) const
	{
		return c == Comm::heavy ? load_heavy : c == Comm::light ? load_light : load_normal;
	}
	double link(Comm c) const
	{
		return c == Comm::heavy ? link_heavy : c == Comm::light ? link_light : link_normal;
	}
};

// The schema that writes into w (every key above, values 0..1e6).
ConfigSchema weights_schema(Weights &w);
// key=value words (a slurm.conf parameter value or plugin arguments) over the defaults.
expected<Weights> parse_weights(std::string_view words, const std::string &where);
// A weights file: '#' comments, key=value words per line.
expected<Weights> load_weights_file(const std::string &path);
// All keys with their values, one key=value per line.
std::string format_weights(const Weights &w);

} // namespace loom::place
