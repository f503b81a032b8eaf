// Unit tests for loom sim: generated clusters, trace readers (on real Philly
// rows and a hand-written Alibaba file), the failure model and its outcomes
// through lib/health, the cost model, and the scheduler loop.
#include "tests/unit/check_main.hpp"

#include "lib/place/engine.hpp"
#include "lib/place/spares.hpp"
#include "lib/sim/cluster_gen.hpp"
#include "lib/sim/cost.hpp"
#include "lib/sim/failures.hpp"
#include "lib/sim/jobs.hpp"
#include "lib/sim/report.hpp"
#include "lib/sim/simulator.hpp"
#include "lib/topo/build.hpp"

#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <unistd.h>

using namespace loom;
using namespace loom::sim;

namespace {

topo::Cluster make(const std::string &spec)
{
	auto g = parse_cluster_gen(spec);
	ck_assert_msg(g.has_value(), "%s", g ? "" : g.error().str().c_str());
	auto s = cluster_spec(*g);
	ck_assert(s.has_value());
	auto c = topo::build_cluster(std::move(*s));
	ck_assert_msg(c.has_value(), "%s", c ? "" : c.error().str().c_str());
	return std::move(*c);
}

std::vector<topo::Index> nodes_of(const topo::Cluster &c, std::initializer_list<const char *> names)
{
	std::vector<topo::Index> v;
	for (const char *n : names)
		v.push_back(c.find_node(n));
	return v;
}

} // namespace

START_TEST(generated_nvl72)
{
	// 10,240 GPUs of 8 per node: 1,280 nodes; racks of 9 nodes, two per leaf
	// of 18: 72 leaves (the last one of 2 nodes), 143 racks.
	topo::Cluster c = make("gpus=10240 fabric=nvl72");
	ck_assert_int_eq(c.nodes.size(), 1280);
	ck_assert_int_eq(c.nvlink_domains.size(), 143);
	size_t leaves = 0;
	for (const topo::Domain &d : c.domains)
		leaves += d.direct_end > d.node_begin;
	ck_assert_int_eq(leaves, 72);
	for (const topo::NvlinkDomain &v : c.nvlink_domains) {
		ck_assert(v.nodes.size() <= 9);
		for (topo::Index n : v.nodes) // a rack never straddles two leaves
			ck_assert_int_eq(c.nodes[static_cast<size_t>(n)].leaf, c.nodes[static_cast<size_t>(v.nodes[0])].leaf);
	}
	for (const topo::Node &n : c.nodes)
		ck_assert_int_eq(n.gpu_count, 8);
}
END_TEST

START_TEST(generated_rail_and_classes)
{
	// Rail groups of 32 nodes: every NIC r of a node on rail switch r of its group.
	topo::Cluster c = make("gpus=2048 fabric=rail classes=h100:50,b200:50 leaves_per_pod=2");
	ck_assert_int_eq(c.nodes.size(), 256);
	ck_assert_int_eq(c.rails.size(), 8 * 8); // 8 groups of 32 nodes, 8 rails each
	for (const topo::Nic &nic : c.nics) {
		const topo::Rail &r = c.rails[static_cast<size_t>(nic.rail_switch)];
		ck_assert_int_eq(r.index, nic.rail);
		ck_assert_int_eq(r.group, c.nodes[static_cast<size_t>(nic.node)].leaf);
	}
	// Two classes, half the nodes each, whole pods each (4 pods of 64 nodes).
	std::map<std::string, int> per;
	for (const topo::Node &n : c.nodes)
		per[c.classes.name(n.perf_class)]++;
	ck_assert_int_eq(per["h100"], 128);
	ck_assert_int_eq(per["b200"], 128);
	ck_assert_str_eq(c.classes.name(c.nodes[0].perf_class).c_str(), "h100");
	ck_assert_str_eq(c.classes.name(c.nodes[255].perf_class).c_str(), "b200");
}
END_TEST

START_TEST(generate_bad_spec)
{
	auto g = parse_cluster_gen("gpus=1024 fabric=torus");
	ck_assert(!g.has_value());
	ck_assert_msg(g.error().str().find("fabric") != std::string::npos, "%s", g.error().str().c_str());
	auto h = parse_cluster_gen("fabric=nvl72 nodes_per_leaf=16");
	ck_assert(!h.has_value());
	ck_assert_msg(h.error().str().find("whole NVLink domains") != std::string::npos, "%s", h.error().str().c_str());
	ck_assert(!parse_cluster_gen("gpus=8000000").has_value());
	ck_assert(!parse_cluster_gen("classes=h100:0").has_value());
}
END_TEST

START_TEST(philly_rows)
{
	TraceFill f;
	auto jobs = read_philly(test::data("sim/philly-slice.csv"), f);
	ck_assert_msg(jobs.has_value(), "%s", jobs ? "" : jobs.error().str().c_str());
	ck_assert_int_eq(jobs->size(), 30); // 30 data rows
	// The earliest row (2017-09-29 07:58:32, 860662 s, 1 GPU) comes first.
	const Job &first = jobs->front();
	ck_assert_int_eq(first.submit_s, 0);
	ck_assert_int_eq(first.work_s, 860662);
	ck_assert_int_eq(first.limit_s, 479 * 3600); // 2 x 860662 s = 478.1 h, rounded up
	ck_assert_int_eq(first.nodes, 1);
	ck_assert(!first.ckpt && first.comm == place::Comm::light);
	// Next: 2017-10-06 01:49:35, 16 GPUs, 195 s: 6 d 17:51:03 later.
	const Job &second = (*jobs)[1];
	ck_assert_int_eq(second.submit_s, 6 * 86400 + 17 * 3600 + 51 * 60 + 3);
	ck_assert_int_eq(second.nodes, 2);
	ck_assert_int_eq(second.gpus_per_node, 8);
	ck_assert_int_eq(second.limit_s, 3600);
	ck_assert(second.ckpt && second.comm == place::Comm::normal);
	int seen = 0;
	for (const Job &j : *jobs) {
		if (j.work_s == 1257) { // 12 GPUs: 2 nodes of 6
			ck_assert_int_eq(j.nodes, 2);
			ck_assert_int_eq(j.gpus_per_node, 6);
			seen++;
		}
		if (j.work_s == 7673) { // 128 GPUs: 16 nodes of 8, heavy
			ck_assert_int_eq(j.nodes, 16);
			ck_assert(j.comm == place::Comm::heavy);
			seen++;
		}
	}
	ck_assert_int_eq(seen, 2);
	// The first 7 days hold those two rows; twice as fast, the second comes at half the time.
	f.days = 7;
	f.time_scale = 2;
	auto week = read_philly(test::data("sim/philly-slice.csv"), f);
	ck_assert(week.has_value());
	ck_assert_int_eq(week->size(), 2);
	ck_assert_int_eq((*week)[1].submit_s, (6 * 86400 + 17 * 3600 + 51 * 60 + 3) / 2);
}
END_TEST

START_TEST(trace_errors)
{
	char path[] = "/tmp/loom-sim-trace-XXXXXX";
	int fd = mkstemp(path);
	ck_assert(fd >= 0);
	std::string text = "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,66.0,1,66.0,a\n"
			   "2017-10-09 07:01:56,66.0,two,66.0,a\n";
	ck_assert(write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
	close(fd);
	auto t = read_trace(path, TraceFill{}, {});
	ck_assert(!t.has_value());
	std::string msg = t.error().str();
	ck_assert_msg(msg.find(std::string(path) + ":3") != std::string::npos && msg.find("num_gpus") != std::string::npos,
		      "%s", msg.c_str());
	unlink(path);
	auto none = read_trace("/nonexistent/trace.csv", TraceFill{}, {});
	ck_assert(!none.has_value());
}
END_TEST

START_TEST(alibaba_pods)
{
	TraceFill f;
	auto jobs = read_alibaba(test::data("sim/alibaba-pods-handwritten.csv"), f, {"V100M32", "h100"});
	ck_assert_msg(jobs.has_value(), "%s", jobs ? "" : jobs.error().str().c_str());
	// Seven pods: one CPU-only and two that never ran (one never scheduled) are left out.
	ck_assert_int_eq(jobs->size(), 4);
	ck_assert_int_eq((*jobs)[0].work_s, 12537);
	ck_assert_int_eq((*jobs)[1].gpus(), 1);	    // gpu_milli 460: a whole GPU
	ck_assert_int_eq((*jobs)[1].work_s, 3500);   // from scheduling at 200 to deletion at 3700
	ck_assert_int_eq((*jobs)[1].submit_s, 100);  // created at 100
	ck_assert_int_eq((*jobs)[2].gpus(), 8);
	ck_assert_str_eq((*jobs)[2].gpu_class.c_str(), "V100M32"); // the cluster has that class
	ck_assert_str_eq((*jobs)[3].gpu_class.c_str(), "");	   // G3: the cluster has none
}
END_TEST

START_TEST(failure_outcomes)
{
	// Each cause's evidence through jobcomp/health's own classifier.
	FailureModel m = default_failure_model();
	std::vector<std::string> job = {"n00001", "n00002", "n00003"};
	std::map<std::string, const Cause *> by;
	for (const Cause &c : m.causes)
		by[c.name] = &c;
	Outcome gpu = judge_failure(*by["gpu"], 7, job, "n00002", true, 0, 10);
	ck_assert(gpu.cls == health::FailureClass::gpu_fault);
	ck_assert(gpu.requeue);
	ck_assert_int_eq(gpu.drain.size(), 1);
	ck_assert_str_eq(gpu.drain[0].c_str(), "n00002");
	Outcome host = judge_failure(*by["host"], 7, job, "n00003", false, 0, 10);
	ck_assert(host.cls == health::FailureClass::node_failure);
	ck_assert(host.requeue && host.drain.size() == 1 && host.drain[0] == "n00003");
	Outcome net = judge_failure(*by["network"], 7, job, "n00001", true, 0, 10);
	ck_assert(net.cls == health::FailureClass::network_fault);
	ck_assert(net.drain.size() == 1 && net.drain[0] == "n00001");
	Outcome hang = judge_failure(*by["nccl"], 7, job, "n00001", true, 0, 10);
	ck_assert(hang.cls == health::FailureClass::nccl_timeout);
	ck_assert(hang.requeue && hang.drain.empty()); // a watchdog timeout blames no node
	Outcome bug = judge_failure(*by["software"], 7, job, "n00001", true, 0, 10);
	ck_assert(bug.cls == health::FailureClass::user_error);
	ck_assert(!bug.requeue && bug.drain.empty());
	Outcome spent = judge_failure(*by["gpu"], 7, job, "n00002", true, 10, 10);
	ck_assert(!spent.requeue && spent.drain.size() == 1); // budget spent: drained, not requeued
	for (const char *c : {"hbm", "sram", "gsp"})
		ck_assert_msg(judge_failure(*by[c], 7, job, "n00002", true, 0, 10).cls == health::FailureClass::gpu_fault, "%s", c);
	ck_assert(judge_failure(*by["nic"], 7, job, "n00002", true, 0, 10).cls == health::FailureClass::network_fault);
}
END_TEST

START_TEST(failure_draws)
{
	FailureModel m = default_failure_model();
	// 10,000 nodes for 100 days at 3.79 per 1000 node-days: 3,790 expected
	// (Poisson: sd 62).
	auto a = draw_failures(m, 10000, 100 * 86400, 5);
	auto b = draw_failures(m, 10000, 100 * 86400, 5);
	ck_assert_int_eq(a.size(), b.size());
	for (size_t i = 0; i < a.size(); i++)
		ck_assert(a[i].t == b[i].t && a[i].node == b[i].node && a[i].cause == b[i].cause);
	ck_assert_msg(std::fabs(static_cast<double>(a.size()) - 3790) < 4 * 62, "%zu failures", a.size());
	// Lemons: 1% of the nodes at 10x the rate hold 10/(99+10) = 9.2% of the failures.
	std::map<int32_t, int> per;
	for (const Failure &f : a)
		per[f.node]++;
	int lemon_failures = 0;
	for (const auto &[node, n] : per)
		if (n >= 4) // a normal node expects 0.35
			lemon_failures += n;
	ck_assert_msg(lemon_failures > 200 && lemon_failures < 500, "%d", lemon_failures);
	// Causes in their shares: the GPU (30.1%) about 1,140 of them.
	size_t gpu = 0;
	for (const Failure &f : a)
		gpu += m.causes[f.cause].name == "gpu";
	ck_assert_msg(gpu > 1000 && gpu < 1290, "%zu", gpu);
	FailureModel off = m;
	off.none = true;
	ck_assert(draw_failures(off, 10000, 86400, 1).empty());
}
END_TEST

START_TEST(failure_model_file)
{
	auto m = parse_failure_model("rate=6.5 lemon_share=0\ncause.gpu.repair=1d cause.software.share=0\n", "test.model");
	ck_assert_msg(m.has_value(), "%s", m ? "" : m.error().str().c_str());
	ck_assert(std::fabs(m->rate_per_1000_node_days - 6.5) < 1e-9);
	for (const Cause &c : m->causes) {
		if (c.name == "gpu")
			ck_assert_int_eq(c.repair_s, 86400);
		if (c.name == "software")
			ck_assert(c.share == 0);
	}
	auto bad = parse_failure_model("cause.cosmic.share=1\n", "test.model");
	ck_assert(!bad.has_value());
	ck_assert_msg(bad.error().str().find("test.model:1") != std::string::npos &&
			      bad.error().str().find("cause.cosmic.share") != std::string::npos,
		      "%s", bad.error().str().c_str());
}
END_TEST

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
	auto leaf = [&](const char *n) -> const std::string & { return c.domains[static_cast<size_t>(c.nodes[static_cast<size_t>(c.find_node(n))].leaf)].name; };
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
		ck_assert_msg(std::fabs(full.bottleneck_gbps - 200) < 1e-9, "%s: %g", comm_model_name(model), full.bottleneck_gbps);
		ck_assert_int_eq(full.crossing.size(), 2);
		ck_assert_int_eq(full.crossing[0].first, std::min(leaf1, leaf2));
		ck_assert_int_eq(full.crossing[1].first, std::max(leaf1, leaf2));
		ck_assert(full.crossing[0].second == 8 && full.crossing[1].second == 8);
		std::vector<double> crossing(c.domains.size(), 0.0);
		m.crossing = &crossing;
		Span alone = placement_cost(c, job, place::Comm::heavy, m);
		ck_assert_msg(std::fabs(alone.bottleneck_gbps - 400) < 1e-9, "%s: %g", comm_model_name(model), alone.bottleneck_gbps);
		ck_assert(std::fabs(alone.step_factor - 1) < 1e-9);
		crossing[static_cast<size_t>(leaf1)] = 16;
		Span shared = placement_cost(c, job, place::Comm::heavy, m);
		ck_assert_msg(std::fabs(shared.bottleneck_gbps - 6400.0 / 24) < 1e-9, "%s: %g", comm_model_name(model), shared.bottleneck_gbps);
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

namespace {

Job job(uint32_t id, int64_t submit, int nodes, int gpn, int64_t work, bool ckpt = false)
{
	Job j;
	j.id = id;
	j.submit_s = submit;
	j.nodes = nodes;
	j.gpus_per_node = gpn;
	j.work_s = work;
	j.limit_s = std::max<int64_t>(3600, 2 * work);
	j.comm = nodes > 1 ? place::Comm::normal : place::Comm::light;
	j.ckpt = ckpt;
	j.source = "test job " + std::to_string(id);
	return j;
}

RunConfig quiet(const std::string &placer)
{
	RunConfig r;
	r.placer = placer;
	r.failures = default_failure_model();
	r.failures.none = true;
	return r;
}

} // namespace

// Tiers in the simulator: on two classes (a100 1x at 1.00, h100 2x at 1.60:
// 0.80 per work), a value job goes to h100 through the engine, to a100 by
// hand (the cheapest per hour), and pays its GPUs' price for its run: 8 GPUs
// x 1.60 x 1 h (2 h of work at 2x) = 12.80.
START_TEST(tiers_in_the_simulator)
{
	topo::Cluster c = make("gpus=128 fabric=fat nodes_per_leaf=4 leaves_per_pod=4 classes=a100:50,h100:50");
	place::TierTable t;
	{
		ConfigSchema schema;
		std::vector<std::string> classes;
		schema.list("gpu_classes", &classes);
		place::add_tier_keys(schema, &t);
		ck_assert(schema.parse_text("gpu_classes=a100,h100\ngpu_class.a100=throughput:1,price:1.00\n"
					    "gpu_class.h100=throughput:2,price:1.60\n", "loom-topo.conf").has_value());
		ck_assert(place::check_tiers(t, classes, "loom-topo.conf").has_value());
	}
	std::vector<Job> jobs = {job(1, 100, 1, 8, 7200)};
	jobs[0].need.tier = "value";
	auto run = [&](const char *mode) {
		RunConfig cfg = quiet("loom");
		cfg.weights.tiers = std::make_shared<const place::TierTable>(t);
		cfg.cost.class_speed = {{"a100", 1}, {"h100", 2}};
		cfg.tier_mode = mode;
		auto r = simulate(c, jobs, {}, cfg);
		ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
		return r->jobs[0];
	};
	JobResult e = run("engine");
	ck_assert_sstr_eq(e.gpu_class, "h100");
	ck_assert_int_eq(e.end_s - e.first_start_s, 3600);
	ck_assert_msg(std::fabs(e.cost - 12.8) < 1e-9, "cost %.3f", e.cost);
	JobResult h = run("by-hand");
	ck_assert_sstr_eq(h.gpu_class, "a100");
	ck_assert_int_eq(h.end_s - h.first_start_s, 7200);
	ck_assert_msg(std::fabs(h.cost - 16.0) < 1e-9, "cost %.3f", h.cost);
	ck_assert_sstr_eq(e.tier, "value");
}
END_TEST

// Contention in the simulator: leaves of 4 nodes 4:1 to the pod (3200 Gbit/s
// for 32 GPUs, a full leaf's share 100: a heavy step 0.6 + 0.4 x 4 = 2.2).
// Eight single-node jobs fill both leaves; one on each leaf ends at 100 s and
// a 2-node heavy job A starts across the two at 200 s: alone on the uplinks,
// 3200 / 8 = 400, step 1. Two more end at 300 s and B starts across them at
// 400 s, sharing the uplinks with A: 3200 / 16 = 200, step 1.4. Without the
// contention model both run at 2.2.
START_TEST(contention_in_the_simulator)
{
	topo::Cluster c = make("gpus=64 fabric=fat nodes_per_leaf=4 leaves_per_pod=2 leaf_oversub=4");
	std::vector<Job> jobs;
	for (uint32_t i = 0; i < 8; i++) {
		jobs.push_back(job(i + 1, i, 1, 8, 100000));
		jobs.back().limit_s = 200000;
	}
	for (uint32_t i : {0u, 4u})
		jobs[i].work_s = 100 - i;
	for (uint32_t i : {1u, 5u})
		jobs[i].work_s = 300 - i;
	jobs.push_back(job(9, 200, 2, 8, 3600));
	jobs.push_back(job(10, 400, 2, 8, 3600));
	jobs[8].comm = jobs[9].comm = place::Comm::heavy;
	auto run = [&](bool contention) {
		RunConfig cfg = quiet("loom");
		cfg.contention = contention;
		auto r = simulate(c, jobs, {}, cfg);
		ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
		return *r;
	};
	RunResult on = run(true), off = run(false);
	const JobResult &a = on.jobs[8], &b = on.jobs[9];
	ck_assert_int_eq(a.first_start_s, 200);
	ck_assert_int_eq(b.first_start_s, 400);
	ck_assert_int_eq(a.leaves, 2);
	ck_assert_int_eq(b.leaves, 2);
	ck_assert_msg(std::fabs(a.step_factor - 1) < 1e-9, "A %g", a.step_factor);
	ck_assert_msg(std::fabs(b.step_factor - 1.4) < 1e-9, "B %g", b.step_factor);
	ck_assert_int_eq(a.end_s - a.first_start_s, 3600);
	ck_assert_int_eq(b.end_s - b.first_start_s, 5040);
	ck_assert(std::fabs(off.jobs[8].step_factor - 2.2) < 1e-9 && std::fabs(off.jobs[9].step_factor - 2.2) < 1e-9);
}
END_TEST

START_TEST(run_one_job)
{
	// One 4-node job on an idle fat tree: it starts at once, runs its work
	// times the step factor of one leaf (1) and completes.
	topo::Cluster c = make("gpus=512 fabric=fat");
	std::vector<Job> jobs = {job(1, 100, 4, 8, 7200)};
	auto r = simulate(c, jobs, {}, quiet("loom"));
	ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
	const JobResult &j = r->jobs[0];
	ck_assert_str_eq(j.state.c_str(), "COMPLETED");
	ck_assert_int_eq(j.first_start_s, 100);
	ck_assert_int_eq(j.end_s, 100 + 7200);
	ck_assert_int_eq(j.leaves, 1);
	ck_assert(std::fabs(j.ettr() - 1) < 1e-9);
	ck_assert_int_eq(r->summary.decisions, 1);
}
END_TEST

START_TEST(backfill_respects_reservation)
{
	// 4 nodes of 8 GPUs. A: 3 nodes for 10 h. B (head, all 4 nodes) must
	// wait for A. C (1 node, limit 2 h) ends before A's limit: backfilled at
	// once. D (1 node, limit 40 h) would delay B: it waits for B.
	topo::Cluster c = make("gpus=32 fabric=fat nodes_per_leaf=4");
	Job a = job(1, 0, 3, 8, 36000), b = job(2, 10, 4, 8, 3600), cj = job(3, 20, 1, 8, 3600), d = job(4, 30, 1, 8, 72000);
	a.limit_s = 36000;
	cj.limit_s = 7200;
	d.limit_s = 40 * 3600;
	auto r = simulate(c, {a, b, cj, d}, {}, quiet("loom"));
	ck_assert(r.has_value());
	ck_assert_int_eq(r->jobs[0].first_start_s, 0);
	ck_assert_msg(r->jobs[2].first_start_s < 120, "C started at %lld", static_cast<long long>(r->jobs[2].first_start_s));
	ck_assert_int_eq(r->jobs[1].first_start_s, 36000); // B when A ends
	ck_assert_msg(r->jobs[3].first_start_s >= 36000 + 3600, "D started at %lld",
		      static_cast<long long>(r->jobs[3].first_start_s));
}
END_TEST

START_TEST(deterministic_same_failures_for_every_placer)
{
	topo::Cluster c = make("gpus=2304 fabric=nvl72");
	MixGen g;
	g.days = 2;
	g.large_min = 64;
	g.large_max = 256;
	auto jobs = generate_mix(g, 2304, 8);
	FailureModel m = default_failure_model();
	m.rate_per_1000_node_days = 50; // enough to see some in two days
	auto fails = draw_failures(m, c.nodes.size(), 2 * 86400, 3);
	ck_assert(!fails.empty());
	RunConfig cfg;
	cfg.failures = m;
	cfg.horizon_s = 2 * 86400;
	cfg.large_gpus = 64;
	auto one = simulate(c, jobs, fails, cfg);
	auto two = simulate(c, jobs, fails, cfg);
	ck_assert(one.has_value() && two.has_value());
	ck_assert(jobs_csv(*one) == jobs_csv(*two));
	ck_assert(timeline_csv(*one) == timeline_csv(*two));
	ck_assert(one->summary.job_failures > 0);
	for (const char *p : {"tree", "firstfit", "block"}) {
		cfg.placer = p;
		auto r = simulate(c, jobs, fails, cfg);
		ck_assert_msg(r.has_value(), "%s", p);
		ck_assert_int_eq(r->summary.jobs, one->summary.jobs);
		ck_assert_int_eq(r->summary.failures, one->summary.failures); // the same failures for every placer
	}
	// Every job that started got whole-gang nodes: no more GPUs busy than exist.
	for (const Sample &s : one->timeline)
		ck_assert(s.busy_gpus <= 2304 && s.busy_gpus >= 0);
}
END_TEST

START_TEST(ettr_agrees_with_daly)
{
	// One 2,048-GPU job for 30 days of work on a cluster of 2,304 GPUs, at a
	// failure rate that gives it an MTBF M = 3 h. With a checkpoint cost C,
	// restart R and requeue delay D, the expected share of wall time that
	// becomes committed work with interval T is about
	//   T / (T + C) * (1 - ((T + C) / 2 + R + D) / M)
	// and the best T is near Daly's.
	topo::Cluster c = make("gpus=2304 fabric=nvl72");
	FailureModel m = default_failure_model();
	m.lemon_share = 0;
	m.ckpt_max_restarts = 100000; // every failure requeues: the interval alone decides
	m.user_resubmit_s = 121;      // a held job is released as fast as a requeue
	for (Cause &k : m.causes) // every failure requeues the job at once
		if (k.name == "software" || k.name == "nccl")
			k.share = 0;
	double node_days = 3.0 / 24 * 256; // M = 3 h over the job's 256 nodes
	m.rate_per_1000_node_days = 1000 / node_days;
	const double M = 3 * 3600.0, C = 60, R = 300, D = 121;
	std::vector<Job> jobs = {job(1, 0, 256, 8, 30 * 86400, true)};
	jobs[0].limit_s = 400 * 86400;
	double best = 0;
	int64_t best_t = 0;
	for (int64_t t : {600, 1200, 1800, 3600}) {
		RunConfig cfg;
		cfg.failures = m;
		cfg.ckpt.interval_s = t;
		cfg.ckpt.cost_s = C;
		cfg.ckpt.restart_s = R;
		cfg.large_gpus = 2048;
		auto fails = draw_failures(m, c.nodes.size(), 60 * 86400, 11);
		auto r = simulate(c, jobs, fails, cfg);
		ck_assert(r.has_value());
		double ettr = r->jobs[0].ettr();
		double T = static_cast<double>(t);
		double expect = T / (T + C) * (1 - ((T + C) / 2 + R + D) / M);
		ck_assert_msg(std::fabs(ettr - expect) < 0.04, "T=%lld: ETTR %.3f, expected about %.3f", static_cast<long long>(t),
			      ettr, expect);
		if (ettr > best) {
			best = ettr;
			best_t = t;
		}
	}
	// Daly: sqrt(2CM) ~ 1138 s; of the intervals tried, 1200 s should win.
	ck_assert_msg(best_t == 1200, "best interval %lld", static_cast<long long>(best_t));
}
END_TEST

START_TEST(warning_saves_work_and_steers_placement)
{
	// A 2-node --ckpt job with a 6 h interval; its first node fails 5 h in.
	// Announced 1 h ahead, the node turns suspect: spank_ckpt checkpoints the
	// job then (4 h of work kept, 1 h lost).
	topo::Cluster c = make("gpus=32 fabric=fat nodes_per_leaf=4");
	FailureModel m = default_failure_model();
	uint32_t gpu = 0;
	for (uint32_t k = 0; k < m.causes.size(); k++)
		if (m.causes[k].name == "gpu")
			gpu = k;
	Job big = job(1, 0, 2, 8, 20 * 3600, true);
	RunConfig cfg;
	cfg.failures = m;
	cfg.ckpt.interval_s = 6 * 3600;
	auto first = simulate(c, {big}, {}, cfg);
	ck_assert(first.has_value());
	ck_assert_str_eq(first->jobs[0].first_nodes.c_str(), "n[00001-00002]");
	Failure f;
	f.t = 5 * 3600;
	f.node = c.find_node("n00001");
	f.cause = gpu;
	auto plain = simulate(c, {big}, {f}, cfg);
	f.warn_t = 4 * 3600;
	auto warned = simulate(c, {big}, {f}, cfg);
	ck_assert(plain.has_value() && warned.has_value());
	ck_assert_int_eq(plain->summary.job_failures, 1);
	ck_assert_int_eq(warned->summary.job_failures, 1);
	ck_assert_int_eq(warned->summary.warnings, 1);
	// 16 GPUs: 5 h lost without the warning, 1 h with it.
	ck_assert_msg(std::fabs(plain->jobs[0].lost_gpu_s / 3600 - 16 * 5) < 0.1, "%.2f", plain->jobs[0].lost_gpu_s / 3600);
	ck_assert_msg(std::fabs(warned->jobs[0].lost_gpu_s / 3600 - 16 * 1) < 0.1, "%.2f", warned->jobs[0].lost_gpu_s / 3600);
	ck_assert(warned->jobs[0].end_s < plain->jobs[0].end_s);
	// An idle node marked suspect: a 1-node job arriving then is placed off
	// it by loom (suspect nodes last); first-fit, which knows nothing of
	// health, takes it, and the job dies with the node.
	Failure g;
	g.t = 3 * 3600;
	g.warn_t = 2 * 3600;
	g.node = c.find_node("n00003");
	g.cause = gpu;
	Job one = job(3, 2 * 3600 + 60, 1, 8, 7200);
	Job hold = job(4, 0, 2, 8, 10 * 3600); // n00001-n00002 busy: n00003 and n00004 are left
	auto loom_run = simulate(c, {hold, one}, {g}, cfg);
	cfg.placer = "firstfit";
	auto ff_run = simulate(c, {hold, one}, {g}, cfg);
	ck_assert(loom_run.has_value() && ff_run.has_value());
	ck_assert_str_eq(loom_run->jobs[1].first_nodes.c_str(), "n00004");
	ck_assert_int_eq(loom_run->summary.job_failures, 0);
	ck_assert_str_eq(ff_run->jobs[1].first_nodes.c_str(), "n00003");
	ck_assert_int_eq(ff_run->summary.job_failures, 1);
}
END_TEST

// The spare pool (leaf:1 on two leaves of four: n00004 and n00008). Long
// jobs never get spares; a failed node is replaced by its leaf's spare
// replace_s after detection instead of the queue's requeue; a job whose
// node turns suspect moves to a spare once its checkpoint is committed, and
// the node then fails under nobody.
START_TEST(spares_replace_a_failed_node_and_take_a_moving_job)
{
	topo::Cluster c = make("gpus=64 fabric=fat nodes_per_leaf=4");
	FailureModel m = default_failure_model();
	uint32_t gpu = 0;
	for (uint32_t k = 0; k < m.causes.size(); k++)
		if (m.causes[k].name == "gpu")
			gpu = k;
	RunConfig cfg;
	cfg.failures = m;
	cfg.ckpt.interval_s = 3600;
	auto spec = place::parse_spares("leaf:1");
	ck_assert(spec.has_value());
	Job a = job(1, 0, 3, 8, 10 * 3600, true), b = job(2, 0, 3, 8, 10 * 3600, true);
	Job shorty = job(3, 60, 1, 8, 600), longer = job(4, 60, 1, 8, 600);
	shorty.limit_s = 1800;
	longer.limit_s = 7200;
	Failure f;
	f.t = 5 * 3600 + 1800;
	f.node = c.find_node("n00002");
	f.cause = gpu;
	RunConfig plain = cfg;
	auto without = simulate(c, {a, b}, {f}, plain);
	cfg.spares = *spec;
	auto with = simulate(c, {a, b, shorty, longer}, {f}, cfg);
	ck_assert(without.has_value() && with.has_value());
	const JobResult &ja = with->jobs[0];
	ck_assert_str_eq(ja.first_nodes.c_str(), "n[00001-00003]");
	ck_assert_str_eq(with->jobs[1].first_nodes.c_str(), "n[00005-00007]");
	// The 30-minute job borrows a spare at once; the 2-hour one waits for a
	// node that is nobody's spare.
	ck_assert_msg(with->jobs[2].first_nodes == "n00004" || with->jobs[2].first_nodes == "n00008", "%s",
		      with->jobs[2].first_nodes.c_str());
	ck_assert_int_eq(with->jobs[2].first_start_s, 60);
	ck_assert_msg(with->jobs[3].first_start_s >= 10 * 3600, "the 2-hour job started at %lld on %s",
		      static_cast<long long>(with->jobs[3].first_start_s), with->jobs[3].first_nodes.c_str());
	// n00002 fails: job 1 is back on n00001, n00003 and the spare n00004
	// replace_s (10 s) after the failure, where the queue's requeue waits
	// requeue_delay (121 s): it ends 111 s sooner.
	ck_assert_int_eq(with->summary.replacements, 1);
	ck_assert_int_eq(with->summary.spare_misses, 0);
	ck_assert(std::fabs(with->summary.replace_wait_mean_s - 10) < 1e-9);
	ck_assert_int_eq(ja.restarts, 1);
	ck_assert_int_eq(without->jobs[0].end_s - ja.end_s, 121 - 10);
	// A warning an hour ahead on n00006, under job 2, with migration on: it
	// checkpoints at the mark and moves to leaf2's spare; the failure finds
	// nobody there.
	Failure g;
	g.t = 5 * 3600;
	g.warn_t = 4 * 3600;
	g.node = c.find_node("n00006");
	g.cause = gpu;
	cfg.migrate = true;
	auto moved = simulate(c, {a, b}, {g}, cfg);
	ck_assert(moved.has_value());
	ck_assert_int_eq(moved->summary.migrations, 1);
	ck_assert_int_eq(moved->summary.migrations_to_spares, 1);
	ck_assert_int_eq(moved->summary.job_failures, 0);
	ck_assert_int_eq(moved->jobs[1].restarts, 1);
	// Lost on the first run: its wall time less the work it committed, that
	// is the three hourly checkpoint writes and the one at the mark (60 s
	// each), on 24 GPUs; nothing computed is thrown away.
	ck_assert_msg(std::fabs(moved->jobs[1].lost_gpu_s - 24.0 * (3 * 60 + 60)) < 24.0 * 15, "%.0f GPU-s lost",
		      moved->jobs[1].lost_gpu_s);
	cfg.migrate = false;
	auto stayed = simulate(c, {a, b}, {g}, cfg);
	ck_assert(stayed.has_value());
	ck_assert_int_eq(stayed->summary.job_failures, 1);
	ck_assert(stayed->jobs[1].lost_gpu_s > moved->jobs[1].lost_gpu_s);
}
END_TEST

START_TEST(svg_is_well_formed)
{
	std::string svg = svg_lines("a <b>", "x", "y", {{"one", {{0, 0}, {1, 2}}}, {"two", {{0, 1}, {2, 1}}}});
	ck_assert(svg.rfind("<svg ", 0) == 0);
	ck_assert(svg.find("</svg>") != std::string::npos);
	ck_assert(svg.find("a &lt;b&gt;") != std::string::npos);
	size_t lines = 0;
	for (size_t p = 0; (p = svg.find("<polyline", p)) != std::string::npos; p++)
		lines++;
	ck_assert_int_eq(lines, 2);
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("sim");
	TCase *t = tcase_create("sim");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, generated_nvl72);
	tcase_add_test(t, generated_rail_and_classes);
	tcase_add_test(t, generate_bad_spec);
	tcase_add_test(t, philly_rows);
	tcase_add_test(t, trace_errors);
	tcase_add_test(t, alibaba_pods);
	tcase_add_test(t, failure_outcomes);
	tcase_add_test(t, failure_draws);
	tcase_add_test(t, failure_model_file);
	tcase_add_test(t, cost_model);
	tcase_add_test(t, ring_model_and_rank_order);
	tcase_add_test(t, contention_shares_the_uplink);
	tcase_add_test(t, heavy_gang_spans_clean_leaves_first);
	tcase_add_test(t, run_one_job);
	tcase_add_test(t, contention_in_the_simulator);
	tcase_add_test(t, tiers_in_the_simulator);
	tcase_add_test(t, backfill_respects_reservation);
	tcase_add_test(t, deterministic_same_failures_for_every_placer);
	tcase_add_test(t, ettr_agrees_with_daly);
	tcase_add_test(t, warning_saves_work_and_steers_placement);
	tcase_add_test(t, spares_replace_a_failed_node_and_take_a_moving_job);
	tcase_add_test(t, svg_is_well_formed);
	suite_add_tcase(s, t);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
