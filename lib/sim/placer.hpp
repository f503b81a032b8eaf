// loom sim: the placers a simulation compares, on the same State.
//
//   loom      lib/place's engine: place(), as select/topo calls it
//   tree      Slurm topology/tree's greedy choice: place_baseline(), the
//             baseline of bench_place
//   firstfit  the first nodes in node order that fit (Slurm without a
//             topology plugin, nodes of equal weight)
//   block     Slurm topology/block's shape: base blocks (the NVLink domains,
//             else the leaves) and aligned power-of-two aggregates of them;
//             the job goes to the smallest aggregate level that can hold it,
//             best fit (fewest free nodes) among the aggregates of that level
//             that have room, the next level up when none has; nodes in order
#pragma once

#include "lib/place/engine.hpp"
#include "lib/util/expected.hpp"

#include <memory>
#include <string>
#include <vector>

namespace loom::sim {

class Placer {
public:
	virtual ~Placer() = default;
	virtual expected<place::Decision> choose(const place::State &s, const place::Request &r) = 0;
	// The simulated time of day, for prices that change with it (tiers.hpp).
	virtual void set_clock(int minute_of_day) { (void)minute_of_day; }
};

const std::vector<std::string> &placer_names();
expected<std::unique_ptr<Placer>> make_placer(const std::string &name, const topo::Cluster &c, const place::Weights &w);

} // namespace loom::sim
