// The way back from the indexed model to a description by names.
#include "lib/topo/build.hpp"

namespace loom::topo {

NodeSpec node_spec(const Cluster &c, Index id)
{
	const Node &n = c.nodes[id];
	NodeSpec s;
	s.name = n.name;
	s.domain = n.leaf == none ? "" : c.domains[n.leaf].name;
	s.nvlink_domain = n.nvlink_domain == none ? "" : c.nvlink_domains[n.nvlink_domain].name;
	s.perf_class = c.classes.name(n.perf_class);
	s.cpu = CpuSpec{n.cpu_arch, n.cpu_vendor, n.cpu_family, n.cpu_model};
	for (uint16_t f : n.features)
		s.features.push_back(c.features.name(f));
	for (uint16_t k = 0; k < n.nic_count; k++) {
		const Nic &x = c.nics[n.nic_begin + k];
		s.nics.push_back(NicSpec{x.device, x.port, x.link_layer, x.rate_gbps, x.rail, x.numa, x.pci_bus_id,
					 x.guid, "", x.rail_switch == none ? "" : c.rails[x.rail_switch].name,
					 x.pcie_gts, x.pcie_width});
	}
	for (uint16_t k = 0; k < n.gpu_count; k++) {
		const Gpu &g = c.gpus[n.gpu_begin + k];
		GpuSpec gs;
		gs.index = g.index;
		gs.pci_bus_id = g.pci_bus_id;
		gs.model = c.models.name(g.model);
		gs.perf_class = g.perf_class == n.perf_class ? "" : c.classes.name(g.perf_class);
		gs.memory_mib = g.memory_mib;
		gs.numa = g.numa;
		gs.nic = g.nic == none ? "" : c.nics[g.nic].device;
		gs.nvswitch = g.nvswitch;
		gs.nvlinks = g.nvlinks;
		gs.nvlink_gbps = g.nvlink_gbps;
		gs.peers = g.peers;
		gs.pcie_gts = g.pcie_gts;
		gs.pcie_width = g.pcie_width;
		s.gpus.push_back(std::move(gs));
	}
	for (uint16_t k = 0; k < n.numa_count; k++) {
		const Numa &m = c.numas[n.numa_begin + k];
		s.numas.push_back(NumaSpec{m.id, m.cpus, m.memory_mib, ""});
	}
	return s;
}

ClusterSpec to_spec(const Cluster &c)
{
	ClusterSpec s;
	s.name = c.name;
	s.pcie_gbps = c.pcie_gbps;
	for (const Domain &d : c.domains)
		s.domains.push_back(DomainSpec{d.name, c.kinds.name(d.kind),
					       d.parent == none ? "" : c.domains[d.parent].name, d.uplink_gbps, ""});
	for (const NvlinkDomain &v : c.nvlink_domains)
		s.nvlink_domains.push_back(NvlinkDomainSpec{v.name, v.gbps, ""});
	for (const Rail &r : c.rails)
		s.rails.push_back(RailSpec{r.name, c.domains[r.group].name, r.index, r.uplink_gbps, ""});
	for (size_t n = 0; n < c.nodes.size(); n++)
		s.nodes.push_back(node_spec(c, static_cast<Index>(n)));
	return s;
}

} // namespace loom::topo
