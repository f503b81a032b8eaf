// loom topology (internal): the raw graph read from ibnetdiscover output.
#pragma once

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
	double gbps = 0;  // from "4xNDR"; 0 when not given
};

struct IbDev {
	char type = 'S';  // S switch, H channel adapter, R router
	std::string guid, desc, where;
	std::vector<IbPort> ports;
};

struct IbGraph {
	std::vector<IbDev> devs;
	std::map<std::string, size_t> by_guid;
};

// Every device and port line; a link to a device not in the text is an error.
expected<IbGraph> parse_ib_graph(std::string_view text, const std::string &source);

} // namespace loom::topo
