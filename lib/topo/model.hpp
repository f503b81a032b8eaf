// loom topology: the in-memory cluster model.
//
// Plain data with dense integer ids, built for array indexing at 100k GPUs:
//
//   domains  a tree of fabric domains of any depth (site, spine group, pod,
//            leaf switch ...). Stored in depth-first pre-order, so a parent
//            always comes before its children and domain 0 is the first root.
//   nodes    stored in the same depth-first order: the nodes under any domain
//            are the contiguous range [node_begin, node_end). A domain may hold
//            nodes directly (a leaf switch) and/or child domains.
//   gpus, nics, numas
//            flat arrays grouped by node: node n owns gpus[gpu_begin,
//            gpu_begin + gpu_count) and likewise for NICs and NUMA nodes.
//   nvlink_domains
//            multi-node NVLink domains (an NVL72 rack): a second grouping that
//            cuts across the switch tree. node.nvlink_domain indexes it.
//   rails    the leaf switches of a rail-optimised unit. Each node of the unit
//            has one NIC on every rail, so no rail switch holds a node of its
//            own: the unit (a "rail group") is the lowest domain of the tree,
//            its nodes are attached to it, and each NIC names its rail switch.
//
// Domain kinds: what the source calls a level ("leaf", "pod", ...), or when it
// names none, the default by height above the nodes (default_kind()).
//
// No pointers between objects: every reference is an index, -1 (topo::none)
// when absent. A Cluster is built and validated by ClusterBuilder (build.hpp)
// and is read-only afterwards. Bandwidths are in Gbit/s, one direction.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace loom::topo {

using Index = int32_t;
constexpr Index none = -1;

// Interned strings (GPU models, performance classes, features, domain kinds):
// objects hold a small id; the table gives the name back.
class Names {
public:
	uint16_t intern(std::string_view name);
	// none when unknown.
	Index find(std::string_view name) const;
	const std::string &name(size_t id) const { return names_[id]; }
	size_t size() const { return names_.size(); }
	const std::vector<std::string> &all() const { return names_; }

private:
	std::vector<std::string> names_;
	std::unordered_map<std::string, uint16_t> ids_;
};

struct Domain {
	std::string name;
	uint16_t kind = 0;  // id in Cluster::kinds ("spine", "pod", "leaf", ...)
	uint16_t level = 0; // depth: 0 for a root
	Index parent = none;
	std::vector<Index> children;
	Index node_begin = 0;   // nodes under this domain (all levels below):
	Index node_end = 0;     //   [node_begin, node_end)
	Index direct_end = 0;   // nodes attached to this domain itself: [node_begin, direct_end)
	int64_t gpu_count = 0;  // GPUs under this domain (all levels below)
	double uplink_gbps = 0; // capacity of the links to the parent; 0 = not limiting/unknown

	Index node_count() const { return node_end - node_begin; }
};

enum class LinkLayer : uint8_t { unknown, infiniband, ethernet };
const char *link_layer_name(LinkLayer l);

// A peer reached over direct NVLinks (no NVSwitch): local GPU index and link count.
struct NvlinkPeer {
	uint16_t gpu = 0;
	uint16_t links = 0;
};

struct Gpu {
	Index node = none;       // owning node
	uint16_t index = 0;      // index on its node (CUDA/NVML order)
	uint16_t model = 0;      // id in Cluster::models
	uint16_t perf_class = 0; // id in Cluster::classes
	int16_t numa = -1;       // NUMA node, -1 unknown
	Index nic = none;        // nearest NIC (global index into Cluster::nics), none if none
	std::string pci_bus_id;  // "0000:07:00.0"
	uint64_t memory_mib = 0;
	bool nvswitch = false;         // NVLinks go to NVSwitches: every NVSwitch GPU of the node is a peer
	uint16_t nvlinks = 0;          // active NVLinks of this GPU
	double nvlink_gbps = 0;        // NVLink bandwidth of this GPU in total (0 = none)
	std::vector<NvlinkPeer> peers; // direct NVLink peers (no NVSwitch)
	float pcie_gts = 0;            // PCIe link speed per lane, GT/s; 0 = unknown
	uint8_t pcie_width = 0;        // PCIe lanes; 0 = unknown
};

struct Nic {
	Index node = none;
	std::string device; // "mlx5_0"
	uint16_t port = 1;
	LinkLayer link_layer = LinkLayer::unknown;
	double rate_gbps = 0;
	int16_t rail = -1; // rail index, -1 unknown
	int16_t numa = -1;
	std::string pci_bus_id;
	std::string guid;         // port or node GUID when known ("0x...")
	Index rail_switch = none; // index into Cluster::rails, none if not on a rail switch
	float pcie_gts = 0;
	uint8_t pcie_width = 0;
};

struct Numa {
	Index node = none;
	int16_t id = 0;
	std::string cpus; // Linux cpulist: "0-55,112-167"
	uint64_t memory_mib = 0;
};

struct Node {
	std::string name;
	Index leaf = none; // the domain the node is attached to; none in node files
	Index nvlink_domain = none;
	uint16_t gpu_model = 0;         // id in Cluster::models of the node's GPUs (first GPU); 0 = ""
	uint16_t perf_class = 0;        // id in Cluster::classes; 0 = ""
	std::vector<uint16_t> features; // ids in Cluster::features, sorted
	Index gpu_begin = 0;
	uint16_t gpu_count = 0;
	Index nic_begin = 0;
	uint16_t nic_count = 0;
	Index numa_begin = 0;
	uint16_t numa_count = 0;
	double nic_gbps = 0;              // injection bandwidth: sum of its NIC rates
	std::string cpu_arch, cpu_vendor; // as NCCL names them; "" unknown
	int16_t cpu_family = -1, cpu_model = -1;
};

// A leaf switch of a rail group: rail 'index' of every node in 'group'.
struct Rail {
	std::string name;
	Index group = none;     // the rail-group domain
	int16_t index = 0;      // rail number inside the group
	double uplink_gbps = 0; // links from this switch up the tree; 0 = unknown
};

struct NvlinkDomain {
	std::string name;         // rack name, or NVML cluster UUID + clique id
	double gbps = 0;          // per-GPU NVLink bandwidth inside the domain
	std::vector<Index> nodes; // ascending
	int64_t gpu_count = 0;
};

// How two GPUs or nodes reach each other.
enum class Via : uint8_t { same, nvlink, pcie, fabric, unreachable };
const char *via_name(Via v);

struct Path {
	Via via = Via::unreachable;
	int hops = -1;       // links traversed: same node 0, one leaf switch 2, ...
	double gbps = 0;     // bottleneck bandwidth; 0 when unknown or unreachable
	Index common = none; // lowest common domain (fabric paths), else none
};

struct Cluster {
	std::string name;
	std::vector<Domain> domains;
	std::vector<Node> nodes;
	std::vector<Gpu> gpus;
	std::vector<Nic> nics;
	std::vector<Numa> numas;
	std::vector<NvlinkDomain> nvlink_domains;
	std::vector<Rail> rails;
	Names kinds, models, classes, features; // id 0 of models/classes is ""
	uint16_t levels = 0;                    // 1 + the deepest domain level (0 without domains)
	double pcie_gbps = 256;                 // GPU-to-GPU inside a node without NVLink (PCIe Gen5 x16)

	// ancestors[node * levels + level]: the node's domain at that level, or none.
	std::vector<Index> ancestors;
	std::unordered_map<std::string, Index> node_index;
	std::unordered_map<std::string, Index> domain_index;
	std::unordered_map<std::string, Index> nvlink_index;
	std::unordered_map<std::string, Index> rail_index;

	Index find_node(std::string_view name) const;
	Index find_domain(std::string_view name) const;

	// The node's domain at 'level' (0 = root), none when the node's leaf is
	// shallower or the node has no domain. O(1).
	Index ancestor(Index node, unsigned level) const
	{
		if (level >= levels || node < 0)
			return none;
		return ancestors[static_cast<size_t>(node) * levels + level];
	}
	// Lowest domain holding both nodes, none if in different trees. O(depth).
	Index common_domain(Index a, Index b) const;
	// Path between two nodes (nvlink when they share an NVLink domain). O(depth).
	Path node_path(Index a, Index b) const;
	// Path between two GPUs (global GPU ids). O(depth).
	Path gpu_path(Index a, Index b) const;

	int64_t total_gpus() const { return static_cast<int64_t>(gpus.size()); }
	bool has_feature(Index node, std::string_view feature) const;
	// Domains at a level, in order.
	std::vector<Index> domains_at(unsigned level) const;
	// Rails of a rail-group domain, by rail number.
	std::vector<Index> rails_of(Index domain) const;
};

// The kind of a domain whose source names none, by its height: 0 for a
// domain without child domains (the nodes hang on it), 1 for the level above
// ...: "leaf", "pod", "spine", "core", then "level-N" (N = height).
std::string default_kind(unsigned height);
// The kind --locality names an NVLink domain by.
constexpr const char *nvlink_kind = "nvlink";
// The kinds --locality accepts on this cluster, tightest first: the domain
// kinds from the lowest level up, then "nvlink" when it has NVLink domains.
std::vector<std::string> locality_kinds(const Cluster &c);

} // namespace loom::topo
