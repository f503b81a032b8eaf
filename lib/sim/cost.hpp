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
// GPU classes: a gang runs at the speed of its slowest node's class
// (class_speed, default 1 for every class): run time / speed.
#pragma once

#include "lib/place/hints.hpp"
#include "lib/topo/model.hpp"

#include <map>
#include <string>
#include <vector>

namespace loom::sim {

struct CostModel {
	double comm_heavy = 0.40, comm_normal = 0.15, comm_light = 0.03;
	std::map<std::string, double> class_speed; // by class name; missing: 1
};

struct Span {
	int leaves = 0;
	int nvlink_domains = 0;  // 0 when a node has none
	int common_level = -1;   // level of the lowest domain holding every node (-1: none)
	double bottleneck_gbps = 0;
	double step_factor = 1;  // communication
	double speed = 1;        // class
};

Span placement_cost(const topo::Cluster &c, const std::vector<topo::Index> &nodes, place::Comm comm,
		    const CostModel &m);

} // namespace loom::sim
