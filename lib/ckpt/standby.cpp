// loom ckpt: how many standby nodes a job holds (standby.hpp).
#include "lib/ckpt/standby.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace loom::ckpt {

double poisson_cdf(int k, double lambda)
{
	if (k < 0)
		return 0;
	if (lambda <= 0)
		return 1;
	// Terms in log space: exact enough for the small counts a job holds,
	// no overflow for large lambda.
	double sum = 0;
	for (int i = 0; i <= k; i++)
		sum += std::exp(i * std::log(lambda) - lambda - std::lgamma(i + 1.0));
	return std::min(1.0, sum);
}

StandbyNeed standby_count(int nodes, double run_s, double node_mtbf_s, double p, int max_standby)
{
	StandbyNeed n;
	if (nodes <= 0 || run_s <= 0 || !(node_mtbf_s > 0) || std::isinf(node_mtbf_s) || max_standby <= 0)
		return n;
	double rate = run_s / node_mtbf_s; // failures per node over the run
	for (int s = 0;; s++) {
		n.nodes = s;
		n.expected_failures = (nodes + s) * rate;
		n.coverage = poisson_cdf(s, n.expected_failures);
		if (n.coverage >= p)
			return n;
		if (s == max_standby) {
			n.capped = true;
			return n;
		}
	}
}

std::string StandbyNeed::why() const
{
	char buf[160];
	std::snprintf(buf, sizeof buf,
		      "%d standby node%s: %.2g node failures expected over the run, covered with p=%.3f%s", nodes,
		      nodes == 1 ? "" : "s", expected_failures, coverage, capped ? " (capped)" : "");
	return buf;
}

} // namespace loom::ckpt
