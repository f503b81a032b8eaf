// loom sim: the communication and GPU-class cost model.
//
// A job's run time in a trace is its time at the reference placement (every
// node under one leaf switch, each GPU at its NIC's rate) on the reference
// class. A step is compute plus communication; communication is a share f of
// the step at the reference (comm=heavy 0.40, normal 0.15, light 0.03) and
// scales with the bottleneck bandwidth per GPU B of the placement:
//
//   step factor = (1 - f) + f * B_ref / B          (run time x step factor)
//
//   one node:              factor 1 (the node's NVSwitch, as traced)
//   one NVLink domain:     B = the domain's NVLink bandwidth per GPU
//   one leaf / rail group: B = B_ref = the NIC rate per GPU
//   several leaves:        B = min over the domains below the common one that
//                          hold the job, of uplink / GPUs under that domain
//                          (a full domain's share of its uplinks: leaf_oversub
//                          and pod_oversub in generated clusters)
// That is the 'share' model (the default): every GPU of the job sends across
// every domain it spans, as an all-to-all or a tree does, whatever the order
// of its ranks. The 'ring' model is a ring all-reduce over the job's nodes in
// their rank order, one ring per GPU (rail): only the ring edges that leave a
// domain load its uplink, and the job's share of the uplink (its GPUs under
// the domain / the domain's GPUs, as other jobs fill the rest) is divided
// among the x_d * G flows of those edges:
//
//   B = min(B_ref, min over those domains d of
//           uplink_d * (job GPUs under d / GPUs under d) / (x_d * G))
//
// so a ring that leaves every domain once does not feel a full-bisection
// uplink, and one in Slurm's order on a fabric cabled across the node names
// (every edge leaving its leaf, x_d = the job's nodes under d) is back at the
// share model's figure. The rank order is Slurm's (node table order) or
// loom's (rank_order: what spank_place's LOOM_HOSTFILE gives the job).
// A degraded uplink (uplink_factor < 1: a lossy or flapping link, a failed
// member of a bundle) scales that domain's uplink in both models.
// Contention (CostModel::crossing set): instead of assuming every other GPU
// under a domain sends across its uplink (a full domain), the uplink is shared
// by the GPUs that do: the job's own under that domain and those of the jobs
// already running across it (crossing, kept by the simulator):
//
//   share: B = min over d of uplink_d / (job GPUs under d + crossing_d)
//   ring:  the job's share of uplink_d is job GPUs under d / (that + crossing_d)
//
// never below the full-domain figures (crossing_d is at most the domain's other
// GPUs), never above B_ref. A job keeps the bandwidth it had at its start: the
// jobs that start across the same uplinks later see it, it does not see them.
// GPU classes: a gang runs at the speed of its slowest node's class
// (class_speed, default 1 for every class): run time / speed.
#pragma once

#include "lib/place/hints.hpp"
#include "lib/topo/model.hpp"
#include "lib/util/expected.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace loom::sim {

enum class CommModel { share, ring };

struct CostModel {
	double comm_heavy = 0.40, comm_normal = 0.15, comm_light = 0.03;
	std::map<std::string, double> class_speed; // by class name; missing: 1
	CommModel model = CommModel::share;
	bool rank_order = false;           // ring: loom's rank order, else Slurm's
	std::vector<double> uplink_factor; // by domain index; missing or empty: 1
	// A node's place in Slurm's node table (slurm.conf lists nodes by name:
	// slurm_order); empty: the cluster's own index order.
	std::vector<uint32_t> slurm_rank;
	// Contention: GPUs of running jobs that send across each domain's uplink,
	// by domain index (Span::crossing of each); null: every domain is full.
	const std::vector<double> *crossing = nullptr;
};

// The nodes' places in name order, digits compared as numbers (n2 < n10), as
// slurm.conf lists them and Slurm orders a job's nodes.
std::vector<uint32_t> slurm_order(const topo::Cluster &c);

// "share" / "ring"; parse_comm_model names the bad word.
const char *comm_model_name(CommModel m);
expected<CommModel> parse_comm_model(std::string_view s);

struct Span {
	int leaves = 0;
	int nvlink_domains = 0; // 0 when a node has none
	int common_level = -1;  // level of the lowest domain holding every node (-1: none)
	double bottleneck_gbps = 0;
	int ring_leaf_edges = 0; // ring edges between leaves, in the model's rank order (0 unless ring)
	int degraded_leaves = 0; // leaves holding the job whose uplink is degraded (uplink_factor < 1)
	double step_factor = 1;  // communication
	double speed = 1;        // class
	// The domains whose uplinks the job sends across (below its common
	// domain) with its GPUs under each: what it adds to CostModel::crossing
	// while it runs. Empty for a job inside one leaf or NVLink domain.
	std::vector<std::pair<topo::Index, double>> crossing;
};

Span placement_cost(const topo::Cluster &c, const std::vector<topo::Index> &nodes, place::Comm comm,
		    const CostModel &m);

} // namespace loom::sim
