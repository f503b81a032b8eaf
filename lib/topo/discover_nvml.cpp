// Discovery, NVML part: loaded with dlopen so that loom never links
// libnvidia-ml and runs on machines without NVIDIA drivers.
#include "lib/topo/discover.hpp"

#include <cstdio>
#include <algorithm>
#include <cctype>
#include <cstring>
#include <dlfcn.h>

namespace loom::topo {

namespace {

// The few NVML types and calls we use, as the NVML header declares them.
using nvmlDevice_t = struct nvmlDevice_st *;
using nvmlReturn_t = int;
struct nvmlPciInfo_t {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
};
struct nvmlMemory_t {
	unsigned long long total, free, used;
};
struct nvmlGpuFabricInfo_t {
	unsigned char clusterUuid[16];
	nvmlReturn_t status;
	unsigned int cliqueId;
	unsigned char state;
};
constexpr unsigned nvml_max_links = 18;

struct Nvml {
	void *h = nullptr;
	nvmlReturn_t (*init)() = nullptr;
	nvmlReturn_t (*shutdown)() = nullptr;
	nvmlReturn_t (*count)(unsigned *) = nullptr;
	nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t *) = nullptr;
	nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned) = nullptr;
	nvmlReturn_t (*pci)(nvmlDevice_t, nvmlPciInfo_t *) = nullptr;
	nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t *) = nullptr;
	nvmlReturn_t (*link_state)(nvmlDevice_t, unsigned, int *) = nullptr;
	nvmlReturn_t (*link_remote)(nvmlDevice_t, unsigned, nvmlPciInfo_t *) = nullptr;
	nvmlReturn_t (*fabric)(nvmlDevice_t, nvmlGpuFabricInfo_t *) = nullptr;
	~Nvml()
	{
		if (h)
			::dlclose(h);
	}
	template <typename F>
	void sym(F &f, const char *n)
	{
		f = reinterpret_cast<F>(::dlsym(h, n));
	}
};

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
	Nvml n;
	n.h = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!n.h) {
		d.notes.push_back("nvml: libnvidia-ml.so.1 not found (no NVIDIA driver): GPUs from PCI only");
		return;
	}
	n.sym(n.init, "nvmlInit_v2");
	n.sym(n.shutdown, "nvmlShutdown");
	n.sym(n.count, "nvmlDeviceGetCount_v2");
	n.sym(n.by_index, "nvmlDeviceGetHandleByIndex_v2");
	n.sym(n.name, "nvmlDeviceGetName");
	n.sym(n.pci, "nvmlDeviceGetPciInfo_v3");
	n.sym(n.memory, "nvmlDeviceGetMemoryInfo");
	n.sym(n.link_state, "nvmlDeviceGetNvLinkState");
	n.sym(n.link_remote, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
	n.sym(n.fabric, "nvmlDeviceGetGpuFabricInfo");
	unsigned count = 0;
	if (!n.init || !n.count || !n.by_index || n.init() != 0) {
		d.notes.push_back("nvml: found but could not be initialised");
		return;
	}
	d.nvml_loaded = true;
	if (n.count(&count) != 0)
		count = 0;
	std::vector<GpuSpec> gpus;
	std::vector<std::vector<std::string>> remote(count);
	for (unsigned i = 0; i < count && i < max_gpus_per_node; i++) {
		nvmlDevice_t dev = nullptr;
		if (n.by_index(i, &dev) != 0)
			continue;
		GpuSpec g;
		g.index = static_cast<int>(i);
		char buf[96] = {0};
		if (n.name && n.name(dev, buf, sizeof(buf)) == 0)
			g.model = buf;
		nvmlPciInfo_t pci{};
		if (n.pci && n.pci(dev, &pci) == 0)
			g.pci_bus_id = lower_busid(pci.busId);
		nvmlMemory_t mem{};
		if (n.memory && n.memory(dev, &mem) == 0)
			g.memory_mib = mem.total >> 20;
		for (unsigned l = 0; n.link_state && l < nvml_max_links; l++) {
			int active = 0;
			if (n.link_state(dev, l, &active) != 0 || !active)
				continue;
			g.nvlinks++;
			nvmlPciInfo_t rp{};
			if (n.link_remote && n.link_remote(dev, l, &rp) == 0)
				remote[i].push_back(lower_busid(rp.busId));
		}
		g.nvlink_gbps = g.nvlinks * nvlink_link_gbps;
		nvmlGpuFabricInfo_t fi{};
		if (n.fabric && n.fabric(dev, &fi) == 0 && fi.status == 0) {
			char uuid[64];
			std::snprintf(uuid, sizeof(uuid), "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x/%u",
				      fi.clusterUuid[0], fi.clusterUuid[1], fi.clusterUuid[2], fi.clusterUuid[3], fi.clusterUuid[4],
				      fi.clusterUuid[5], fi.clusterUuid[6], fi.clusterUuid[7], fi.clusterUuid[8], fi.clusterUuid[9],
				      fi.clusterUuid[10], fi.clusterUuid[11], fi.clusterUuid[12], fi.clusterUuid[13],
				      fi.clusterUuid[14], fi.clusterUuid[15], fi.cliqueId);
			d.nvlink_domain = uuid;
		}
		gpus.push_back(g);
	}
	// Links to another GPU's bus id are direct peers; others end at NVSwitches.
	for (auto &g : gpus) {
		for (const auto &r : remote[static_cast<size_t>(g.index)]) {
			auto peer = std::find_if(gpus.begin(), gpus.end(), [&](const GpuSpec &h) { return h.pci_bus_id == r; });
			if (peer == gpus.end()) {
				g.nvswitch = true;
				continue;
			}
			auto p = std::find_if(g.peers.begin(), g.peers.end(), [&](const NvlinkPeer &x) { return x.gpu == peer->index; });
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
