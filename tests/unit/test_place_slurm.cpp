// Unit tests for the placement engine under Slurm's policies: the ones it
// steps aside for, node weight tiers, required nodes and node-count ranges.
#include "tests/unit/check_main.hpp"
#include "tests/unit/place_engine_fixture.hpp"
#include "tests/unit/place_fixture.hpp"

#include "lib/place/engine.hpp"
#include "lib/place/slurm_policy.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

using namespace loom;
using namespace loom::place;
using namespace loom::place::testing;

START_TEST(slurm_policies_that_step_aside)
{
	using loom::place::SlurmPolicies;
	using loom::place::step_aside_for;
	// Each check holds the answer in a string of its own (ck_assert_str_eq
	// keeps the pointer past the expression).
	auto is = [](const SlurmPolicies &p, const char *want) {
		std::string got = step_aside_for(p);
		ck_assert_str_eq(got.c_str(), want);
	};
	is(SlurmPolicies{}, "");
	SlurmPolicies p;
	p.spread_job = true;
	is(p, "--spread-job");
	p = SlurmPolicies{};
	p.contiguous = true;
	is(p, "--contiguous");
	p = SlurmPolicies{};
	p.least_loaded = true;
	is(p, "partition LLN");
	p.spread_job = true; // both: the user's own option is named
	is(p, "--spread-job");
	p = SlurmPolicies{};
	p.select_lln = true;
	is(p, "SelectTypeParameters LLN");
	p = SlurmPolicies{};
	p.required_all = true;
	is(p, "--nodelist naming every node of the job");
}
END_TEST

namespace {
std::vector<std::string> names_of(const State &s, const Candidate &c)
{
	std::vector<std::string> v;
	for (Index n : c.nodes)
		v.push_back(s.cluster().nodes[n].name);
	return v;
}

Within within(const State &s, const std::string &text, const SlurmConstraints &cons)
{
	Allowed all(s.node_count(), true);
	auto w = place_within(s, req(text), all, cons, Weights{});
	ck_assert_msg(w.has_value(), "%s: %s", text.c_str(), w ? "" : w.error().str().c_str());
	return *w;
}
} // namespace

START_TEST(node_weight_tiers_first)
{
	// Weight=10 on n1-n8, Weight=1 on n9-n16: Slurm gives the light nodes
	// first, and adds the heavy ones only when the job does not fit.
	topo::Cluster c = test_cluster();
	State s(c);
	SlurmConstraints cons;
	cons.weight.assign(s.node_count(), 0);
	for (int i = 1; i <= 16; i++)
		cons.weight[node(s, "n" + std::to_string(i))] = i <= 8 ? 10 : 1;
	Within w = within(s, "nodes=4 gpus_per_node=8", cons);
	ck_assert(w.decision.placed());
	for (const auto &n : names_of(s, w.decision.candidates[0]))
		ck_assert_msg(std::stoi(n.substr(1)) >= 9, "4-node job on weight-10 node %s", n.c_str());
	ck_assert_int_eq(leaves_of(s, names_of(s, w.decision.candidates[0])).size(), 1);
	ck_assert_str_eq(w.note.c_str(), "weight tier 1 of 2");
	// 10 nodes do not fit in the 8 light ones: the next tier is added, and
	// the gang is placed tightest over both.
	Within big = within(s, "nodes=10 gpus_per_node=8", cons);
	ck_assert(big.decision.placed());
	ck_assert_int_eq(big.decision.candidates[0].nodes.size(), 10);
	ck_assert_msg(big.note.find("weight tier 2 of 2, with the lighter tiers' 8 nodes") == 0, "note: %s",
		      big.note.c_str());
	// ... and, as cons_tres, every light node first: two heavy ones only.
	int heavy = 0;
	for (const auto &n : names_of(s, big.decision.candidates[0]))
		heavy += std::stoi(n.substr(1)) <= 8;
	ck_assert_int_eq(heavy, 2);
	ck_assert_int_eq(leaves_of(s, names_of(s, big.decision.candidates[0])).size(), 3);
	// A weight per node (n1=1 ... n16=16): the four lightest, found in
	// O(log 16) decisions, not one per tier.
	for (int i = 1; i <= 16; i++)
		cons.weight[node(s, "n" + std::to_string(i))] = static_cast<uint64_t>(i);
	Within each = within(s, "nodes=4 gpus_per_node=8", cons);
	ck_assert(each.decision.placed());
	auto four = names_of(s, each.decision.candidates[0]);
	std::sort(four.begin(), four.end());
	ck_assert_msg((four == std::vector<std::string>{"n1", "n2", "n3", "n4"}), "got %s %s %s %s", four[0].c_str(),
		      four[1].c_str(), four[2].c_str(), four[3].c_str());
	ck_assert_msg(each.note.find("weight tier 4 of 16") == 0, "note: %s", each.note.c_str());
	// Equal weights: no tiers, nothing to say.
	cons.weight.assign(s.node_count(), 7);
	Within same = within(s, "nodes=4 gpus_per_node=8", cons); // kept: ck_assert_str_eq reads it late
	ck_assert_str_eq(same.note.c_str(), "");
}
END_TEST

START_TEST(required_nodes_and_locality_both_hold)
{
	topo::Cluster c = test_cluster();
	State s(c);
	SlurmConstraints cons;
	cons.required = {node(s, "n6")};
	// -w n6 -N 3: n6 and two more from its leaf (n5-n8).
	Within w = within(s, "nodes=3 gpus_per_node=8", cons);
	ck_assert_msg(w.decision.placed(), "%s", w.decision.reason.c_str());
	auto got = names_of(s, w.decision.candidates[0]);
	ck_assert_int_eq(got.size(), 3);
	ck_assert(std::find(got.begin(), got.end(), "n6") != got.end());
	ck_assert_msg(leaves_of(s, got) == std::set<std::string>{"leaf2"}, "3 nodes around n6 not in its leaf");
	for (const Candidate &cand : w.decision.candidates)
		ck_assert(std::find(cand.nodes.begin(), cand.nodes.end(), node(s, "n6")) != cand.nodes.end());
	// Its leaf full but for n6: the rest from its pod (leaf1), not the other pod.
	for (const char *n : {"n5", "n7", "n8"})
		ck_assert(s.allocate(node(s, n), 8, 0).has_value());
	w = within(s, "nodes=3 gpus_per_node=8", cons);
	ck_assert(w.decision.placed());
	got = names_of(s, w.decision.candidates[0]);
	ck_assert(std::find(got.begin(), got.end(), "n6") != got.end());
	for (const auto &n : got)
		ck_assert_msg(std::stoi(n.substr(1)) <= 8, "node %s outside n6's pod", n.c_str());
	ck_assert_msg(w.note.find("with required n6") == 0 && w.note.find("pod1") != std::string::npos, "note: %s",
		      w.note.c_str());
}
END_TEST

START_TEST(node_ranges_take_slurms_target)
{
	topo::Cluster c = test_cluster();
	State s(c);
	SlurmConstraints cons;
	// -N 2-8 on an idle cluster: Slurm aims for 8, in one pod.
	cons.target_nodes = 8;
	Within w = within(s, "nodes=2-8 gpus_per_node=8", cons);
	ck_assert_int_eq(w.decision.candidates[0].nodes.size(), 8);
	ck_assert_int_eq(leaves_of(s, names_of(s, w.decision.candidates[0])).size(), 2);
	ck_assert_str_eq(w.note.c_str(), "8 of 2-8 nodes");
	// --use-min-nodes: Slurm aims for 2, in one leaf.
	cons.target_nodes = 2;
	cons.use_min_nodes = true;
	w = within(s, "nodes=2-8 gpus_per_node=8", cons);
	ck_assert_int_eq(w.decision.candidates[0].nodes.size(), 2);
	ck_assert_str_eq(w.note.c_str(), "2 of 2-8 nodes (--use-min-nodes)");
	// Only 5 nodes free: as many as there are, 5.
	for (int i = 1; i <= 11; i++)
		ck_assert(s.allocate(node(s, "n" + std::to_string(i)), 8, 0).has_value());
	cons.target_nodes = 8;
	cons.use_min_nodes = false;
	w = within(s, "nodes=2-8 gpus_per_node=8", cons);
	ck_assert_int_eq(w.decision.candidates[0].nodes.size(), 5);
	// Fewer free than the minimum: not placed, and the reason says so.
	w = within(s, "nodes=6-8 gpus_per_node=8", cons);
	ck_assert(!w.decision.placed());
	ck_assert(!w.decision.reason.empty());
}
END_TEST

TCase *place_slurm_tests()
{
	TCase *tc = tcase_create("slurm");
	tcase_add_test(tc, slurm_policies_that_step_aside);
	tcase_add_test(tc, node_weight_tiers_first);
	tcase_add_test(tc, required_nodes_and_locality_both_hold);
	tcase_add_test(tc, node_ranges_take_slurms_target);
	return tc;
}
