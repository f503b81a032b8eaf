// Unit tests for loom sim's cost model: a placement's step factor by leaf,
// pod and NVLink domain, the ring model in Slurm's rank order and loom's,
// uplinks shared by the jobs that cross them, and heavy gangs kept off
// degraded leaves.
#include "tests/unit/check_main.hpp"
#include "tests/unit/sim_fixture.hpp"

#include "lib/place/engine.hpp"
#include "lib/sim/cluster_gen.hpp"
#include "lib/sim/cost.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace loom;
using namespace loom::sim;

START_TEST(cost_model)
{
	// Leaves of 18 nodes (3200 Gbit/s each), uplinks non-blocking at the leaf,
	// 2:1 at the pod: a leaf's share per GPU 400, a pod's 200.
	topo::Cluster c = make("gpus=4608 fabric=nvl72 leaves_per_pod=2");
	CostModel m;
	Span one = placement_cost(c, nodes_of(c, {"n00001"}), place::Comm::heavy, m);
	ck_assert(one.step_factor == 1);
	Span rack = placement_cost(c, nodes_of(c, {"n00001", "n00009"}), place::Comm::heavy, m);
	ck_assert_int_eq(rack.nvlink_domains, 1);
	ck_assert(std::fabs(rack.step_factor - (0.6 + 0.4 * 400.0 / 7200)) < 1e-9);
	Span leaf = placement_cost(c, nodes_of(c, {"n00001", "n00010"}), place::Comm::heavy, m);
	ck_assert_int_eq(leaf.leaves, 1);
	ck_assert_int_eq(leaf.nvlink_domains, 2);
	ck_assert(std::fabs(leaf.step_factor - 1) < 1e-9);
	Span two_leaves = placement_cost(c, nodes_of(c, {"n00001", "n00019"}), place::Comm::heavy, m);
	ck_assert_int_eq(two_leaves.leaves, 2);
	ck_assert(std::fabs(two_leaves.step_factor - 1) < 1e-9); // non-blocking leaf uplinks
	Span two_pods = placement_cost(c, nodes_of(c, {"n00001", "n00037"}), place::Comm::heavy, m);
	ck_assert(std::fabs(two_pods.bottleneck_gbps - 200) < 1e-9);
	ck_assert(std::fabs(two_pods.step_factor - (0.6 + 0.4 * 2)) < 1e-9);
	Span light = placement_cost(c, nodes_of(c, {"n00001", "n00037"}), place::Comm::light, m);
	ck_assert(std::fabs(light.step_factor - (0.97 + 0.03 * 2)) < 1e-9);
}
END_TEST

// The ring model on 2 leaves of 4 nodes cabled across the names (leaf1: n1 n3
// n5 n7), leaves 2:1 to the pod: a leaf's uplink is 8 x 400 x 4 / 2 = 6400
// Gbit/s for its 32 GPUs. A 4-node job, 2 nodes per leaf, has half of it
// (3200). In Slurm's order (n1 n2 n3 n4) all 4 ring edges cross, 2 leaving
// each leaf: 16 flows, 200 Gbit/s each; in loom's (n1 n3 n2 n4) 2 cross, 8
// flows, 400: no bottleneck. The share model gives 6400 / 32 = 200 for any order.
START_TEST(ring_model_and_rank_order)
{
	topo::Cluster c = make("gpus=64 fabric=fat nodes_per_leaf=4 leaves_per_pod=2 leaf_oversub=2 cabling=across");
	ck_assert_int_eq(c.nodes.size(), 8);
	auto leaf = [&](const char *n) -> const std::string & {
		return c.domains[static_cast<size_t>(c.nodes[static_cast<size_t>(c.find_node(n))].leaf)].name;
	};
	ck_assert_str_eq(leaf("n00001").c_str(), leaf("n00003").c_str());
	ck_assert_str_eq(leaf("n00005").c_str(), leaf("n00007").c_str());
	ck_assert_str_eq(leaf("n00001").c_str(), leaf("n00007").c_str());
	ck_assert_str_ne(leaf("n00001").c_str(), leaf("n00002").c_str());
	auto job = nodes_of(c, {"n00004", "n00001", "n00003", "n00002"});
	CostModel m;
	Span share = placement_cost(c, job, place::Comm::heavy, m);
	ck_assert(std::fabs(share.bottleneck_gbps - 200) < 1e-9);
	m.model = CommModel::ring;
	m.slurm_rank = slurm_order(c);
	Span slurm = placement_cost(c, job, place::Comm::heavy, m);
	ck_assert_int_eq(slurm.ring_leaf_edges, 4);
	ck_assert(std::fabs(slurm.bottleneck_gbps - 200) < 1e-9);
	ck_assert(std::fabs(slurm.step_factor - (0.6 + 0.4 * 2)) < 1e-9);
	m.rank_order = true;
	Span loom = placement_cost(c, job, place::Comm::heavy, m);
	ck_assert_int_eq(loom.ring_leaf_edges, 2);
	ck_assert(std::fabs(loom.step_factor - 1) < 1e-9);
	// leaf1's uplink at half its capacity: 1600 for the job, 8 flows: 200.
	m.uplink_factor.assign(c.domains.size(), 1);
	m.uplink_factor[static_cast<size_t>(c.nodes[static_cast<size_t>(c.find_node("n00001"))].leaf)] = 0.5;
	Span degraded = placement_cost(c, job, place::Comm::heavy, m);
	ck_assert_int_eq(degraded.degraded_leaves, 1);
	ck_assert(std::fabs(degraded.bottleneck_gbps - 200) < 1e-9);
	// Slurm's order is the names' order, digits as numbers.
	topo::Cluster b = make("gpus=64 fabric=fat nodes_per_leaf=4 leaves_per_pod=2");
	auto rank = slurm_order(b);
	ck_assert(rank[static_cast<size_t>(b.find_node("n00002"))] < rank[static_cast<size_t>(b.find_node("n00005"))]);
	ck_assert(rank[static_cast<size_t>(b.find_node("n00005"))] < rank[static_cast<size_t>(b.find_node("n00008"))]);
	ck_assert(!parse_comm_model("tree").has_value());
	ck_assert(!parse_cluster_gen("gpus=64 cabling=diagonal").has_value());
}
END_TEST

// Contention: leaves of 4 nodes (32 GPUs) 2:1 to the pod, an uplink of 6400
// Gbit/s. A 2-node job across two leaves has 8 GPUs under each; with every
// GPU of the leaf sending (no contention model) each gets 6400 / 32 = 200,
// a heavy step 0.6 + 0.4 x 400 / 200 = 1.4. With the uplink shared by those
// that send: alone, 6400 / 8 = 800, capped at the NIC's 400 (step 1); with
// 16 GPUs of other jobs across leaf1, 6400 / 24 = 266.7 (step 1.2); with 24,
// the full leaf's 200 again.
START_TEST(contention_shares_the_uplink)
{
	topo::Cluster c = make("gpus=64 fabric=fat nodes_per_leaf=4 leaves_per_pod=2 leaf_oversub=2");
	auto job = nodes_of(c, {"n00001", "n00005"});
	topo::Index leaf1 = c.nodes[static_cast<size_t>(c.find_node("n00001"))].leaf;
	topo::Index leaf2 = c.nodes[static_cast<size_t>(c.find_node("n00005"))].leaf;
	ck_assert(leaf1 != leaf2);
	for (CommModel model : {CommModel::share, CommModel::ring}) {
		CostModel m;
		m.model = model;
		Span full = placement_cost(c, job, place::Comm::heavy, m);
		ck_assert_msg(std::fabs(full.bottleneck_gbps - 200) < 1e-9, "%s: %g", comm_model_name(model),
			      full.bottleneck_gbps);
		ck_assert_int_eq(full.crossing.size(), 2);
		ck_assert_int_eq(full.crossing[0].first, std::min(leaf1, leaf2));
		ck_assert_int_eq(full.crossing[1].first, std::max(leaf1, leaf2));
		ck_assert(full.crossing[0].second == 8 && full.crossing[1].second == 8);
		std::vector<double> crossing(c.domains.size(), 0.0);
		m.crossing = &crossing;
		Span alone = placement_cost(c, job, place::Comm::heavy, m);
		ck_assert_msg(std::fabs(alone.bottleneck_gbps - 400) < 1e-9, "%s: %g", comm_model_name(model),
			      alone.bottleneck_gbps);
		ck_assert(std::fabs(alone.step_factor - 1) < 1e-9);
		crossing[static_cast<size_t>(leaf1)] = 16;
		Span shared = placement_cost(c, job, place::Comm::heavy, m);
		ck_assert_msg(std::fabs(shared.bottleneck_gbps - 6400.0 / 24) < 1e-9, "%s: %g", comm_model_name(model),
			      shared.bottleneck_gbps);
		ck_assert(std::fabs(shared.step_factor - 1.2) < 1e-9);
		crossing[static_cast<size_t>(leaf1)] = 24;
		Span busy = placement_cost(c, job, place::Comm::heavy, m);
		ck_assert(std::fabs(busy.bottleneck_gbps - 200) < 1e-9);
		// Inside one leaf nothing crosses an uplink.
		Span one = placement_cost(c, nodes_of(c, {"n00001", "n00002"}), place::Comm::heavy, m);
		ck_assert(one.crossing.empty() && std::fabs(one.step_factor - 1) < 1e-9);
	}
}
END_TEST

// A heavy gang too large for one leaf stays off a leaf with degraded links
// while the clean leaves hold it, though that leaf has the most free nodes;
// a light gang, or a heavy one the clean leaves cannot hold, takes it.
START_TEST(heavy_gang_spans_clean_leaves_first)
{
	topo::Cluster c = make("gpus=96 fabric=fat nodes_per_leaf=4 leaves_per_pod=3");
	place::State s(c);
	auto leaf_of = [&](topo::Index n) { return c.nodes[static_cast<size_t>(n)].leaf; };
	topo::Index bad = leaf_of(c.find_node("n00001"));
	ck_assert(s.set_link_suspect(c.find_node("n00001"), true).has_value());
	ck_assert(s.allocate(c.find_node("n00005"), 8, 0).has_value()); // leaf2: 3 free
	ck_assert(s.allocate(c.find_node("n00009"), 8, 0).has_value()); // leaf3: 3 free
	auto on_bad = [&](const char *req) {
		auto r = place::parse_request(req);
		ck_assert(r.has_value());
		auto d = place::place(s, *r, nullptr, place::Weights{}, 2);
		ck_assert_msg(d.has_value() && d->placed(), "%s: not placed", req);
		int n = 0;
		for (topo::Index x : d->candidates[0].nodes)
			n += leaf_of(x) == bad;
		return n;
	};
	ck_assert_int_eq(on_bad("nodes=6 gpus_per_node=8 comm=heavy"), 0);
	ck_assert_int_gt(on_bad("nodes=6 gpus_per_node=8 comm=light"), 0);
	ck_assert_int_gt(on_bad("nodes=7 gpus_per_node=8 comm=heavy"), 0);
}
END_TEST

TCase *sim_cost_tests()
{
	TCase *t = tcase_create("cost");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, cost_model);
	tcase_add_test(t, ring_model_and_rank_order);
	tcase_add_test(t, contention_shares_the_uplink);
	tcase_add_test(t, heavy_gang_spans_clean_leaves_first);
	return t;
}
