#include "lib/topo/nccl_env.hpp"

#include "lib/topo/nccl_xml.hpp"

#include <set>

namespace loom::topo {

expected<NcclEnv> nccl_env(const Cluster &c, std::string_view node)
{
	Index n = c.find_node(node);
	if (n == none)
		return unexpected("node '" + std::string(node) + "' is not in the fabric");
	const Node &nd = c.nodes[n];
	NcclEnv out;
	if (nd.gpu_count == 0) {
		out.no_topo = "the fabric lists no GPU of " + nd.name;
	} else if (auto xml = write_nccl_topology(c, n)) {
		out.topo_xml = std::move(*xml);
	} else {
		out.no_topo = xml.error().str();
	}
	std::vector<Index> hcas;
	std::set<Index> seen;
	for (uint16_t k = 0; k < nd.gpu_count; k++) {
		Index nic = c.gpus[nd.gpu_begin + k].nic;
		if (nic != none && seen.insert(nic).second)
			hcas.push_back(nic);
	}
	if (hcas.empty())
		for (uint16_t k = 0; k < nd.nic_count; k++) {
			const Nic &x = c.nics[nd.nic_begin + k];
			if (x.link_layer == LinkLayer::infiniband || x.rail >= 0)
				hcas.push_back(nd.nic_begin + k);
		}
	for (Index h : hcas) {
		const Nic &x = c.nics[h];
		// A NIC read from a file that names no device carries its PCI
		// address as its name: that is no HCA name NCCL could match.
		if (x.device.empty() || x.device == x.pci_bus_id)
			continue;
		out.ib_hca += (out.ib_hca.empty() ? "=" : ",") + x.device + ":" + std::to_string(x.port);
	}
	if (out.topo_xml.empty() && out.ib_hca.empty())
		return unexpected(nd.name + ": the fabric has neither a description NCCL can load (" + out.no_topo +
				  ") nor an HCA of the node; build the cluster file from the nodes' own descriptions "
				  "(loom topo discover, loom topo build)");
	return out;
}

} // namespace loom::topo
