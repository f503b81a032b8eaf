// loom placement: which jobs are refused at submit, and which wait rather
// than take a looser placement.
//
// A locality hint names a domain kind. At submit (Slurm's TEST_ONLY):
//  - a kind the cluster does not have is refused, naming the kinds it has,
//    never left to fail later in silence;
//  - a strict hint no domain of that kind could ever hold (the domain has
//    fewer of the nodes Slurm offers than the job's minimum) is refused: a job
//    must not be promised what can never happen.
// When nothing fits now (the engine has no candidate, or cons_tres refused
// every one), a strict job waits: never placed in part, never outside its
// domain. Every other job is placed by cons_tres over every node offered.
#pragma once

#include "lib/place/engine.hpp"
#include "lib/place/hints.hpp"
#include "lib/util/expected.hpp"

#include <string>
#include <vector>

namespace loom::place {

// kinds: what --locality takes on this cluster (topo::locality_kinds).
// Error: "--locality=galaxy: this cluster has no domain of that kind (kinds:
// leaf, pod, spine)". No hint is always known.
status check_locality_kind(const LocalityHint &hint, const std::vector<std::string> &kinds);

// Some domain of this kind (or NVLink domain, for "nvlink") holds at least
// min_nodes of the offered nodes.
bool can_ever_fit(const topo::Cluster &c, const std::string &kind, const Allowed &offered, int min_nodes);

// What happens to a job the engine could not place now.
enum class Unplaced : uint8_t {
	wait,     // strict locality: the job stays pending
	cons_tres // cons_tres chooses from every node offered
};
struct NoFit {
	Unplaced then = Unplaced::cons_tres;
	std::string reason; // for the log and --explain: why it waits, or what cons_tres is asked
};
// engine_reason: Decision::reason when the engine found no candidate ("" when
// it found some and cons_tres refused them all, 'refused' of them).
NoFit when_unplaced(const Request &r, const std::string &engine_reason, size_t refused = 0);

} // namespace loom::place
