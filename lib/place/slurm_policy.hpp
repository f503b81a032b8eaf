// Slurm's node-selection policies that ask for something other than "as tight
// as possible", and whether select/topo's engine decides or steps aside for
// cons_tres (Slurm's own choice). Slurm-free: the plugin reads the flags from
// the job record, this decides.
#pragma once

#include <string>

namespace loom::place {

struct SlurmPolicies {
	bool spread_job = false;   // --spread-job: over as many nodes as possible
	bool contiguous = false;   // --contiguous: consecutive nodes in slurm.conf order
	bool least_loaded = false; // partition LLN: the least loaded nodes first
};

// The option that makes the engine step aside, as a user would name it
// ("--spread-job", "--contiguous", "partition LLN"); "" when the engine decides.
// Where more than one is set, the first in that order is named.
std::string step_aside_for(const SlurmPolicies &p);

} // namespace loom::place
