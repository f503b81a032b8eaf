// loom placement: the spare pool.
//
// An admin keeps spare nodes in each fabric domain of a kind
// (loom-topo.conf `spares=leaf:1,nvlink:2,pod:5%`). The spares of a domain
// are its last N usable nodes in node order, where usable means: responding,
// not drained or down, not marked suspect, and in no Slurm reservation (a
// node reserved for a replacement, or by an admin, is nobody's spare). So the
// pool is a function of the node table alone: the same in select/topo,
// `loom place --spares` and after a slurmctld restart; it refills as drained nodes
// return; a spare taken by a replacement leaves the pool for as long as its
// reservation lasts.
//
// Ordinary jobs are never placed on spares; a job whose time limit is at
// most `spare_lend` may borrow them (the spare is back within that time).
// A job in a reservation is offered only its reservation's nodes by Slurm and
// is not restricted further.
#pragma once

#include "lib/exchange/spare_file.hpp"
#include "lib/place/spare_spec.hpp"
#include "lib/topo/model.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loom::place {

// What the pool needs of a node.
enum class SpareNodeState : uint8_t {
	unusable, // not responding, drained, down, suspect, reserved, not in Slurm
	idle,     // usable, no job on it
	busy      // usable, some job on it (a borrower, or one that was there first)
};

struct SpareDomain {
	std::string kind;                // the rule's kind
	topo::Index domain = topo::none; // Cluster::domains or nvlink_domains (kind "nvlink") index
	std::string name;
	std::vector<topo::Index> nodes; // its nodes, in node order
	int want = 0;
	std::vector<topo::Index> spares; // at most want; fewer when too few nodes are usable
};
struct SparePool {
	std::vector<SpareDomain> domains; // every domain of every rule's kind
	std::vector<uint8_t> spare;       // by model node: 1 when a spare of some domain
	size_t count() const;
	bool is_spare(topo::Index m) const
	{
		return m >= 0 && static_cast<size_t>(m) < spare.size() && spare[static_cast<size_t>(m)];
	}
};
// state: by model node. Rules are applied in order; a spare chosen by an
// earlier rule counts towards a later rule's domains that hold it.
SparePool choose_spares(const topo::Cluster &c, const SpareSpec &spec, const std::vector<SpareNodeState> &state);
// The spare file (lib/exchange/spare_file.hpp) of a pool chosen at 'now' on this fabric.
exchange::SpareFile spare_file_of(const topo::Cluster &c, const SparePool &pool, int64_t lend_max_s, int64_t now);

} // namespace loom::place
