// loom topology: describing the node we run on (`loom topo discover`).
//
// Gather only: hwloc for NUMA nodes, PCI GPUs and HCAs (live, or from an hwloc
// XML file); sysfs (/sys/class/infiniband under 'root') for HCA ports, link
// layer and rate; NVML, loaded with dlopen, for GPU models, memory, NVLink
// state and peers and the NVLink fabric clique. What is missing is reported
// in 'notes', never invented: without a GPU the node has zero GPUs.
#pragma once

#include "lib/topo/build.hpp"
#include "lib/util/expected.hpp"

#include <string>
#include <vector>

namespace loom::topo {

struct DiscoverOptions {
	std::string root = "/"; // a recorded tree instead of the live one
	std::string hwloc_xml;  // read PCI/NUMA from this hwloc XML file
	std::string hostname;   // default: this machine's name
	bool nvml = true;       // try libnvidia-ml.so.1 (never with a recorded root)
};

struct Discovery {
	NodeSpec node;
	std::string nvlink_domain; // NVML cluster UUID/clique, "" if none
	bool hwloc_loaded = false;
	bool nvml_loaded = false;
	std::vector<std::string> notes;
};

expected<Discovery> discover_node(const DiscoverOptions &opt);

// NVLink bandwidth per link, Gbit/s one direction, for NVLink fabrics where
// only link counts are known (NVLink 2-4: 25 GB/s).
constexpr double nvlink_link_gbps = 200;

// Internal pieces, exposed for tests.
status discover_hwloc(const DiscoverOptions &opt, Discovery &d);
void discover_sysfs_ib(const std::string &root, Discovery &d);
void discover_nvml(Discovery &d);

} // namespace loom::topo
