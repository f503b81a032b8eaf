// loom topology: building a validated Cluster from a description by names.
//
// Every reader (loom JSON, Slurm topology.conf, ibnetdiscover, hwloc, NCCL XML,
// discovery) fills a ClusterSpec, where objects refer to each other by name,
// and build_cluster() turns it into the indexed model: it checks duplicate
// names, dangling references and cycles, orders domains and nodes depth-first
// and computes ranges, counts and the ancestor table. Errors name the spec's
// 'where' (a JSON path or file:line). Nothing is half built: on error the
// caller gets only the Error.
#pragma once

#include "lib/topo/model.hpp"
#include "lib/util/expected.hpp"

#include <string>
#include <vector>

namespace loom::topo {

struct DomainSpec {
	std::string name;
	std::string kind;   // "spine", "pod", "leaf", ... ("" = default_kind() by height)
	std::string parent; // "" for a root
	double uplink_gbps = 0;
	std::string where;
};

struct GpuSpec {
	int index = 0;
	std::string pci_bus_id;
	std::string model;
	std::string perf_class; // "" = the node's class
	uint64_t memory_mib = 0;
	int numa = -1;
	std::string nic; // device name of the nearest NIC, "" if none
	bool nvswitch = false;
	int nvlinks = 0;
	double nvlink_gbps = 0;
	std::vector<NvlinkPeer> peers;
	double pcie_gts = 0; // PCIe link speed per lane (8, 16, 32 GT/s); 0 = unknown
	int pcie_width = 0;  // lanes; 0 = unknown
	std::string where;
};

struct NicSpec {
	std::string device;
	int port = 1;
	LinkLayer link_layer = LinkLayer::unknown;
	double rate_gbps = 0;
	int rail = -1;
	int numa = -1;
	std::string pci_bus_id;
	std::string guid;
	std::string where;
	std::string rail_switch; // the rail switch this port is cabled to, "" if none
	double pcie_gts = 0;
	int pcie_width = 0;
};

struct NumaSpec {
	int id = 0;
	std::string cpus;
	uint64_t memory_mib = 0;
	std::string where;
};

// The node's CPUs as NCCL's topology file names them ("x86_64",
// "GenuineIntel", family 6, model 143); empty/-1 when unknown.
struct CpuSpec {
	std::string arch, vendor;
	int family = -1, model = -1;
	bool operator==(const CpuSpec &) const = default;
};

struct NodeSpec {
	std::string name;
	CpuSpec cpu;
	std::string domain;        // leaf domain; "" only when the cluster has no domains
	std::string nvlink_domain; // "" for none
	std::string perf_class;
	std::vector<std::string> features;
	std::vector<GpuSpec> gpus;
	std::vector<NicSpec> nics;
	std::vector<NumaSpec> numas;
	std::string where;
};

struct NvlinkDomainSpec {
	std::string name;
	double gbps = 0;
	std::string where;
};

struct RailSpec {
	std::string name;
	std::string group; // the rail-group domain
	int index = 0;
	double uplink_gbps = 0;
	std::string where;
};

struct ClusterSpec {
	std::string name;
	double pcie_gbps = 256;
	std::vector<DomainSpec> domains;
	std::vector<NvlinkDomainSpec> nvlink_domains;
	std::vector<RailSpec> rails;
	std::vector<NodeSpec> nodes;
	// Names for the levels of domains whose source gives no kind, by height
	// (the first for the lowest level); default_kind() past the end.
	std::vector<std::string> level_names;
};

// Limits that keep every id in its field (and bad input from exhausting memory).
constexpr size_t max_gpus_per_node = 1024;
constexpr size_t max_nics_per_node = 1024;
constexpr size_t max_domain_depth = 64;
// Nodes, and switches or blocks, one cluster description may hold: past the
// largest Slurm clusters by an order of magnitude (100,000 GPUs are 12,500
// nodes of 8), and low enough that a file of hostile ranges ("n[0-999999]" on
// every line) is refused before it is expanded.
constexpr size_t max_cluster_nodes = 1u << 17;
constexpr size_t max_cluster_domains = 1u << 17;

expected<Cluster> build_cluster(ClusterSpec spec);

// The description of a built cluster (to merge, edit and rebuild).
ClusterSpec to_spec(const Cluster &c);
NodeSpec node_spec(const Cluster &c, Index node);

} // namespace loom::topo
