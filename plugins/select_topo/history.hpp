// select/topo: node health weights from jobcomp/health's failure statistics.
//
// A thread of its own polls the statistics file (loom-topo.conf
// failure_stats=, every failure_stats_poll); a file whose modification time
// or size changed is parsed there, never inside job_test, and the weights
// are published as one immutable map (exchange::node_health_weights: 1 for a
// node that fails no more often than the fleet, 1/(F+1) for F failures on a
// node with little history). job_test takes the latest map in O(1) and
// rereads the node table only when the map is new. A file that is missing
// or malformed is logged once per change and leaves every node at weight 1.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace loom::select_topo {

struct HealthWeights {
	uint64_t generation = 0; // 0: none published yet
	std::map<std::string, double> weight;
};

// Start (or restart, when path or period changed) the watcher; "" stops it.
void history_start(const std::string &path, int64_t poll_s);
void history_stop();
// The latest published weights (never null).
std::shared_ptr<const HealthWeights> history_weights();

} // namespace loom::select_topo
