// loom ckpt: standby nodes held inside a job's allocation.
//
// A --ckpt job may hold a few idle nodes beside the ones its step runs on;
// when one of those fails, the step starts again on the others plus a
// standby, without giving the allocation back (no requeue, no queue wait).
// With --ckpt-standby=auto it holds enough to cover its node failures over
// its run with probability p: node failures are a Poisson process, rate
// (active + standby nodes) / node MTBF (a standby can fail too), and the
// count is the smallest S with P(failures <= S) >= p, at most max.
#pragma once

#include <cstdint>
#include <string>

namespace loom::ckpt {

struct StandbyNeed {
	int nodes = 0;                // standbys to hold
	double expected_failures = 0; // over the run, on the active and standby nodes
	double coverage = 1;          // P(failures <= nodes)
	bool capped = false;          // max held it below what p asks for
	std::string why() const;      // "3 standbys: 1.7 node failures expected over 24h, covered with p=0.91"
};

// Poisson P(X <= k) for mean lambda (k >= 0, lambda >= 0).
double poisson_cdf(int k, double lambda);

// The standbys a job of 'nodes' active nodes running 'run_s' seconds needs
// on nodes of MTBF 'node_mtbf_s' to cover its failures with probability p
// (0 < p < 1), at most max_standby. A job with nothing to fear (no nodes,
// no run time, an infinite MTBF) needs none.
StandbyNeed standby_count(int nodes, double run_s, double node_mtbf_s, double p, int max_standby);

} // namespace loom::ckpt
