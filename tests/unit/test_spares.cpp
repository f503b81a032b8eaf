// The spare pool: which nodes are spares (lib/place/spares.hpp), the pool
// file select/topo publishes (lib/exchange/spare_file.hpp), and the
// replacement plan jobcomp/health makes from it (lib/health/spares.hpp).
// Clusters are topology.conf text, so what a test asserts can be read off the
// text.
#include "lib/exchange/spare_file.hpp"
#include "lib/health/spares.hpp"
#include "lib/place/spares.hpp"
#include "lib/topo/build.hpp"
#include "lib/topo/slurm_conf.hpp"

#include <climits>
#include <map>
#include <string>
#include <vector>

#include "tests/unit/check_main.hpp"
#include "tests/unit/tree16.hpp"

using namespace loom;

namespace {

// leaf1 n[1-4], leaf2 n[5-8] in pod1; leaf3 n[9-12], leaf4 n[13-16] in pod2.
const char *k_tree = k_tree16_topology_conf;

topo::Cluster tree()
{
	auto spec = topo::parse_topology_conf(k_tree, "topology.conf");
	ck_assert_msg(spec.has_value(), "%s", spec ? "" : spec.error().str().c_str());
	auto c = topo::build_cluster(std::move(*spec));
	ck_assert_msg(c.has_value(), "%s", c ? "" : c.error().str().c_str());
	return std::move(*c);
}

std::vector<place::SpareNodeState> all_idle(const topo::Cluster &c)
{
	return std::vector<place::SpareNodeState>(c.nodes.size(), place::SpareNodeState::idle);
}

place::SpareNodeState &at(const topo::Cluster &c, std::vector<place::SpareNodeState> &st, const char *name)
{
	topo::Index m = c.find_node(name);
	ck_assert_msg(m != topo::none, "no node %s", name);
	return st[static_cast<size_t>(m)];
}

std::vector<std::string> spares_of(const topo::Cluster &c, const place::SparePool &p, const std::string &domain)
{
	for (const place::SpareDomain &d : p.domains)
		if (d.name == domain) {
			std::vector<std::string> out;
			for (topo::Index m : d.spares)
				out.push_back(c.nodes[static_cast<size_t>(m)].name);
			return out;
		}
	ck_abort_msg("no domain %s", domain.c_str());
	return {};
}

using Names = std::vector<std::string>;

health::SlurmNode node(const std::string &name, const std::string &state)
{
	auto n = health::parse_show_node("NodeName=" + name + " Arch=x86_64\n   State=" + state + " ThreadsPerCore=1\n",
					 name);
	ck_assert(n.has_value());
	return *n;
}

// leaf:1 then pod:1 on the tree above, as select/topo would publish it.
exchange::SpareFile pool_file()
{
	exchange::SpareFile f;
	f.written = 1764800000;
	f.lend_max_s = 1800;
	f.domains = {{"leaf", "leaf1", {"n1", "n2", "n3", "n4"}, {"n4"}, 1},
		     {"leaf", "leaf2", {"n5", "n6", "n7", "n8"}, {"n8"}, 1},
		     {"pod", "pod1", {"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"}, {"n4", "n8"}, 1}};
	return f;
}

} // namespace

START_TEST(spares_are_the_last_usable_nodes_of_each_domain)
{
	topo::Cluster c = tree();
	auto spec = place::parse_spares("leaf:1");
	ck_assert(spec.has_value());
	auto st = all_idle(c);
	place::SparePool p = place::choose_spares(c, *spec, st);
	ck_assert_int_eq(p.domains.size(), 4);
	ck_assert(spares_of(c, p, "leaf1") == Names{"n4"});
	ck_assert(spares_of(c, p, "leaf4") == Names{"n16"});
	ck_assert_int_eq(p.count(), 4);
	// A busy spare (a borrower on it) stays the spare; a drained, reserved or
	// suspect one (all "unusable" to the pool) hands the role to the next node.
	at(c, st, "n8") = place::SpareNodeState::busy;
	at(c, st, "n4") = place::SpareNodeState::unusable;
	p = place::choose_spares(c, *spec, st);
	ck_assert(spares_of(c, p, "leaf1") == Names{"n3"});
	ck_assert(spares_of(c, p, "leaf2") == Names{"n8"});
	ck_assert(!p.is_spare(c.find_node("n4")));
	// The node returns: it is the spare again, n3 is not.
	at(c, st, "n4") = place::SpareNodeState::idle;
	p = place::choose_spares(c, *spec, st);
	ck_assert(spares_of(c, p, "leaf1") == Names{"n4"});
	// A leaf with no usable node has no spare, and says it wants one.
	for (const char *n : {"n13", "n14", "n15", "n16"})
		at(c, st, n) = place::SpareNodeState::unusable;
	p = place::choose_spares(c, *spec, st);
	ck_assert(spares_of(c, p, "leaf4").empty());
	ck_assert_int_eq(p.domains[3].want, 1);
}
END_TEST

START_TEST(later_rules_count_the_spares_of_earlier_ones)
{
	topo::Cluster c = tree();
	auto spec = place::parse_spares("leaf:1,pod:3");
	ck_assert(spec.has_value());
	place::SparePool p = place::choose_spares(c, *spec, all_idle(c));
	// pod1 holds leaf1's n4 and leaf2's n8, and takes one more: its last other node.
	ck_assert(spares_of(c, p, "pod1") == (Names{"n4", "n7", "n8"}));
	ck_assert_int_eq(p.count(), 6); // 4 leaf spares, one more in each pod
	// A share rounds up: 25% of a 4-node leaf is 1, 10% of an 8-node pod is 1.
	auto share = place::parse_spares("leaf:25%");
	ck_assert(share.has_value());
	ck_assert_int_eq(place::choose_spares(c, *share, all_idle(c)).count(), 4);
	auto tenth = place::parse_spares("pod:10%");
	ck_assert(tenth.has_value());
	ck_assert_int_eq(place::choose_spares(c, *tenth, all_idle(c)).count(), 2);
}
END_TEST

START_TEST(spares_option_fails_closed)
{
	for (const char *bad :
	     {"leaf", "leaf:", ":1", "leaf:0", "leaf:x", "leaf:65", "leaf:0%", "leaf:60%", "leaf:1,leaf:2"}) {
		auto s = place::parse_spares(bad);
		ck_assert_msg(!s.has_value(), "'%s' accepted", bad);
		ck_assert_msg(s.error().str().find("spares") != std::string::npos, "%s", s.error().str().c_str());
	}
	ck_assert(place::parse_spares("none")->empty());
	ck_assert(place::parse_spares("")->empty());
	topo::Cluster c = tree();
	auto rack = place::parse_spares("rack:1");
	ck_assert(rack.has_value());
	auto st = place::check_spare_kinds(*rack, topo::locality_kinds(c));
	ck_assert(!st);
	ck_assert_msg(st.error().str().find("no domain of kind 'rack' (kinds: leaf, ") != std::string::npos, "%s",
		      st.error().str().c_str());
	// Who may borrow: a job with a time limit within spare_lend; none when 0;
	// never a job without a limit.
	place::SpareSpec spec = *place::parse_spares("leaf:1");
	spec.lend_max_s = 1800;
	ck_assert(place::may_borrow_spares(spec, 600));
	ck_assert(place::may_borrow_spares(spec, 1800));
	ck_assert(!place::may_borrow_spares(spec, 1801));
	ck_assert(!place::may_borrow_spares(spec, 0));
	spec.lend_max_s = 0;
	ck_assert(!place::may_borrow_spares(spec, 60));
}
END_TEST

START_TEST(pool_file_round_trips_and_is_strict)
{
	exchange::SpareFile f = pool_file();
	f.domains.push_back({"leaf", "leaf3", {"n9", "n10", "n11", "n12"}, {}, 1}); // none left
	std::string text = exchange::spare_file_json(f);
	ck_assert_msg(text.find("\"nodes\":\"n[1-4]\"") != std::string::npos ||
			      text.find("\"nodes\": \"n[1-4]\"") != std::string::npos,
		      "%s", text.c_str());
	auto back = exchange::parse_spare_file(text, "loom-spares.json");
	ck_assert_msg(back.has_value(), "%s", back ? "" : back.error().str().c_str());
	ck_assert_int_eq(back->domains.size(), 4);
	ck_assert(back->domains[2].spares == (Names{"n4", "n8"}));
	ck_assert(back->domains[3].spares.empty() && back->domains[3].want == 1);
	ck_assert_int_eq(back->lend_max_s, 1800);
	struct Bad {
		std::string text, says;
	};
	for (const Bad &b : std::vector<Bad>{
		     {"{\"format\":\"loom-spares/2\",\"written\":1,\"lend_max_s\":0,\"domains\":[]}", "$.format"},
		     {"{\"format\":\"loom-spares/1\",\"written\":1,\"lend_max_s\":0,\"domains\":[],\"x\":1}", "x"},
		     {"{\"format\":\"loom-spares/1\",\"written\":1,\"lend_max_s\":0,\"domains\":[{\"kind\":\"leaf\","
		      "\"name\":\"leaf1\",\"nodes\":\"n[1-4]\",\"want\":1,\"spares\":\"n9\"}]}",
		      "$.domains[0].spares: n9 is not a node of leaf1"},
		     {"{\"format\":\"loom-spares/1\",\"written\":1,\"lend_max_s\":0,\"domains\":[{\"kind\":\"leaf\","
		      "\"name\":\"leaf1\",\"nodes\":\"n[1-\",\"want\":1,\"spares\":\"\"}]}",
		      "$.domains[0].nodes"}}) {
		auto r = exchange::parse_spare_file(b.text, "f.json");
		ck_assert_msg(!r.has_value(), "accepted: %s", b.text.c_str());
		ck_assert_msg(r.error().str().find(b.says) != std::string::npos, "%s", r.error().str().c_str());
		ck_assert_msg(r.error().str().find("f.json") != std::string::npos, "%s", r.error().str().c_str());
	}
}
END_TEST

START_TEST(culprits_are_replaced_from_their_own_domain_first)
{
	exchange::SpareFile f = pool_file();
	std::map<std::string, health::SlurmNode> st{{"n4", node("n4", "IDLE")}, {"n8", node("n8", "IDLE")}};
	// n3 of leaf1 fails under a job on n[1-3]: leaf1's spare n4.
	auto r = health::plan_replacement(f, {"n1", "n2", "n3"}, {"n3"}, st);
	ck_assert_msg(r.ok, "%s", r.why.c_str());
	ck_assert(r.nodes == (Names{"n1", "n2", "n4"}));
	ck_assert_sstr_eq(r.summary().c_str(), "n3 -> n4 (leaf leaf1)");
	// Two of its nodes fail together: leaf1's one spare, then pod1's other
	// (leaf2's n8): both replaced in one plan.
	r = health::plan_replacement(f, {"n1", "n2", "n3"}, {"n2", "n3"}, st);
	ck_assert_msg(r.ok, "%s", r.why.c_str());
	ck_assert(r.nodes == (Names{"n1", "n4", "n8"}));
	ck_assert_sstr_eq(r.summary().c_str(), "n2 -> n4 (leaf leaf1), n3 -> n8 (pod pod1)");
	// An idle spare before one a short job borrowed.
	st["n4"] = node("n4", "ALLOCATED");
	r = health::plan_replacement(f, {"n1", "n2", "n3"}, {"n3"}, st);
	ck_assert(r.ok && r.swaps[0].second == "n8");
	// Not enough: none, not part. A drained or reserved spare is not used.
	st["n4"] = node("n4", "IDLE+DRAIN");
	st["n8"] = node("n8", "IDLE+RESERVED");
	r = health::plan_replacement(f, {"n1", "n2", "n3"}, {"n3"}, st);
	ck_assert(!r.ok && r.nodes.empty() && r.swaps.empty());
	ck_assert_msg(r.why == "no usable spare left in leaf leaf1 or pod pod1 for n3", "%s", r.why.c_str());
	st["n8"] = node("n8", "IDLE");
	r = health::plan_replacement(f, {"n1", "n2", "n3"}, {"n2", "n3"}, st);
	ck_assert(!r.ok && r.nodes.empty());
	// A culprit outside the pool's domains, or no culprit at all.
	r = health::plan_replacement(f, {"n9", "n10"}, {"n9"}, st);
	ck_assert(!r.ok && r.why == "n9 is in no domain of the spare pool");
	ck_assert(!health::plan_replacement(f, {"n1"}, {}, st).ok);
	// The spares worth asking Slurm about for a culprit of leaf1.
	ck_assert(health::candidate_spares(f, {"n3"}) == (Names{"n4", "n8"}));
}
END_TEST

// A busy spare is waited for only when the job on it is a borrower's: it
// ends within the pool's lending bound. One whose job was there before the
// node became a spare, or runs without a limit, could hold the replacement
// for days; an unknown end is not waited for either.
START_TEST(a_busy_spare_is_waited_for_only_when_a_borrower_holds_it)
{
	exchange::SpareFile f = pool_file(); // lend_max_s 1800
	const int64_t now = 1764800000;
	std::map<std::string, health::SlurmNode> st{{"n4", node("n4", "ALLOCATED")}, {"n8", node("n8", "MIXED")}};
	auto r = health::plan_replacement(f, {"n1", "n2", "n3"}, {"n3"}, st);
	ck_assert(!r.ok);
	ck_assert_msg(r.why == "no usable spare left in leaf leaf1 or pod pod1 for n3", "%s", r.why.c_str());
	r = health::plan_replacement(f, {"n1", "n2", "n3"}, {"n3"}, st, {{"n4", now + 600}, {"n8", now + 600}}, now);
	ck_assert_msg(r.ok, "%s", r.why.c_str());
	ck_assert_sstr_eq(r.summary().c_str(), "n3 -> n4 (leaf leaf1)");
	r = health::plan_replacement(f, {"n1", "n2", "n3"}, {"n3"}, st, {{"n4", now + 86400}, {"n8", now + 1800}}, now);
	ck_assert_msg(r.ok, "%s", r.why.c_str());
	ck_assert_sstr_eq(r.summary().c_str(), "n3 -> n8 (pod pod1)");
	r = health::plan_replacement(f, {"n1", "n2", "n3"}, {"n3"}, st, {{"n4", INT64_MAX}, {"n8", now + 1801}}, now);
	ck_assert(!r.ok);
	f.lend_max_s = 0; // the pool lends nothing: no busy spare is a borrower's
	r = health::plan_replacement(f, {"n1", "n2", "n3"}, {"n3"}, st, {{"n4", now + 60}}, now);
	ck_assert(!r.ok);
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("spares");
	TCase *tc = tcase_create("pool");
	tcase_add_test(tc, spares_are_the_last_usable_nodes_of_each_domain);
	tcase_add_test(tc, later_rules_count_the_spares_of_earlier_ones);
	tcase_add_test(tc, spares_option_fails_closed);
	suite_add_tcase(s, tc);
	tc = tcase_create("replacement");
	tcase_add_test(tc, pool_file_round_trips_and_is_strict);
	tcase_add_test(tc, culprits_are_replaced_from_their_own_domain_first);
	tcase_add_test(tc, a_busy_spare_is_waited_for_only_when_a_borrower_holds_it);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
