// Unit tests for the placement engine on synthetic fabrics with NVLink
// domains, against the baseline placer, and on a real InfiniBand fabric.
#include "tests/unit/check_main.hpp"
#include "tests/unit/place_engine_fixture.hpp"
#include "tests/unit/place_fixture.hpp"

#include "lib/place/engine.hpp"
#include "lib/place/synthetic.hpp"
#include "lib/topo/build.hpp"
#include "lib/topo/ibnetdiscover.hpp"
#include "lib/util/fs.hpp"

#include <string>

using namespace loom;
using namespace loom::place;
using namespace loom::place::testing;

START_TEST(nvlink_domains_kept_together)
{
	FatTree t;
	t.pods = 1;
	t.leaves_per_pod = 2;
	t.nodes_per_leaf = 8;
	t.nvlink_nodes = 4;
	auto c = topo::build_cluster(fat_tree_spec(t));
	ck_assert(c.has_value());
	State s(*c);
	// One node busy in each NVLink domain but the last one.
	for (const char *n : {"n1", "n5", "n9"})
		ck_assert(s.allocate(node(s, n), 8, 0).has_value());
	Decision d = decide(s, "nodes=4 gpus_per_node=8 comm=heavy");
	ck_assert(d.placed());
	ck_assert_int_eq(d.candidates[0].score.nvlink_domains, 1);
	for (Index n : d.candidates[0].nodes)
		ck_assert_int_ge(n, node(s, "n13"));
	// Three nodes: a domain with exactly three free, not the empty one.
	d = decide(s, "nodes=3 gpus_per_node=8");
	ck_assert_int_eq(d.candidates[0].score.nvlink_domains, 1);
	ck_assert_int_lt(d.candidates[0].nodes[0], node(s, "n13"));
	// Six nodes span two NVLink domains of the emptier leaf, in rank order by domain.
	d = decide(s, "nodes=6 gpus_per_node=8");
	ck_assert_int_eq(d.candidates[0].score.nvlink_domains, 2);
	ck_assert_int_eq(d.candidates[0].score.leaves, 1);
	// --locality=nvlink:strict: one NVLink domain or nothing.
	d = decide(s, "nodes=4 gpus_per_node=8 locality=nvlink:strict");
	ck_assert(d.placed());
	for (Index n : d.candidates[0].nodes)
		ck_assert_int_ge(n, node(s, "n13"));
	d = decide(s, "nodes=5 gpus_per_node=8 locality=nvlink:strict");
	ck_assert(!d.placed());
	ck_assert_msg(d.reason.find("within one NVLink domain") != std::string::npos, "%s", d.reason.c_str());
	// A single node in an NVLink domain; locality=nvlink:prefer places like no hint.
	ck_assert(decide(s, "nodes=1 gpus_per_node=8 locality=nvlink:strict").placed());
	ck_assert(decide(s, "nodes=6 gpus_per_node=8 locality=nvlink:prefer").placed());
	// No NVLink domains: an error naming the kinds there are.
	auto plain = test_cluster();
	State p(plain);
	auto r = loom::place::place(p, req("nodes=2 locality=nvlink:strict"), nullptr, Weights{});
	ck_assert(!r.has_value());
	ck_assert_msg(r.error().message.find("no NVLink domains (kinds: ") != std::string::npos, "%s",
		      r.error().str().c_str());
}
END_TEST

START_TEST(baseline_ignores_partial_nodes)
{
	auto c = test_cluster();
	State s(c);
	ck_assert(s.allocate(node(s, "n7"), 6, 0).has_value());
	auto e = decide(s, "gpus_per_node=2");
	auto b = place_baseline(s, req("gpus_per_node=2"), nullptr, Weights{});
	ck_assert(b.has_value() && b->placed());
	ck_assert_sstr_eq(c.nodes[e.candidates[0].nodes[0]].name, "n7");
	ck_assert_int_eq(e.candidates[0].score.idle_nodes_broken, 0);
	ck_assert_int_eq(b->candidates[0].score.idle_nodes_broken, 1);
	// Whole-node gangs: the baseline too finds one leaf for 4 nodes.
	b = place_baseline(s, req("nodes=4 gpus_per_node=8"), nullptr, Weights{});
	ck_assert(b.has_value() && b->placed());
	ck_assert_int_eq(b->candidates[0].score.leaves, 1);
}
END_TEST

START_TEST(real_ndr_fabric)
{
	auto text = read_file(test::data("place/ibnetdiscover-ndr-fabric.out"));
	ck_assert_msg(text.has_value(), "%s", text ? "" : text.error().str().c_str());
	auto fabric = topo::parse_ibnetdiscover(*text, "ndr");
	ck_assert_msg(fabric.has_value(), "%s", fabric ? "" : fabric.error().str().c_str());
	auto c = topo::build_cluster(fabric->spec);
	ck_assert_msg(c.has_value(), "%s", c ? "" : c.error().str().c_str());
	State s(*c);
	for (size_t n = 0; n < c->nodes.size(); n++) // the fabric has no GPU inventory: DGX, 8 GPUs
		ck_assert(s.set_capacity(static_cast<Index>(n), 8, 224).has_value());
	ck_assert_int_ge(c->nodes.size(), 8);
	// Fill whole-node gangs of 4 until none fits: each lands in the lowest domain
	// that can hold it, never in part.
	int placed = 0;
	for (;;) {
		auto d = loom::place::place(s, req("nodes=4 gpus_per_node=8 comm=heavy"), nullptr, Weights{});
		ck_assert(d.has_value());
		if (!d->placed())
			break;
		const Candidate &k = d->candidates[0];
		ck_assert_int_eq(k.nodes.size(), 4);
		ck_assert(commit(s, req("nodes=4 gpus_per_node=8"), k).has_value());
		placed++;
		ck_assert_int_le(placed, static_cast<int>(c->nodes.size()) / 4);
	}
	ck_assert_int_eq(placed, static_cast<int>(c->nodes.size()) / 4);
	ck_assert_int_lt(s.total().idle, 4);
}
END_TEST

TCase *place_fabric_tests()
{
	TCase *tc = tcase_create("fabrics");
	tcase_add_test(tc, nvlink_domains_kept_together);
	tcase_add_test(tc, baseline_ignores_partial_nodes);
	tcase_add_test(tc, real_ndr_fabric);
	return tc;
}
