// loom health probe --pairs/--judge: the plan covers each node twice with
// different partners and each leaf's uplink; the verdict names the one link
// a bad pattern points to, says when it cannot, and stays clean on a clean run.
#include "tests/unit/check_main.hpp"

#include "lib/topo/build.hpp"
#include "lib/topo/formats.hpp"
#include "lib/topo/net_probe.hpp"

#include <algorithm>
#include <map>
#include <set>

using namespace loom;
using namespace loom::topo;

namespace {

// Three leaves of two nodes under one spine, as the netns test builds it.
topo::Cluster fabric(const char *text = "SwitchName=leaf1 Nodes=n[1-2]\nSwitchName=leaf2 Nodes=n[3-4]\n"
					"SwitchName=leaf3 Nodes=n[5-6]\nSwitchName=spine Switches=leaf[1-3]\n")
{
	auto s = topo::read_spec(text, "topology.conf", topo::Format::topology_conf);
	ck_assert_msg(s.has_value(), "%s", s ? "" : s.error().str().c_str());
	auto c = topo::build_cluster(std::move(*s));
	ck_assert(c.has_value());
	return std::move(*c);
}

// Results of the plan where every pair whose path uses 'bad' lost half its packets.
std::vector<ProbeResult> run(const topo::Cluster &c, const std::vector<ProbePair> &plan, const std::string &bad)
{
	std::vector<ProbeResult> out;
	for (const auto &p : plan) {
		topo::Index a = c.find_node(p.client), b = c.find_node(p.server);
		std::vector<std::string> links = {access_link(c, a), access_link(c, b)};
		if (c.nodes[a].leaf != c.nodes[b].leaf) {
			links.push_back(uplink(c, c.nodes[a].leaf));
			links.push_back(uplink(c, c.nodes[b].leaf));
		}
		bool hit = std::find(links.begin(), links.end(), bad) != links.end();
		out.push_back({p.client, p.server, 200, hit ? 100 : 200, 0.08});
	}
	return out;
}

} // namespace

START_TEST(plan_covers_nodes_and_uplinks)
{
	topo::Cluster c = fabric();
	auto plan = plan_pairs(c, {"n1", "n2", "n3", "n4", "n5", "n6"});
	ck_assert(plan.has_value());
	std::map<std::string, std::set<std::string>> partners;
	std::map<std::string, std::set<std::string>> leaf_peers;
	for (const auto &p : *plan) {
		partners[p.client].insert(p.server);
		partners[p.server].insert(p.client);
		topo::Index a = c.find_node(p.client), b = c.find_node(p.server);
		if (c.nodes[a].leaf != c.nodes[b].leaf) {
			ck_assert_int_eq(p.round, 2);
			leaf_peers[c.domains[c.nodes[a].leaf].name].insert(c.domains[c.nodes[b].leaf].name);
			leaf_peers[c.domains[c.nodes[b].leaf].name].insert(c.domains[c.nodes[a].leaf].name);
		}
	}
	for (const char *n : {"n1", "n2", "n3", "n4", "n5", "n6"})
		ck_assert_msg(partners[n].size() >= 2, "%s has %zu partners", n, partners[n].size());
	for (const char *l : {"leaf1", "leaf2", "leaf3"})
		ck_assert_msg(leaf_peers[l].size() == 2, "%s reaches %zu leaves", l, leaf_peers[l].size());
	ck_assert(!plan_pairs(c, {"n1"}).has_value());
	auto stranger = plan_pairs(c, {"n1", "x9"});
	ck_assert(!stranger.has_value() && stranger.error().str().find("'x9'") != std::string::npos);
}
END_TEST

START_TEST(judge_names_the_bad_link)
{
	topo::Cluster c = fabric();
	auto plan = plan_pairs(c, {"n1", "n2", "n3", "n4", "n5", "n6"});
	ck_assert(plan.has_value());
	ProbeVerdict clean = judge(c, run(c, *plan, "none"));
	ck_assert(clean.bad_pairs.empty() && clean.link.empty());
	ck_assert_msg(clean.why.rfind("clean", 0) == 0, "%s", clean.why.c_str());
	// Every node's link and every uplink, one at a time: that one is named.
	std::vector<std::string> links;
	for (const char *n : {"n1", "n2", "n3", "n4", "n5", "n6"})
		links.push_back(access_link(c, c.find_node(n)));
	for (const char *l : {"leaf1", "leaf2", "leaf3"})
		links.push_back(uplink(c, c.find_domain(l)));
	for (const std::string &bad : links) {
		ProbeVerdict v = judge(c, run(c, *plan, bad));
		ck_assert_msg(v.link == bad, "%s: named '%s' (%s)", bad.c_str(), v.link.c_str(), v.why.c_str());
	}
	ck_assert_sstr_eq(access_link(c, c.find_node("n3")), "n3 - leaf2");
	ck_assert_sstr_eq(uplink(c, c.find_domain("leaf2")), "leaf2 - spine");
	// A slow pair (no loss): 10x the others' round trip.
	auto slow = run(c, *plan, "none");
	for (auto &r : slow)
		if (r.client == "n4" || r.server == "n4")
			r.rtt_median_ms = 20;
	ProbeVerdict vs = judge(c, slow);
	ck_assert_sstr_eq(vs.link, "n4 - leaf2");
	// Two leaves only: their uplinks carry the same pairs and cannot be told apart.
	topo::Cluster two = fabric("SwitchName=leaf1 Nodes=n[1-2]\nSwitchName=leaf2 Nodes=n[3-4]\n"
				   "SwitchName=spine Switches=leaf[1-2]\n");
	auto p2 = plan_pairs(two, {"n1", "n2", "n3", "n4"});
	ck_assert(p2.has_value());
	ProbeVerdict v2 = judge(two, run(two, *p2, "leaf1 - spine"));
	ck_assert(v2.link.empty());
	ck_assert_int_eq(v2.suspects.size(), 2);
	ck_assert_msg(v2.why.find("cannot tell them apart") != std::string::npos, "%s", v2.why.c_str());
}
END_TEST

START_TEST(result_lines)
{
	auto r = parse_results("# probe\nn1 n2 200 190 0.081\n\nn3 n4 200 200 0.07 # ok\n", "r.txt");
	ck_assert(r.has_value());
	ck_assert_int_eq(r->size(), 2);
	ck_assert_int_eq((*r)[0].received, 190);
	ck_assert_sstr_eq(format_result((*r)[0]), "n1 n2 200 190 0.081");
	for (const char *bad :
	     {"n1 n2 200", "n1 n2 200 300 0.1", "n1 n2 0 0 0", "n1 n2 200 100 x", "n1 n2 2 1 0.1 extra"}) {
		auto b = parse_results(std::string("n0 n9 1 1 0.1\n") + bad + "\n", "r.txt");
		ck_assert_msg(!b.has_value(), "'%s' accepted", bad);
		ck_assert_msg(b.error().str().find("r.txt:2") != std::string::npos, "%s", b.error().str().c_str());
	}
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("net_probe");
	TCase *tc = tcase_create("probe");
	tcase_add_test(tc, plan_covers_nodes_and_uplinks);
	tcase_add_test(tc, judge_names_the_bad_link);
	tcase_add_test(tc, result_lines);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
