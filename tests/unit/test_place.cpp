// Unit tests for the placement engine on the test-cluster shape (16 nodes x 8
// GPUs, 4 leaves of 4, 2 pods, one spine; n1-n8 a100, n9-n16 h100): counts,
// packing, classes, suspect nodes and links, gangs, locality and scores. The
// suite, with synthetic and real fabrics (test_place_fabrics.cpp) and
// Slurm's policies (test_place_slurm.cpp).
#include "tests/unit/check_main.hpp"
#include "tests/unit/place_engine_fixture.hpp"
#include "tests/unit/place_fixture.hpp"

#include "lib/place/engine.hpp"

#include <set>
#include <string>
#include <vector>

using namespace loom;
using namespace loom::place;
using namespace loom::place::testing;

START_TEST(counts_follow_allocations)
{
	auto c = test_cluster();
	State s(c);
	Index leaf1 = c.find_domain("leaf1"), pod1 = c.find_domain("pod1");
	ck_assert_int_eq(s.total().idle, 16);
	ck_assert_int_eq(s.total().free_gpus, 128);
	ck_assert(s.allocate(node(s, "n1"), 3, 8).has_value());
	ck_assert_int_eq(s.domain(leaf1).idle, 3);
	ck_assert_int_eq(s.domain(leaf1).with_free(6), 3);
	ck_assert_int_eq(s.domain(leaf1).with_free(5), 4);
	ck_assert_int_eq(s.domain(pod1).free_gpus, 61);
	ck_assert_int_eq(s.total().free_cores, 16 * 64 - 8);
	// Too much: refused, nothing changes.
	ck_assert(!s.allocate(node(s, "n1"), 6, 0).has_value());
	ck_assert_int_eq(s.domain(pod1).free_gpus, 61);
	ck_assert(s.release(node(s, "n1"), 3, 8).has_value());
	ck_assert_int_eq(s.domain(leaf1).idle, 4);
	ck_assert(!s.release(node(s, "n1"), 1, 0).has_value());
	// Down nodes leave every count; suspect ones are counted as such.
	ck_assert(s.set_available(node(s, "n2"), false).has_value());
	ck_assert(s.set_health(node(s, "n3"), 0.5, true).has_value());
	ck_assert_int_eq(s.domain(leaf1).nodes, 3);
	ck_assert_int_eq(s.domain(pod1).suspect, 1);
	ck_assert_int_eq(s.total().free_gpus, 120);
	ck_assert(!s.set_health(node(s, "n3"), 1.5, false).has_value());
	ck_assert(!s.set_available(99, true).has_value());
}
END_TEST

START_TEST(small_jobs_pack_so_large_gangs_get_leaves)
{
	auto c = test_cluster();
	State s(c);
	std::set<std::string> small_nodes;
	for (const char *job :
	     {"gpus_per_node=1", "gpus_per_node=2", "gpus_per_node=4", "gpus_per_node=1", "gpus_per_node=3",
	      "gpus_per_node=2", "gpus_per_node=4", "gpus_per_node=2", "nodes=2 gpus_per_node=2"}) {
		for (const auto &n : run(s, job))
			small_nodes.insert(n);
	}
	// 23 GPUs of small jobs (one of them on two nodes): packed on four nodes of one leaf.
	ck_assert_int_le(small_nodes.size(), 4);
	auto small_leaves = leaves_of(s, {small_nodes.begin(), small_nodes.end()});
	ck_assert_int_eq(small_leaves.size(), 1);

	auto big = run(s, "nodes=4 gpus_per_node=8");
	auto big_leaves = leaves_of(s, big);
	ck_assert_int_eq(big_leaves.size(), 1);
	ck_assert(*big_leaves.begin() != *small_leaves.begin());

	auto six = run(s, "nodes=6 gpus_per_node=8");
	auto six_leaves = leaves_of(s, six);
	ck_assert_int_eq(six_leaves.size(), 2);
	ck_assert_sstr_eq(pod_of(s, *six_leaves.begin()), pod_of(s, *six_leaves.rbegin()));
	// Rank order: the nodes of a leaf are consecutive ranks.
	ck_assert_sstr_eq(leaves_of(s, {six[0]}).begin()->c_str(), leaves_of(s, {six[3]}).begin()->c_str());
}
END_TEST

START_TEST(class_request_lands_on_class)
{
	auto c = test_cluster();
	State s(c);
	for (const auto &n : run(s, "nodes=2 gpus_per_node=8 class=h100"))
		ck_assert_int_ge(std::stoi(n.substr(1)), 9);
	for (const auto &n : run(s, "gpus_per_node=1 class=a100"))
		ck_assert_int_le(std::stoi(n.substr(1)), 8);
	// a100 is full: without 'faster' nothing, with it an h100 node and a class penalty.
	for (int i = 1; i <= 8; i++)
		ck_assert(s.set_node_free(node(s, "n" + std::to_string(i)), 0, 0).has_value());
	Decision none = decide(s, "gpus_per_node=8 class=a100");
	ck_assert(!none.placed());
	ck_assert(none.reason.find("a100") != std::string::npos);
	Decision fast = decide(s, "gpus_per_node=8 class=a100 faster=yes");
	ck_assert(fast.placed());
	ck_assert_int_eq(fast.class_pass, 2);
	ck_assert_int_eq(fast.candidates[0].score.faster_nodes, 1);
	// An unknown class is an error, not an empty answer.
	ck_assert(!loom::place::place(s, req("class=b300"), nullptr, Weights{}).has_value());
}
END_TEST

START_TEST(suspect_node_avoided_while_others_fit)
{
	auto c = test_cluster();
	State s(c);
	ck_assert(s.set_health(node(s, "n9"), 0.3, true).has_value());
	auto four = run(s, "nodes=4 gpus_per_node=8 class=h100");
	for (const auto &n : four)
		ck_assert(n != "n9");
	auto one = run(s, "gpus_per_node=8 class=h100");
	ck_assert(one[0] != "n9");
	// Only the suspect one is left among h100 nodes: then it is used, and said so.
	for (int i = 10; i <= 16; i++)
		if (s.idle(node(s, "n" + std::to_string(i))))
			ck_assert(s.allocate(node(s, "n" + std::to_string(i)), 8, 0).has_value());
	Decision d = decide(s, "gpus_per_node=8 class=h100");
	ck_assert(d.placed());
	ck_assert_int_eq(d.candidates[0].score.suspect_nodes, 1);
	ck_assert(d.candidates[0].why.find("suspect") != std::string::npos);
}
END_TEST

// A leaf with a degraded link (n2's own ports: a loom:suspect mark of a link
// check): a heavy gang leaves it for an equally tight clean leaf, a light one
// may use it, and --explain says why the degraded leaf lost.
START_TEST(heavy_gang_leaves_a_leaf_with_degraded_links)
{
	auto c = test_cluster();
	State s(c);
	ck_assert(s.set_link_suspect(node(s, "n2"), true).has_value());
	ck_assert(s.link_degradation(c.nodes[node(s, "n2")].leaf) == 0.25); // 1 of leaf1's 4 nodes
	auto leaf_of = [&](const std::string &n) { return c.domains[c.nodes[node(s, n)].leaf].name; };
	// The light gang first: both leaves idle and tied, it takes the first.
	// Then the heavy one: filling leaf1 would keep leaf2 whole (idle_leaf),
	// and it goes to leaf2 all the same.
	auto light = run(s, "nodes=2 gpus_per_node=8 class=a100 comm=light");
	auto heavy = run(s, "nodes=2 gpus_per_node=8 class=a100 comm=heavy");
	ck_assert_int_eq(heavy.size(), 2);
	ck_assert_int_eq(light.size(), 2);
	std::string degraded = leaf_of("n2");
	for (const auto &n : heavy)
		ck_assert_msg(leaf_of(n) != degraded, "the heavy gang got %s on %s", n.c_str(), degraded.c_str());
	for (const auto &n : light)
		ck_assert_msg(leaf_of(n) == degraded, "the light gang got %s, off the first leaf", n.c_str());
	State fresh(c);
	ck_assert(fresh.set_link_suspect(node(fresh, "n2"), true).has_value());
	Decision d = decide(fresh, "nodes=2 gpus_per_node=8 class=a100 comm=heavy");
	ck_assert(d.placed());
	bool said = false;
	for (size_t i = 1; i < d.candidates.size(); i++)
		said = said || (d.candidates[i].why.find("degraded links") != std::string::npos &&
				d.candidates[i].why.find("links +100.0") != std::string::npos);
	ck_assert_msg(said, "no candidate says it lost on its links");
	// Without the mark both leaves tie again and the first is taken.
	ck_assert(fresh.set_link_suspect(node(fresh, "n2"), false).has_value());
	ck_assert(fresh.link_degradation(c.nodes[node(fresh, "n2")].leaf) == 0);
	auto again = run(fresh, "nodes=2 gpus_per_node=8 class=a100 comm=heavy");
	ck_assert_sstr_eq(leaf_of(again[0]), degraded);
}
END_TEST

START_TEST(gang_never_placed_in_part)
{
	auto c = test_cluster();
	State s(c);
	Decision d = decide(s, "nodes=17 gpus_per_node=1");
	ck_assert(!d.placed());
	ck_assert(!d.reason.empty());
	// Counts say 4 idle leaf nodes, but Slurm offers only 3 of them and 2 others.
	Allowed allowed(c.nodes.size());
	for (const char *n : {"n1", "n2", "n3", "n9", "n13"})
		allowed.set(node(s, n));
	d = decide(s, "nodes=6 exclusive=yes", &allowed);
	ck_assert(!d.placed());
	d = decide(s, "nodes=5 exclusive=yes", &allowed);
	ck_assert(d.placed());
	for (const Candidate &cand : d.candidates) {
		ck_assert_int_eq(cand.nodes.size(), 5);
		for (Index n : cand.nodes)
			ck_assert(allowed.test(n));
	}
	d = decide(s, "nodes=4 exclusive=yes exclude=n2", &allowed);
	ck_assert(d.placed());
	for (Index n : d.candidates[0].nodes)
		ck_assert(c.nodes[n].name != "n2");
	// The plugin hands excluded nodes over as one hostlist.
	Request r = req("nodes=2 exclusive=yes");
	r.exclude = {"n[1-15]"};
	auto one = loom::place::place(s, r, nullptr, Weights{});
	ck_assert(one.has_value() && !one->placed());
	// Cores count too: 65 cores per node do not exist.
	ck_assert(!decide(s, "nodes=1 cores_per_node=65").placed());
}
END_TEST

START_TEST(locality_strict_prefer_and_switches)
{
	auto c = test_cluster();
	State s(c);
	ck_assert(!decide(s, "nodes=6 gpus_per_node=8 locality=leaf:strict").placed());
	ck_assert(decide(s, "nodes=6 gpus_per_node=8 locality=pod:strict").placed());
	ck_assert(decide(s, "nodes=6 gpus_per_node=8 locality=leaf:prefer").placed());
	ck_assert(!decide(s, "nodes=6 gpus_per_node=8 switches=1").placed());
	Decision d = decide(s, "nodes=6 gpus_per_node=8 switches=2");
	ck_assert(d.placed());
	ck_assert_int_eq(d.candidates[0].score.leaves, 2);
	ck_assert(!loom::place::place(s, req("locality=rack:strict"), nullptr, Weights{}).has_value());
}
END_TEST

START_TEST(runner_up_and_scores)
{
	auto c = test_cluster();
	State s(c);
	ck_assert(s.allocate(node(s, "n1"), 8, 64).has_value());
	Decision d = decide(s, "nodes=4 gpus_per_node=8");
	ck_assert_int_eq(d.candidates.size(), 2);
	const Score &a = d.candidates[0].score, &b = d.candidates[1].score;
	ck_assert_int_eq(a.leaves, 1);
	ck_assert_int_eq(a.height, 0);
	ck_assert(a.total <= b.total);
	ck_assert(d.candidates[0].why.rfind("chosen:", 0) == 0);
	ck_assert(d.candidates[1].why.rfind("runner-up:", 0) == 0);
	// The chosen leaf keeps the other pod whole (pod1 has 3 idle left, pod2 8).
	ck_assert_sstr_eq(pod_of(s, *leaves_of(s, {c.nodes[d.candidates[0].nodes[0]].name}).begin()), "pod1");
}
END_TEST

START_TEST(total_gpus_fewest_nodes)
{
	auto c = test_cluster();
	State s(c);
	ck_assert(s.allocate(node(s, "n5"), 4, 0).has_value());
	Decision d = decide(s, "gpus=12 nodes=1-2");
	ck_assert(d.placed());
	const Candidate &k = d.candidates[0];
	ck_assert_int_eq(k.nodes.size(), 2);
	ck_assert_int_eq(k.gpus[0] + k.gpus[1], 12);
	ck_assert_int_eq(k.score.idle_nodes_broken, 0); // 8 on an idle node + the 4 free on n5
	ck_assert(!decide(s, "gpus=40 nodes=1-4").placed());
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("place");
	TCase *tc = tcase_create("engine");
	tcase_add_test(tc, counts_follow_allocations);
	tcase_add_test(tc, small_jobs_pack_so_large_gangs_get_leaves);
	tcase_add_test(tc, class_request_lands_on_class);
	tcase_add_test(tc, suspect_node_avoided_while_others_fit);
	tcase_add_test(tc, heavy_gang_leaves_a_leaf_with_degraded_links);
	tcase_add_test(tc, gang_never_placed_in_part);
	tcase_add_test(tc, locality_strict_prefer_and_switches);
	tcase_add_test(tc, runner_up_and_scores);
	tcase_add_test(tc, total_gpus_fewest_nodes);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, place_fabric_tests());
	suite_add_tcase(s, place_slurm_tests());
	return s;
}

LOOM_CHECK_MAIN(make_suite)
