// loom topology: the fabric from `ibnetdiscover` output.
//
// Switches with host HCAs are leaf switches. Leaves that share a host (the
// rails of a rail-optimised unit) form a "rail-group" domain. Above that,
// switch levels are found by distance from the leaves, and the leaves and
// groups joined through switches of a level form one domain of that level
// ("spine", then "core", then "level-N"); a level that joins nothing new is
// skipped. A host's HCAs ("node1 mlx5_0", "node1 HCA-2") collapse to one node,
// attached to the lowest domain that holds all its leaves; each HCA becomes
// an InfiniBand NIC with the rate of its link. HCAs without a host name
// (unset node description) and SHARP aggregation nodes are not compute nodes:
// they are counted and left out.
#pragma once

#include "lib/topo/build.hpp"
#include "lib/util/expected.hpp"

#include <string>
#include <string_view>

namespace loom::topo {

struct IbFabric {
	ClusterSpec spec;
	size_t switches = 0;
	size_t leaf_switches = 0;
	size_t hcas = 0;              // host HCAs kept
	size_t hosts = 0;
	size_t unnamed_hcas = 0;      // left out: no host name in the description
	size_t aggregation_nodes = 0; // left out: SHARP aggregation nodes
	size_t links = 0;             // cables (each counted once)
};

expected<IbFabric> parse_ibnetdiscover(std::string_view text, const std::string &source);

// Per-lane rate of an InfiniBand speed name in Gbit/s ("NDR" -> 100); 0 if unknown.
double ib_lane_gbps(std::string_view speed);

} // namespace loom::topo
