// loom placement: the free-capacity index of a cluster.
//
// A State holds, for every node, its GPUs and cores (total and free), a health
// weight, a suspect flag and whether Slurm may use it at all; and for every
// fabric domain (at every level), for the whole cluster and for every NVLink
// domain, a Capacity: how many nodes are available, fully idle, suspect, and
// how many have k GPUs free. Every change to a node updates the Capacity of
// its ancestors and of its NVLink domain in O(depth), so that a placement
// decision reads domain counts and never walks all nodes of a large cluster.
//
// Capacities count only what the State knows (not partitions, reservations,
// features): for a particular job they are upper bounds, and the engine checks
// the nodes inside the domains it examines.
#pragma once

#include "lib/topo/model.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <vector>

namespace loom::place {

using topo::Index;

// A set of nodes by model index (the plugin converts Slurm's node bitmap).
class NodeMask {
public:
	NodeMask() = default;
	explicit NodeMask(size_t nodes, bool all = false);
	size_t size() const { return n_; }
	bool test(Index i) const
	{
		return i >= 0 && static_cast<size_t>(i) < n_ && (w_[static_cast<size_t>(i) >> 6] >> (i & 63)) & 1;
	}
	void set(Index i, bool on = true);
	size_t count() const;

private:
	std::vector<uint64_t> w_;
	size_t n_ = 0;
};

// The nodes Slurm offers for one job (partition, reservation, node states).
using Allowed = NodeMask;

// Free capacity of a group of nodes (a domain, an NVLink domain, the cluster).
struct Capacity {
	static constexpr int buckets = 9; // nodes with 0..7 free GPUs, last: 8 or more
	int32_t nodes = 0;                // available nodes
	int32_t idle = 0;                 // available nodes with every GPU and core free
	int32_t suspect = 0;              // available suspect nodes
	int32_t by_free[buckets] = {};    // available nodes by free GPUs
	int64_t free_gpus = 0;            // on available nodes
	int64_t free_cores = 0;           // on available nodes
	int64_t total_gpus = 0;           // on all nodes, available or not

	// Available nodes with at least g free GPUs (exact for g <= 8, else an
	// upper bound: nodes with 8 or more).
	int32_t with_free(int g) const;
	// Share of the GPUs in use or unavailable, 0..1 (0 without GPUs).
	double occupancy() const;
};

class State {
public:
	// Capacity from the model: GPUs per node, cores from the NUMA cpulists
	// (0 when the model has none: cores are then not tracked for that node).
	// Every node starts idle, available and healthy.
	explicit State(const topo::Cluster &cluster);

	const topo::Cluster &cluster() const { return *c_; }
	size_t node_count() const { return nodes_.size(); }

	// Changes; each is O(depth). Out-of-range nodes or amounts are errors and
	// change nothing.
	status set_capacity(Index node, int gpus, int cores);
	status set_node_free(Index node, int free_gpus, int free_cores);
	status allocate(Index node, int gpus, int cores);
	status release(Index node, int gpus, int cores);
	// weight: 1 healthy .. 0 about to fail; suspect: failing checks or a
	// failure history (placed last).
	status set_health(Index node, double weight, bool suspect);
	// Unavailable: down, drained, not in Slurm. Its free capacity leaves every count.
	status set_available(Index node, bool available);
	// A node whose own fabric link looks degraded (a loom:suspect mark of a
	// link check: port errors, link flaps, a lower rate). Its leaf counts it.
	status set_link_suspect(Index node, bool suspect);

	int total_gpus(Index n) const { return nodes_[n].total_gpus; }
	int free_gpus(Index n) const { return nodes_[n].free_gpus; }
	int total_cores(Index n) const { return nodes_[n].total_cores; }
	int free_cores(Index n) const { return nodes_[n].free_cores; }
	double health(Index n) const { return nodes_[n].health; }
	bool suspect(Index n) const { return nodes_[n].suspect; }
	bool available(Index n) const { return nodes_[n].available; }
	bool link_suspect(Index n) const { return nodes_[n].link_suspect; }
	// Share of a leaf's nodes whose links look degraded, 0..1: how degraded
	// the leaf's part of the fabric looks (0 for a domain that is no leaf).
	double link_degradation(Index leaf) const;
	// Available with every GPU and core free.
	bool idle(Index n) const;

	// Capacity of a fabric domain, of the whole cluster, of an NVLink domain.
	const Capacity &domain(Index d) const { return dom_[static_cast<size_t>(d)]; }
	const Capacity &total() const { return dom_.back(); }
	const Capacity &nvlink(Index v) const { return nvl_[static_cast<size_t>(v)]; }
	// GPU classes present under a domain / in the cluster: bit per class id
	// (ids of 63 and above share bit 63).
	uint64_t domain_classes(Index d) const { return classes_[static_cast<size_t>(d)]; }
	uint64_t nvlink_classes(Index v) const { return nvl_classes_[static_cast<size_t>(v)]; }
	// The model's capacity of a node (what set_capacity overrides).
	int model_cores(Index n) const;
	// GPUs of the largest node.
	int max_node_gpus() const { return max_gpus_; }
	// Top domains, and nodes outside every domain (kept here so that no
	// decision has to look for them).
	const std::vector<Index> &roots() const { return roots_; }
	const std::vector<Index> &loose_nodes() const { return loose_; }

private:
	struct NodeState {
		uint16_t total_gpus = 0, free_gpus = 0;
		int32_t total_cores = 0, free_cores = 0;
		float health = 1;
		bool suspect = false;
		bool available = true;
		bool link_suspect = false;
	};
	void account(Index n, int sign);
	status check_node(Index n) const;

	const topo::Cluster *c_;
	std::vector<NodeState> nodes_;
	std::vector<Capacity> dom_; // one per domain, then the whole cluster
	std::vector<Capacity> nvl_;
	std::vector<uint64_t> classes_, nvl_classes_;
	std::vector<int32_t> link_suspects_; // per domain: its own nodes marked link_suspect
	int max_gpus_ = 0;
	std::vector<Index> roots_, loose_;
};

// A suspect node (failing checks: loom health's "loom:suspect" mark) weighs
// at most this much, whatever its failure history says.
constexpr double suspect_health_cap = 0.5;
// The health weight placement gives a node: its failure history's weight
// (1 healthy .. 0 about to fail), capped at suspect_health_cap while suspect.
double node_health(double history_weight, bool suspect);
// Set a node's health from its history and suspect mark when either changed;
// true when the state changed.
bool update_health(State &state, Index node, double history_weight, bool suspect);

inline uint64_t class_bit(uint16_t id) { return uint64_t(1) << (id < 63 ? id : 63); }

// CPUs in a Linux cpulist ("0-55,112-167" -> 112); 0 for an empty or bad list.
int count_cpulist(const std::string &cpus);

} // namespace loom::place
