// loom topology (internal): the raw graph read from ibnetdiscover output.
#pragma once

#include "lib/topo/build.hpp"
#include "lib/util/expected.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace loom::topo {

struct IbPort {
	int port = 0;
	std::string peer; // guid of the device at the other end
	int peer_port = 0;
	double gbps = 0; // from "4xNDR"; 0 when not given
};

struct IbDev {
	char type = 'S'; // S switch, H channel adapter, R router
	std::string guid, desc, where;
	std::vector<IbPort> ports;
};

struct IbGraph {
	std::vector<IbDev> devs;
	std::map<std::string, size_t> by_guid;
};

// Every device and port line; a link to a device not in the text is an error.
expected<IbGraph> parse_ib_graph(std::string_view text, const std::string &source);

// From the graph to the fabric (parse_ibnetdiscover, ibnetdiscover.hpp):
// ib_fabric.cpp finds the switches and the hosts, ib_domains.cpp the switch
// levels, the domains and the rails.

// The graph's switches, numbered in device order.
struct IbSwitches {
	const IbGraph *g = nullptr;
	std::vector<size_t> dev;         // switch number -> device index
	std::map<size_t, size_t> of_dev; // device index -> switch number
	std::vector<std::string> names;  // one per switch, unique
	// 1: a leaf (a host CA is cabled to it); above, the distance from the
	// leaves plus one; 0: not reached.
	std::vector<int> level;
	int top_level = 1;

	// The switch at the other end of p; -1 when that is not a switch.
	long peer(const IbPort &p) const
	{
		auto s = of_dev.find(g->by_guid.at(p.peer));
		return s == of_dev.end() ? -1 : static_cast<long>(s->second);
	}
	const std::vector<IbPort> &ports(size_t s) const { return g->devs[dev[s]].ports; }
	const std::string &where(size_t s) const { return g->devs[dev[s]].where; }
};

// A host's HCA port and the switch it is cabled to.
struct IbHca {
	size_t sw;
	std::string device, guid;
	int port;
	double gbps;
	int sw_port;
};

// The hosts in the order first seen, and their HCAs.
struct IbHosts {
	std::vector<std::string> order;
	std::map<std::string, std::vector<IbHca>> hcas;
};

// Levels above the leaves (sw.level set to 1 on the leaves), by distance from
// them; sets sw.top_level. Returns the number of leaves (0: no host is attached).
size_t ib_switch_levels(IbSwitches &sw);

// The domains and rail switches of the fabric, into spec.domains and
// spec.rails. Returns the lowest domain of each leaf switch (by switch
// number; "" for the others); *rail_groups counts the groups of leaves
// sharing their hosts.
std::vector<std::string> ib_domains(const IbSwitches &sw, const IbHosts &hosts, const std::string &source,
				    ClusterSpec &spec, size_t *rail_groups);

} // namespace loom::topo
