// loom exchange: failure statistics per node and per GPU class (MTBF).
//
// jobcomp/health records, for every finished job, the node-seconds each of its
// nodes ran it (exposure) and, for infrastructure failures, one failure
// against each culprit node (or against the GPU class when no node could be
// named: health::record_job, lib/health/failure_stats.hpp). MTBF = exposure /
// failures. The file (failure-stats.json in StateSaveLocation, format in
// jobcomp_health(8)) is written atomically; the checkpoint interval policy
// and the placement health weight read it.
#pragma once

#include "lib/util/expected.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace loom::exchange {

struct FailureCounts {
	double exposure_s = 0;
	int64_t failures = 0;
	std::map<std::string, int64_t> by_class; // failure_class_name -> count
	int64_t last_failure = 0;                // unix time
	// exposure / failures; < 0 when there has been no failure yet.
	double mtbf_s() const { return failures > 0 ? exposure_s / static_cast<double>(failures) : -1; }
};

struct NodeStats : FailureCounts {
	std::string gpu_class;
};

struct FailureStats {
	std::map<std::string, NodeStats> nodes;
	std::map<std::string, FailureCounts> gpu_classes;
	int64_t updated = 0;
};

// A node's MTBF with a prior: (exposure + prior_mtbf_s) / (failures + 1).
// The prior counts as one failure's worth of exposure, so a node with little
// history stays near it, a long fault-free run raises it, repeated failures
// lower it, and no count gives zero or infinity. Used by spank_ckpt's
// automatic interval and select/topo's health weights alike.
double mtbf_estimate(double exposure_s, int64_t failures, double prior_mtbf_s);

// The MTBF of a job on these nodes: 1 / sum(1 / estimate), each node's
// estimate with prior_mtbf_s as its prior (nodes without history count with
// the prior itself). No node: the prior. spank_ckpt's automatic interval.
double job_mtbf(const FailureStats &s, const std::vector<std::string> &nodes, double prior_mtbf_s);

// The fleet's MTBF: all nodes' exposure / all their failures; < 0 without a failure.
double fleet_mtbf(const FailureStats &s);

// Placement health weight per node that has a history: min(1, estimate /
// fleet MTBF) with the fleet MTBF as prior: 1 for nodes that fail no more
// often than the fleet, 1/(F+1) for F failures on a node with little exposure.
// Empty when the fleet has no failure.
std::map<std::string, double> node_health_weights(const FailureStats &s);

std::string failure_stats_json(const FailureStats &s);
expected<FailureStats> parse_failure_stats(std::string_view text, const std::string &source);
// Missing file: empty statistics.
expected<FailureStats> load_failure_stats(const std::string &path);
status save_failure_stats(const std::string &path, const FailureStats &s);

} // namespace loom::exchange
