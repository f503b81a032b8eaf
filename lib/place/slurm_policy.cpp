#include "lib/place/slurm_policy.hpp"

namespace loom::place {

std::string step_aside_for(const SlurmPolicies &p)
{
	// Each asks for a shape that is not the tightest one: spreading, an order
	// of nodes, or load levelling. The engine's choice would break what Slurm
	// promises for them, so cons_tres chooses from every node offered.
	if (p.spread_job)
		return "--spread-job";
	if (p.contiguous)
		return "--contiguous";
	if (p.least_loaded)
		return "partition LLN";
	return {};
}

} // namespace loom::place
