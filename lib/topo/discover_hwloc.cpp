// Discovery, hwloc part: NUMA nodes, NVIDIA GPUs on PCI, HCAs, NVLink matrix.
#include "lib/topo/discover.hpp"

#include <cstdlib>
#include <cstring>
#include <hwloc.h>
#include <map>
#include <sys/stat.h>

namespace loom::topo {

namespace {

struct Topo {
	hwloc_topology_t t = nullptr;
	~Topo()
	{
		if (t)
			hwloc_topology_destroy(t);
	}
};

std::string busid(hwloc_obj_t o)
{
	char b[32];
	std::snprintf(b, sizeof(b), "%04x:%02x:%02x.%01x", o->attr->pcidev.domain, o->attr->pcidev.bus,
		      o->attr->pcidev.dev, o->attr->pcidev.func);
	return b;
}

int numa_of(hwloc_topology_t t, hwloc_obj_t o)
{
	hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(t, o);
	if (!a || !a->nodeset || hwloc_bitmap_weight(a->nodeset) != 1)
		return -1;
	return hwloc_bitmap_first(a->nodeset);
}

bool is_dir(const std::string &p)
{
	struct stat st;
	return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Loads the topology: the XML file, the recorded root (HWLOC_FSROOT) or this
// machine. False when a recorded root has no CPU/PCI tree (said in d.notes).
expected<bool> load_topology(const DiscoverOptions &opt, Topo &topo, Discovery &d)
{
	if (hwloc_topology_init(&topo.t) != 0)
		return unexpected("hwloc", "cannot initialise");
	hwloc_topology_set_io_types_filter(topo.t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	if (!opt.hwloc_xml.empty()) {
		if (hwloc_topology_set_xml(topo.t, opt.hwloc_xml.c_str()) != 0)
			return unexpected(opt.hwloc_xml,
					  std::string("hwloc cannot read this XML: ") + std::strerror(errno));
	} else if (opt.root != "/") {
		if (!is_dir(opt.root + "/sys/devices/system/cpu")) {
			d.notes.push_back("hwloc: no recorded CPU/PCI tree under " + opt.root +
					  " (NUMA and PCI left out)");
			return false;
		}
		::setenv("HWLOC_FSROOT", opt.root.c_str(), 1);
	}
	if (hwloc_topology_load(topo.t) != 0)
		return unexpected(opt.hwloc_xml.empty() ? "hwloc" : opt.hwloc_xml,
				  std::string("hwloc cannot load the topology: ") + std::strerror(errno));
	return true;
}

void read_numas(hwloc_topology_t t, NodeSpec &n)
{
	for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, o));) {
		NumaSpec m;
		m.id = static_cast<int>(o->os_index);
		char *s = nullptr;
		if (o->cpuset && hwloc_bitmap_list_asprintf(&s, o->cpuset) >= 0 && s) {
			m.cpus = s;
			std::free(s);
		}
		m.memory_mib = o->attr ? o->attr->numanode.local_memory >> 20 : 0;
		n.numas.push_back(m);
	}
}

// NVIDIA GPUs on PCI; returns each one's PCI and OS devices -> index in n.gpus.
std::map<hwloc_obj_t, int> read_gpus(hwloc_topology_t t, NodeSpec &n)
{
	std::map<hwloc_obj_t, int> gpu_of;
	for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_pcidev(t, o));) {
		unsigned cls = o->attr->pcidev.class_id;
		if (o->attr->pcidev.vendor_id != 0x10de || (cls != 0x0302 && cls != 0x0300))
			continue;
		GpuSpec g;
		g.index = static_cast<int>(n.gpus.size());
		g.pci_bus_id = busid(o);
		g.numa = numa_of(t, o);
		for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling) {
			if (const char *m = hwloc_obj_get_info_by_name(c, "GPUModel"))
				g.model = m;
			gpu_of[c] = g.index;
		}
		gpu_of[o] = g.index;
		n.gpus.push_back(g);
	}
	return gpu_of;
}

// OpenFabrics devices (an Ethernet-class PCI device: RoCE).
void read_hcas(hwloc_topology_t t, NodeSpec &n)
{
	for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_osdev(t, o));) {
		if (o->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS || !o->name)
			continue;
		NicSpec x;
		x.device = o->name;
		x.link_layer = LinkLayer::infiniband;
		if (o->parent && o->parent->type == HWLOC_OBJ_PCI_DEVICE) {
			x.pci_bus_id = busid(o->parent);
			if (o->parent->attr->pcidev.class_id == 0x0200)
				x.link_layer = LinkLayer::ethernet;
		}
		x.numa = numa_of(t, o);
		if (const char *g = hwloc_obj_get_info_by_name(o, "NodeGUID"))
			x.guid = std::string("0x") + g;
		n.nics.push_back(x);
	}
}

// NVLink bandwidth matrix (MB/s): GPU to NVSwitch makes an NVSwitch GPU,
// GPU to GPU a direct peer. Links counted at 25 GB/s each.
void read_nvlinks(hwloc_topology_t t, const std::map<hwloc_obj_t, int> &gpu_of, NodeSpec &n)
{
	unsigned nr = 1;
	hwloc_distances_s *dist = nullptr;
	if (hwloc_distances_get_by_name(t, "NVLinkBandwidth", &nr, &dist, 0) == 0 && nr == 1 && dist) {
		for (unsigned i = 0; i < dist->nbobjs; i++) {
			auto gi = gpu_of.find(dist->objs[i]);
			if (gi == gpu_of.end())
				continue;
			GpuSpec &g = n.gpus[static_cast<size_t>(gi->second)];
			for (unsigned j = 0; j < dist->nbobjs; j++) {
				uint64_t bw = dist->values[i * dist->nbobjs + j];
				if (i == j || bw == 0)
					continue;
				int links = static_cast<int>(std::max<uint64_t>(1, (bw + 12500) / 25000));
				g.nvlinks += links;
				g.nvlink_gbps += static_cast<double>(bw) * 8 / 1000;
				auto gj = gpu_of.find(dist->objs[j]);
				if (gj == gpu_of.end())
					g.nvswitch = true;
				else
					g.peers.push_back(NvlinkPeer{static_cast<uint16_t>(gj->second),
								     static_cast<uint16_t>(links)});
			}
		}
	}
	if (nr == 1 && dist)
		hwloc_distances_release(t, dist);
}

} // namespace

status discover_hwloc(const DiscoverOptions &opt, Discovery &d)
{
	Topo topo;
	auto loaded = load_topology(opt, topo, d);
	if (!loaded)
		return unexpected(loaded.error());
	if (!*loaded)
		return ok();
	d.hwloc_loaded = true;
	read_numas(topo.t, d.node);
	std::map<hwloc_obj_t, int> gpu_of = read_gpus(topo.t, d.node);
	read_hcas(topo.t, d.node);
	read_nvlinks(topo.t, gpu_of, d.node);
	return ok();
}

} // namespace loom::topo
