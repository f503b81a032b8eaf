// loom ckpt: when to checkpoint.
//
// Young (1974): T = sqrt(2CM). Daly (2006), for C < 2M:
//   T = sqrt(2CM) * [1 + (1/3) sqrt(C/2M) + (1/9) (C/2M)] - C,  else T = M,
// with C the time to write a checkpoint and M the job's mean time between
// failures. A job's MTBF over n nodes is 1 / sum(1/M_node).
//
// Node MTBFs come from the failure statistics jobcomp/health writes
// (loom-failure-stats.json, format in jobcomp_health(8)): each node's
// exposure E (node-seconds of jobs) and failures F. The estimate is
// (E + M_site) / (F + 1): the site's MTBF counts as one failure's worth of
// prior exposure, so a node with little history stays near the site value, a
// long fault-free history raises it and repeated failures lower it, and no
// count (F = 0, or E = 0) ever gives zero or infinity.
#pragma once

#include "lib/util/expected.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace loom::ckpt {

double young_interval(double cost_s, double mtbf_s);
double daly_interval(double cost_s, double mtbf_s);

struct IntervalBounds {
	int64_t min_s = 300;
	int64_t max_s = 6 * 3600;
};
// Daly's interval, rounded to whole seconds and clamped to the bounds.
int64_t auto_interval(double cost_s, double mtbf_s, IntervalBounds b);

// How long before the time limit to ask for the last checkpoint: twice the
// last measured write plus 10 s, never less than min_s.
int64_t time_limit_margin(double last_write_s, int64_t min_s);

struct NodeHistory {
	double exposure_s = 0;
	int64_t failures = 0;
};
struct FailureStats {
	std::map<std::string, NodeHistory> nodes;
};
// jobcomp/health's loom-failure-stats.json (strict: a file of another
// version or shape is refused, naming the field).
expected<FailureStats> parse_failure_stats(std::string_view text, const std::string &source);
// One node's MTBF estimate: (exposure + site_node_mtbf_s) / (failures + 1).
double node_mtbf(const NodeHistory &h, double site_node_mtbf_s);
// The MTBF of a job on these nodes: 1 / sum(1 / node_mtbf); nodes without
// history count with site_node_mtbf_s.
double job_mtbf(const FailureStats &stats, const std::vector<std::string> &nodes, double site_node_mtbf_s);

// Expand a Slurm host list: "n[1-3,7],gpu05" -> n1 n2 n3 n7 gpu05.
expected<std::vector<std::string>> expand_hostlist(std::string_view list, size_t max_hosts = 100000);

} // namespace loom::ckpt
