// loom topology: the fabric from `ibnetdiscover` output.
//
// Switches with host HCAs are leaf switches. Leaves that share a host (the
// rails of a rail-optimised unit) form one rail group: the group is the
// lowest domain, its nodes are attached to it, and its leaves are the rails
// (each NIC names the rail switch it is cabled to). A leaf that shares no
// host is a domain of its own. Above that, switch levels are found by
// distance from the leaves, and the domains joined through switches of a
// level form one domain of that level (kinds by height, default_kind()); a
// level that joins nothing new is skipped. A host's HCAs ("node1 mlx5_0",
// "node1 HCA-2") collapse to one node; each HCA becomes an InfiniBand NIC
// with the rate of its link.
//
// Not compute nodes, counted and reported one by one (GUID, switch, port):
// SHARP aggregation nodes, fabric management servers (a UFM or OpenSM host),
// a switch's own CA (described as a switch is: "MF0;leaf-1:MQM9700/U1"),
// and HCAs whose node description names no host: empty, the adapter's own
// model string ("MT4129 ConnectX7 Mellanox Technologies"), or an installer's
// placeholder ("localhost", "ubuntu"). Placeholders are left out, or with
// IbOptions::placeholders_by_guid kept as one node per HCA named
// "hca-<node GUID>".
#pragma once

#include "lib/topo/build.hpp"
#include "lib/util/expected.hpp"

#include <string>
#include <string_view>

namespace loom::topo {

struct IbOptions {
	bool placeholders_by_guid = false;
};

// An HCA that did not become (part of) a compute node, and why.
struct IbLeftOut {
	enum class Why { aggregation_node, management_server, switch_ca, placeholder, unnamed };
	Why why = Why::unnamed;
	std::string guid; // "0x..." node GUID of the HCA
	std::string desc; // its node description as written
	std::string sw;   // the switch it is cabled to, "" if none
	int sw_port = 0;
	bool kept = false; // placeholder kept as "hca-<guid>"
};
const char *left_out_name(IbLeftOut::Why w);

// Whether a node description ("node1 mlx5_0") names a compute node; when not,
// *why says what it is.
bool names_compute_node(std::string_view desc, IbLeftOut::Why *why);

struct IbFabric {
	ClusterSpec spec;
	std::vector<IbLeftOut> left_out;
	size_t switches = 0;
	size_t leaf_switches = 0;
	size_t hcas = 0; // host HCAs kept
	size_t hosts = 0;
	size_t unnamed_hcas = 0;      // no host name in the description (adapter string, empty)
	size_t placeholder_hcas = 0;  // a placeholder host name ("localhost")
	size_t management_hcas = 0;   // fabric management servers and switches' own CAs
	size_t aggregation_nodes = 0; // SHARP aggregation nodes
	size_t rail_groups = 0;       // groups of leaves sharing their hosts
	size_t links = 0;             // cables (each counted once)

	// One line for people: what was read and what was left out.
	std::string summary() const;
};

expected<IbFabric> parse_ibnetdiscover(std::string_view text, const std::string &source, const IbOptions &opt = {});

// Per-lane rate of an InfiniBand speed name in Gbit/s ("NDR" -> 100); 0 if unknown.
double ib_lane_gbps(std::string_view speed);

} // namespace loom::topo
