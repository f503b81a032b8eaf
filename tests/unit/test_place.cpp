// Unit tests for the placement engine on the test-cluster shape (16 nodes x 8
// GPUs, 4 leaves of 4, 2 pods, one spine; n1-n8 a100, n9-n16 h100), on
// synthetic fabrics with NVLink domains, and on a real InfiniBand fabric.
#include "tests/unit/check_main.hpp"
#include "tests/unit/place_fixture.hpp"

#include "lib/place/engine.hpp"
#include "lib/place/slurm_policy.hpp"
#include "lib/place/synthetic.hpp"
#include "lib/topo/build.hpp"
#include "lib/topo/ibnetdiscover.hpp"
#include "lib/util/fs.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

using namespace loom;
using namespace loom::place;

namespace {

Request req(const std::string &text)
{
	auto r = parse_request(text);
	ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
	return *r;
}

Decision decide(const State &s, const std::string &text, const Allowed *allowed = nullptr, int max = 2)
{
	auto d = loom::place::place(s, req(text), allowed, Weights{}, max);
	ck_assert_msg(d.has_value(), "%s: %s", text.c_str(), d ? "" : d.error().str().c_str());
	return *d;
}

// Place and start the job; returns the node names.
std::vector<std::string> run(State &s, const std::string &text)
{
	Decision d = decide(s, text);
	ck_assert_msg(d.placed(), "%s: %s", text.c_str(), d.reason.c_str());
	ck_assert(commit(s, req(text), d.candidates[0]).has_value());
	std::vector<std::string> names;
	for (Index n : d.candidates[0].nodes)
		names.push_back(s.cluster().nodes[n].name);
	return names;
}

std::set<std::string> leaves_of(const State &s, const std::vector<std::string> &names)
{
	std::set<std::string> out;
	for (const auto &n : names)
		out.insert(s.cluster().domains[s.cluster().nodes[s.cluster().find_node(n)].leaf].name);
	return out;
}

std::string pod_of(const State &s, const std::string &leaf)
{
	const auto &c = s.cluster();
	return c.domains[c.domains[c.find_domain(leaf)].parent].name;
}

Index node(const State &s, const std::string &name) { return s.cluster().find_node(name); }

} // namespace

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
	for (const char *job : {"gpus_per_node=1", "gpus_per_node=2", "gpus_per_node=4", "gpus_per_node=1",
				"gpus_per_node=3", "gpus_per_node=2", "gpus_per_node=4", "gpus_per_node=2",
				"nodes=2 gpus_per_node=2"}) {
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
	tcase_add_test(tc, nvlink_domains_kept_together);
	tcase_add_test(tc, baseline_ignores_partial_nodes);
	tcase_add_test(tc, real_ndr_fabric);
	tcase_add_test(tc, slurm_policies_that_step_aside);
	tcase_add_test(tc, node_weight_tiers_first);
	tcase_add_test(tc, required_nodes_and_locality_both_hold);
	tcase_add_test(tc, node_ranges_take_slurms_target);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
