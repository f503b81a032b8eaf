// Unit tests for loom sim: generated clusters, trace readers (on real Philly
// rows and a hand-written Alibaba file) and the report's SVG; and the suite,
// with the failure model (test_sim_failures.cpp), the cost model
// (test_sim_cost.cpp) and the scheduler loop (test_sim_scheduler.cpp).
#include "tests/unit/check_main.hpp"
#include "tests/unit/sim_fixture.hpp"

#include "lib/sim/cluster_gen.hpp"
#include "lib/sim/jobs.hpp"
#include "lib/sim/report.hpp"
#include "lib/topo/build.hpp"

#include <map>
#include <string>
#include <unistd.h>

using namespace loom;
using namespace loom::sim;

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
			ck_assert_int_eq(c.nodes[static_cast<size_t>(n)].leaf,
					 c.nodes[static_cast<size_t>(v.nodes[0])].leaf);
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
	ck_assert_msg(msg.find(std::string(path) + ":3") != std::string::npos &&
			      msg.find("num_gpus") != std::string::npos,
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
	ck_assert_int_eq((*jobs)[1].gpus(), 1);     // gpu_milli 460: a whole GPU
	ck_assert_int_eq((*jobs)[1].work_s, 3500);  // from scheduling at 200 to deletion at 3700
	ck_assert_int_eq((*jobs)[1].submit_s, 100); // created at 100
	ck_assert_int_eq((*jobs)[2].gpus(), 8);
	ck_assert_str_eq((*jobs)[2].gpu_class.c_str(), "V100M32"); // the cluster has that class
	ck_assert_str_eq((*jobs)[3].gpu_class.c_str(), "");        // G3: the cluster has none
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
	tcase_add_test(t, svg_is_well_formed);
	suite_add_tcase(s, t);
	suite_add_tcase(s, sim_failure_tests());
	suite_add_tcase(s, sim_cost_tests());
	suite_add_tcase(s, sim_scheduler_tests());
	suite_add_tcase(s, sim_standby_tests());
	return s;
}

LOOM_CHECK_MAIN(make_suite)
