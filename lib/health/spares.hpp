// loom health: the replacement of failed nodes by spares.
//
// select/topo computes the spare pool (lib/place/spares.hpp) and publishes it
// in the spare file (lib/exchange/spare_file.hpp), which jobcomp/health and
// `loom place --spares` read.
//
// A replacement (jobcomp/health, when it requeues an infrastructure failure
// whose culprits it named): every culprit is replaced by a spare of the
// first domain in the file that holds it and still has one, else of the next
// (a leaf's, then a pod's); an idle spare before one a short job borrowed. All
// of the job's culprits are replaced, or none is: the job then takes the
// normal requeue and waits whole, as it would without spares.
#pragma once

#include "lib/exchange/spare_file.hpp"
#include "lib/health/slurm_ops.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace loom::health {

struct Replacement {
	bool ok = false;
	std::vector<std::string> nodes;                         // the job's new nodes (old healthy + spares), sorted
	std::vector<std::pair<std::string, std::string>> swaps; // culprit -> spare
	std::vector<std::string> domains;                       // the spare's domain, per swap
	std::string why;                                        // when !ok: what was missing
	// "n2 -> n4 (leaf leaf1), n3 -> n8 (pod pod1)"
	std::string summary() const;
};
// states: `scontrol show node` of the candidate spares (a spare missing from
// it, drained, down, not responding, reserved or rebooting is not used).
// busy_until: for a busy candidate, when the last job on it reaches its time
// limit (seconds since the epoch; absent: unknown or no limit). A busy spare
// is waited for only when that is within the pool's lend_max_s of now: a
// borrower's; a job that was on the node before it became a spare could hold
// the replacement for days.
Replacement plan_replacement(const exchange::SpareFile &pool, const std::vector<std::string> &job_nodes,
			     const std::vector<std::string> &culprits, const std::map<std::string, SlurmNode> &states,
			     const std::map<std::string, int64_t> &busy_until = {}, int64_t now = 0);
// The spares plan_replacement may look at for these culprits (to ask Slurm
// for their states first).
std::vector<std::string> candidate_spares(const exchange::SpareFile &pool, const std::vector<std::string> &culprits);

} // namespace loom::health
