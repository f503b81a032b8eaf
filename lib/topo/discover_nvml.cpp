// Discovery, NVML part, through lib/util/nvml_api (dlopen: loom never links
// libnvidia-ml and runs on machines without NVIDIA drivers).
#include "lib/topo/discover.hpp"
#include "lib/util/nvml_api.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

namespace loom::topo {

namespace {

std::string lower_busid(const char *b)
{
	std::string s = b;
	for (char &c : s)
		c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
	// NVML prints an 8-digit domain ("00000000:07:00.0"); hwloc and sysfs use 4.
	if (s.size() == 16 && s.compare(0, 4, "0000") == 0)
		s.erase(0, 4);
	return s;
}

} // namespace

void discover_nvml(Discovery &d)
{
	auto lib = nvml::Library::open();
	if (!lib) {
		d.notes.push_back("nvml: libnvidia-ml.so.1 not found (no NVIDIA driver): GPUs from PCI only");
		return;
	}
	const nvml::Api &n = (*lib)->api();
	unsigned count = 0;
	if (!n.init || !n.count || !n.by_index || n.init() != nvml::success) {
		d.notes.push_back("nvml: found but could not be initialised");
		return;
	}
	d.nvml_loaded = true;
	if (n.count(&count) != 0)
		count = 0;
	std::vector<GpuSpec> gpus;
	std::vector<std::vector<std::string>> remote(count);
	for (unsigned i = 0; i < count && i < max_gpus_per_node; i++) {
		nvml::Device dev = nullptr;
		if (n.by_index(i, &dev) != 0)
			continue;
		GpuSpec g;
		g.index = static_cast<int>(i);
		char buf[96] = {0};
		if (n.name && n.name(dev, buf, sizeof(buf)) == 0)
			g.model = buf;
		nvml::PciInfo pci{};
		if (n.pci && n.pci(dev, &pci) == 0)
			g.pci_bus_id = lower_busid(pci.busId);
		nvml::Memory mem{};
		if (n.memory && n.memory(dev, &mem) == 0)
			g.memory_mib = mem.total >> 20;
		for (unsigned l = 0; n.nvlink_state && l < nvml::max_links; l++) {
			nvml::EnableState active = 0;
			if (n.nvlink_state(dev, l, &active) != 0 || !active)
				continue;
			g.nvlinks++;
			nvml::PciInfo rp{};
			if (n.nvlink_remote && n.nvlink_remote(dev, l, &rp) == 0)
				remote[i].push_back(lower_busid(rp.busId));
		}
		g.nvlink_gbps = g.nvlinks * nvlink_link_gbps;
		nvml::GpuFabricInfo fi{};
		if (n.fabric && n.fabric(dev, &fi) == 0 && fi.status == 0) {
			char uuid[64];
			std::snprintf(uuid, sizeof(uuid),
				      "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x/%u",
				      fi.clusterUuid[0], fi.clusterUuid[1], fi.clusterUuid[2], fi.clusterUuid[3],
				      fi.clusterUuid[4], fi.clusterUuid[5], fi.clusterUuid[6], fi.clusterUuid[7],
				      fi.clusterUuid[8], fi.clusterUuid[9], fi.clusterUuid[10], fi.clusterUuid[11],
				      fi.clusterUuid[12], fi.clusterUuid[13], fi.clusterUuid[14], fi.clusterUuid[15],
				      fi.cliqueId);
			d.nvlink_domain = uuid;
		}
		gpus.push_back(g);
	}
	// Links to another GPU's bus id are direct peers; others end at NVSwitches.
	for (auto &g : gpus) {
		for (const auto &r : remote[static_cast<size_t>(g.index)]) {
			auto peer = std::find_if(gpus.begin(), gpus.end(),
						 [&](const GpuSpec &h) { return h.pci_bus_id == r; });
			if (peer == gpus.end()) {
				g.nvswitch = true;
				continue;
			}
			auto p = std::find_if(g.peers.begin(), g.peers.end(),
					      [&](const NvlinkPeer &x) { return x.gpu == peer->index; });
			if (p == g.peers.end())
				g.peers.push_back(NvlinkPeer{static_cast<uint16_t>(peer->index), 1});
			else
				p->links++;
		}
	}
	// NVML is the better source: keep hwloc's NUMA for the same bus id.
	for (auto &g : gpus)
		for (const auto &h : d.node.gpus)
			if (h.pci_bus_id == g.pci_bus_id)
				g.numa = h.numa;
	if (!gpus.empty() || d.node.gpus.empty())
		d.node.gpus = std::move(gpus);
	if (n.shutdown)
		n.shutdown();
}

} // namespace loom::topo
