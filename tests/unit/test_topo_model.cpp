// Unit tests for the topology model: building, ranges, counts, ancestors,
// hop distance and bottleneck bandwidth, and refusal of bad descriptions.
#include "tests/unit/check_main.hpp"

#include "lib/topo/build.hpp"

using namespace loom;
using namespace loom::topo;

namespace {

// spine -> pod0, pod1 -> leaves l0..l3 (two per pod, given out of order) -> 2 nodes each.
// Nodes n0..n7, 8 GPUs each on NVSwitch; n6 and n7 share the NVLink domain rack3.
ClusterSpec small_fat_tree()
{
	ClusterSpec s;
	s.name = "t";
	s.domains = {{"l3", "leaf", "pod1", 400, "$.domains[0]"},    {"spine", "spine", "", 0, "$.domains[1]"},
		     {"pod0", "pod", "spine", 1600, "$.domains[2]"}, {"pod1", "pod", "spine", 800, "$.domains[3]"},
		     {"l0", "leaf", "pod0", 0, "$.domains[4]"},      {"l1", "leaf", "pod0", 0, "$.domains[5]"},
		     {"l2", "leaf", "pod1", 0, "$.domains[6]"}};
	s.nvlink_domains = {{"rack3", 7200, "$.nvlink_domains[0]"}};
	for (int i = 0; i < 8; i++) {
		NodeSpec n;
		n.name = "n" + std::to_string(i);
		n.domain = "l" + std::to_string(i / 2);
		n.where = "$.nodes[" + std::to_string(i) + "]";
		n.perf_class = i < 4 ? "a100" : "h100";
		n.features = {i < 4 ? "a100" : "h100", "ib"};
		if (i >= 6)
			n.nvlink_domain = "rack3";
		for (int k = 0; k < 8; k++) {
			GpuSpec g;
			g.index = 7 - k; // given in reverse: the model sorts by index
			g.model = i < 4 ? "A100" : "H100";
			g.nvswitch = true;
			g.nvlinks = 18;
			g.nvlink_gbps = 3600;
			g.nic = "mlx5_" + std::to_string(7 - k);
			n.gpus.push_back(g);
			NicSpec x;
			x.device = "mlx5_" + std::to_string(k);
			x.rate_gbps = 200;
			x.rail = k;
			n.nics.push_back(x);
		}
		s.nodes.push_back(n);
	}
	return s;
}

} // namespace

START_TEST(model_orders_depth_first_with_contiguous_ranges)
{
	auto c = build_cluster(small_fat_tree());
	ck_assert_msg(c.has_value(), "%s", c ? "" : c.error().str().c_str());
	ck_assert_int_eq(c->domains.size(), 7);
	ck_assert_int_eq(c->levels, 3);
	ck_assert_sstr_eq(c->domains[0].name, "spine");
	ck_assert_int_eq(c->domains[0].node_count(), 8);
	ck_assert_int_eq(c->domains[0].gpu_count, 64);
	Index pod1 = c->find_domain("pod1"), l3 = c->find_domain("l3"), l2 = c->find_domain("l2");
	ck_assert_int_eq(c->domains[pod1].node_count(), 4);
	ck_assert_int_eq(c->domains[pod1].gpu_count, 32);
	ck_assert_int_eq(c->domains[pod1].children.size(), 2);
	// l3 was listed before l2 under pod1, so its nodes come first.
	ck_assert_int_lt(c->domains[l3].node_begin, c->domains[l2].node_begin);
	for (Index d = 0; d < static_cast<Index>(c->domains.size()); d++)
		for (Index n = c->domains[d].node_begin; n < c->domains[d].node_end; n++)
			ck_assert_int_eq(c->ancestor(n, c->domains[d].level), d);
	Index n6 = c->find_node("n6");
	ck_assert_sstr_eq(c->domains[c->nodes[n6].leaf].name, "l3");
	ck_assert_int_eq(c->ancestor(n6, 1), pod1);
	ck_assert_int_eq(c->ancestor(n6, 5), none);
	ck_assert_int_eq(c->nodes[n6].gpu_count, 8);
	ck_assert_int_eq(c->gpus[c->nodes[n6].gpu_begin].index, 0);
	ck_assert(c->has_feature(n6, "h100"));
	ck_assert(!c->has_feature(n6, "a100"));
	ck_assert_int_eq(c->nvlink_domains[0].gpu_count, 16);
	ck_assert_sstr_eq(c->models.name(c->nodes[n6].gpu_model), "H100");
}
END_TEST

START_TEST(model_hops_and_bottleneck)
{
	auto c = build_cluster(small_fat_tree());
	ck_assert(c.has_value());
	Index n0 = c->find_node("n0"), n1 = c->find_node("n1"), n2 = c->find_node("n2"), n4 = c->find_node("n4"),
	      n5 = c->find_node("n5"), n6 = c->find_node("n6"), n7 = c->find_node("n7");
	Path same_leaf = c->node_path(n0, n1);
	ck_assert(same_leaf.via == Via::fabric);
	ck_assert_int_eq(same_leaf.hops, 2);
	ck_assert(same_leaf.gbps == 1600); // 8 x 200 Gb/s NICs
	Path same_pod = c->node_path(n0, n2);
	ck_assert_int_eq(same_pod.hops, 4);
	ck_assert_sstr_eq(c->domains[same_pod.common].name, "pod0");
	Path cross = c->node_path(n0, n5);
	ck_assert_int_eq(cross.hops, 6);
	ck_assert(cross.gbps == 800); // pod1's uplink is the narrowest link
	Path to_l3 = c->node_path(n4, n6);
	ck_assert(to_l3.gbps == 400); // l3's uplink
	Path nvl = c->node_path(n6, n7);
	ck_assert(nvl.via == Via::nvlink);
	ck_assert(nvl.gbps == 7200);
	// GPUs: same node over NVSwitch, other node over its rail NIC.
	Index g0 = c->nodes[n0].gpu_begin, g1 = g0 + 1, h0 = c->nodes[n1].gpu_begin;
	Path in_node = c->gpu_path(g0, g1);
	ck_assert(in_node.via == Via::nvlink);
	ck_assert(in_node.gbps == 3600);
	Path rail = c->gpu_path(g0, h0);
	ck_assert(rail.via == Via::fabric);
	ck_assert(rail.gbps == 200);
	ck_assert(c->gpu_path(g0, g0).via == Via::same);
}
END_TEST

START_TEST(model_refuses_bad_descriptions)
{
	auto s = small_fat_tree();
	s.domains[0].parent = "pod9";
	auto c = build_cluster(s);
	ck_assert(!c);
	ck_assert_sstr_eq(c.error().str(), "$.domains[0]: parent 'pod9' is not a domain");

	s = small_fat_tree();
	s.domains[1].parent = "l0"; // spine -> l0 -> pod0 -> spine
	c = build_cluster(s);
	ck_assert(!c);
	ck_assert_msg(c.error().str().find("cycle") != std::string::npos, "%s", c.error().str().c_str());

	s = small_fat_tree();
	s.nodes[5].name = "n1";
	c = build_cluster(s);
	ck_assert(!c);
	ck_assert_sstr_eq(c.error().str(), "$.nodes[5]: duplicate node name 'n1' (first at $.nodes[1])");

	s = small_fat_tree();
	s.nodes[2].domain = "";
	ck_assert(!build_cluster(s));
	s = small_fat_tree();
	s.nodes[2].nvlink_domain = "rack9";
	ck_assert(!build_cluster(s));
	s = small_fat_tree();
	s.nodes[2].gpus[0].peers.push_back({99, 2});
	ck_assert(!build_cluster(s));
	s = small_fat_tree();
	s.nodes[2].gpus[1].index = s.nodes[2].gpus[0].index;
	ck_assert(!build_cluster(s));
	s = small_fat_tree();
	s.nodes[2].gpus[0].nic = "eth9";
	ck_assert(!build_cluster(s));
}
END_TEST

START_TEST(model_round_trips_through_spec)
{
	auto c = build_cluster(small_fat_tree());
	ck_assert(c.has_value());
	auto again = build_cluster(to_spec(*c));
	ck_assert(again.has_value());
	ck_assert_int_eq(again->nodes.size(), c->nodes.size());
	for (size_t n = 0; n < c->nodes.size(); n++) {
		ck_assert_sstr_eq(again->nodes[n].name, c->nodes[n].name);
		ck_assert_int_eq(again->nodes[n].leaf, c->nodes[n].leaf);
	}
	ck_assert_int_eq(again->gpus[5].nic, c->gpus[5].nic);
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("topo_model");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, model_orders_depth_first_with_contiguous_ranges);
	tcase_add_test(tc, model_hops_and_bottleneck);
	tcase_add_test(tc, model_refuses_bad_descriptions);
	tcase_add_test(tc, model_round_trips_through_spec);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
