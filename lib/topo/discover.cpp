// Discovery: sysfs InfiniBand ports, NVML through dlopen, and the whole.
#include "lib/topo/discover.hpp"
#include "lib/topo/hwloc_xml.hpp"
#include "lib/topo/try.hpp"
#include "lib/util/fs.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <map>
#include <unistd.h>

namespace loom::topo {

namespace {

std::string read_word(const std::string &p)
{
	auto t = read_file(p, 4096);
	return t ? std::string(trim(*t)) : std::string();
}

} // namespace

void discover_sysfs_ib(const std::string &root, Discovery &d)
{
	std::string base = path_join(root, "sys/class/infiniband");
	auto devs = list_dir(base);
	if (devs.empty()) {
		d.notes.push_back("sysfs: no InfiniBand/RoCE devices under " + base);
		return;
	}
	std::vector<NicSpec> found;
	for (const auto &dev : devs) {
		for (const auto &port : list_dir(path_join(base, dev + "/ports"))) {
			std::string pdir = path_join(base, dev + "/ports/" + port);
			NicSpec x;
			x.device = dev;
			x.port = std::atoi(port.c_str());
			std::string ll = read_word(pdir + "/link_layer");
			x.link_layer = ll == "InfiniBand" ? LinkLayer::infiniband
				       : ll == "Ethernet" ? LinkLayer::ethernet
							  : LinkLayer::unknown;
			// "400 Gb/sec (4X NDR)"
			x.rate_gbps = std::atof(read_word(pdir + "/rate").c_str());
			std::string numa = read_word(path_join(base, dev + "/device/numa_node"));
			x.numa = numa.empty() ? -1 : std::atoi(numa.c_str());
			std::string guid = read_word(path_join(base, dev + "/node_guid"));
			if (!guid.empty())
				x.guid = "0x" + guid;
			std::string state = read_word(pdir + "/state");
			if (!state.empty() && state.find("ACTIVE") == std::string::npos)
				d.notes.push_back("sysfs: " + dev + " port " + port + " is " + state);
			found.push_back(x);
		}
	}
	// Merge with what hwloc saw (PCI bus id, NUMA) by device name.
	for (auto &x : found) {
		auto it = std::find_if(d.node.nics.begin(), d.node.nics.end(),
				       [&](const NicSpec &h) { return h.device == x.device; });
		if (it != d.node.nics.end()) {
			x.pci_bus_id = it->pci_bus_id;
			if (x.numa < 0)
				x.numa = it->numa;
			if (x.guid.empty())
				x.guid = it->guid;
		}
	}
	d.node.nics = std::move(found);
	// Rails: InfiniBand ports in device order.
	int rail = 0;
	for (auto &x : d.node.nics)
		if (x.link_layer == LinkLayer::infiniband)
			x.rail = rail++;
}

expected<Discovery> discover_node(const DiscoverOptions &opt)
{
	Discovery d;
	d.node.name = opt.hostname;
	if (d.node.name.empty()) {
		char host[256] = {0};
		if (::gethostname(host, sizeof(host) - 1) != 0)
			return unexpected("discover", "cannot read the host name");
		d.node.name = host;
		if (size_t dot = d.node.name.find('.'); dot != std::string::npos)
			d.node.name.erase(dot);
	}
	if (!opt.hwloc_xml.empty()) {
		// A recorded machine: loom's own reader, which takes every hwloc XML
		// version (the linked hwloc refuses files newer than itself).
		LOOM_TRY(text, read_file(opt.hwloc_xml));
		LOOM_TRY(node, parse_hwloc_xml(text, opt.hwloc_xml));
		node.name = d.node.name;
		d.node = std::move(node);
		d.hwloc_loaded = true;
	} else if (status st = discover_hwloc(opt, d); !st) {
		return unexpected(st.error());
	}
	if (opt.hwloc_xml.empty())
		discover_sysfs_ib(opt.root, d);
	if (opt.nvml && opt.root == "/" && opt.hwloc_xml.empty())
		discover_nvml(d);
	else
		d.notes.push_back("nvml: not used for a recorded machine");
	// Nearest NIC of each GPU: an InfiniBand NIC on the same NUMA node, in turn.
	std::vector<size_t> ib;
	for (size_t k = 0; k < d.node.nics.size(); k++)
		if (d.node.nics[k].link_layer == LinkLayer::infiniband)
			ib.push_back(k);
	std::map<int, size_t> next_on_numa;
	for (auto &g : d.node.gpus) {
		if (!g.nic.empty())
			continue;
		std::vector<size_t> near;
		for (size_t k : ib)
			if (d.node.nics[k].numa == g.numa)
				near.push_back(k);
		if (g.numa >= 0 && !near.empty())
			g.nic = d.node.nics[near[next_on_numa[g.numa]++ % near.size()]].device;
	}
	if (d.node.gpus.empty())
		d.notes.push_back("gpus: none found on this machine");
	d.node.nvlink_domain = d.nvlink_domain;
	return d;
}

} // namespace loom::topo
