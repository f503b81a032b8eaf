// The fabric as select/topo loads it (lib/place/fabric.hpp): topology.conf +
// Slurm node records, nodes the fabric lacks, and loom-topo.conf parsing
// (lib/place/topo_conf.hpp).
#include "tests/unit/check_main.hpp"
#include "tests/unit/tree16.hpp"

#include "lib/place/fabric.hpp"
#include "lib/place/ranks.hpp"
#include "lib/place/topo_conf.hpp"
#include "lib/topo/build.hpp"
#include "lib/topo/ibnetdiscover.hpp"
#include "lib/util/fs.hpp"

#include <algorithm>
#include <set>

#include <unistd.h>

using namespace loom;
using namespace loom::place;

namespace {

std::string tmpdir()
{
	char t[] = "/tmp/loom-fabric-XXXXXX";
	return mkdtemp(t) ? std::string(t) : std::string("/tmp");
}

const char *k_topology = k_tree16_topology_conf;

std::vector<SlurmNodeInfo> nodes(int n, int extra = 0)
{
	std::vector<SlurmNodeInfo> v;
	for (int i = 1; i <= n + extra; i++)
		v.push_back({"n" + std::to_string(i), 8, {i <= 8 ? "a100" : "h100", "ib"}});
	return v;
}

} // namespace

// The same fabric as Slurm 25.05+ reads it from topology.yaml, and as
// topology/block's topology.conf; level_names= names the tree's levels.
START_TEST(topology_yaml_and_block_conf)
{
	std::string d = tmpdir();
	std::string yaml = d + "/topology.yaml";
	ck_assert(write_file_atomic(yaml, "- topology: fabric\n"
					  "  cluster_default: true\n"
					  "  tree:\n"
					  "    switches:\n"
					  "      - {switch: leaf1, nodes: \"n[1-8]\"}\n"
					  "      - {switch: leaf2, nodes: \"n[9-16]\"}\n"
					  "      - {switch: top, children: \"leaf[1-2]\"}\n"
					  "- topology: racks\n"
					  "  block:\n"
					  "    block_sizes: [4]\n"
					  "    blocks:\n"
					  "      - {block: r1, nodes: \"n[1-4]\"}\n"
					  "      - {block: r2, nodes: \"n[5-8]\"}\n")
			  .has_value());
	auto f = load_fabric("", yaml, nodes(16), {"a100", "h100"}, {"rack-switch", "row"});
	ck_assert_msg(f.has_value(), "%s", f ? "" : f.error().str().c_str());
	const topo::Cluster &c = f->cluster;
	ck_assert_int_eq(c.nodes.size(), 16);
	ck_assert_int_eq(c.nvlink_domains.size(), 2);
	ck_assert_sstr_eq(join(topo::locality_kinds(c), ","), "rack-switch,row,nvlink");
	std::string block = d + "/topology.conf";
	ck_assert(write_file_atomic(block, "BlockName=b1 Nodes=n[1-8]\nBlockName=b2 Nodes=n[9-16]\n").has_value());
	auto b = load_fabric("", block, nodes(16), {});
	ck_assert_msg(b.has_value(), "%s", b ? "" : b.error().str().c_str());
	ck_assert_int_eq(b->cluster.nvlink_domains.size(), 2);
	ck_assert_sstr_eq(join(topo::locality_kinds(b->cluster), ","), "block,block16,nvlink");
}
END_TEST

START_TEST(topology_conf_with_slurm_nodes)
{
	std::string d = tmpdir();
	std::string topo = d + "/topology.conf";
	ck_assert(write_file_atomic(topo, k_topology).has_value());
	auto f = load_fabric("", topo, nodes(16), {"a100", "h100"});
	ck_assert_msg(f.has_value(), "%s", f ? "" : f.error().str().c_str());
	const topo::Cluster &c = f->cluster;
	ck_assert_int_eq(c.nodes.size(), 16);
	ck_assert_int_eq(c.total_gpus(), 128);
	ck_assert(f->alone.empty());
	// n5 and n6 share leaf2; n1 and n9 meet only at the spine.
	topo::Index n1 = c.find_node("n1"), n5 = c.find_node("n5"), n6 = c.find_node("n6"), n9 = c.find_node("n9");
	ck_assert_sstr_eq(c.domains[c.common_domain(n5, n6)].name, "leaf2");
	ck_assert_sstr_eq(c.domains[c.common_domain(n1, n9)].name, "spine");
	ck_assert_sstr_eq(c.domains[c.common_domain(n1, n5)].name, "pod1");
	// GPU generation from the node features.
	ck_assert_sstr_eq(c.classes.name(c.nodes[n1].perf_class), "a100");
	ck_assert_sstr_eq(c.classes.name(c.nodes[n9].perf_class), "h100");
	ck_assert(c.has_feature(n9, "ib"));
	unlink(topo.c_str());
	rmdir(d.c_str());
}
END_TEST

START_TEST(node_missing_from_fabric_is_alone)
{
	std::string d = tmpdir();
	std::string topo = d + "/topology.conf";
	ck_assert(write_file_atomic(topo, k_topology).has_value());
	auto f = load_fabric("", topo, nodes(16, 1), {"a100", "h100"});
	ck_assert(f.has_value());
	ck_assert_int_eq(f->alone.size(), 1);
	ck_assert_sstr_eq(f->alone[0], "n17");
	const topo::Cluster &c = f->cluster;
	topo::Index n17 = c.find_node("n17");
	ck_assert_int_ne(n17, topo::none);
	// On its own: it shares no switch with any other node.
	ck_assert_int_eq(c.common_domain(n17, c.find_node("n16")), topo::none);
	ck_assert_int_eq(c.domains[c.nodes[n17].leaf].node_count(), 1);
	unlink(topo.c_str());
	rmdir(d.c_str());
}
END_TEST

START_TEST(broken_fabric_is_an_error)
{
	std::string d = tmpdir();
	std::string topo = d + "/topology.conf";
	ck_assert(
		write_file_atomic(topo, "SwitchName=leaf1 Nodes=n[1-4]\nSwitchName=pod Switches=leaf9\n").has_value());
	auto f = load_fabric("", topo, nodes(4), {});
	ck_assert(!f);
	ck_assert_msg(f.error().str().find("topology.conf") != std::string::npos, "%s", f.error().str().c_str());
	auto g = load_fabric(d + "/missing.json", "", nodes(4), {});
	ck_assert(!g);
	ck_assert(g.error().str().find("missing.json") != std::string::npos);
	unlink(topo.c_str());
	rmdir(d.c_str());
}
END_TEST

START_TEST(config_file)
{
	std::string d = tmpdir();
	std::string p = d + "/loom-topo.conf";
	auto none = read_topo_conf(p);
	ck_assert(none.has_value());
	ck_assert(none->path.empty());
	ck_assert_int_eq(none->max_candidates, 3);
	ck_assert(
		write_file_atomic(p, "# fabric\ncluster_file=/etc/slurm/c.json\ngpu_classes=a100,h100\n").has_value());
	auto c = read_topo_conf(p);
	ck_assert(c.has_value());
	ck_assert_sstr_eq(c->cluster_file, "/etc/slurm/c.json");
	ck_assert_int_eq(c->gpu_classes.size(), 2);
	ck_assert(write_file_atomic(p, "max_candidates=100\n").has_value());
	auto bad = read_topo_conf(p);
	ck_assert(!bad);
	ck_assert_msg(bad.error().str().find("loom-topo.conf:1") != std::string::npos &&
			      bad.error().str().find("max_candidates") != std::string::npos,
		      "%s", bad.error().str().c_str());
	ck_assert(write_file_atomic(p, "failure_stats=/var/spool/loom/loom-failure-stats.json\nfailure_stats_poll=2s\n")
			  .has_value());
	auto fs = read_topo_conf(p);
	ck_assert(fs.has_value());
	ck_assert_sstr_eq(fs->failure_stats, "/var/spool/loom/loom-failure-stats.json");
	ck_assert_int_eq(fs->failure_stats_poll_s, 2);
	ck_assert(write_file_atomic(p, "failure_stats=stats.json\n").has_value());
	auto rel = read_topo_conf(p);
	ck_assert(!rel);
	ck_assert_msg(rel.error().str().find("loom-topo.conf:1: key 'failure_stats': bad value 'stats.json'") !=
			      std::string::npos,
		      "%s", rel.error().str().c_str());
	ck_assert(write_file_atomic(p, "failure_stats=none\n").has_value());
	ck_assert(read_topo_conf(p).has_value());
	unlink(p.c_str());
	rmdir(d.c_str());
}
END_TEST

// The fabric as spank_place reads it in slurmstepd, from slurm.conf's
// directory: topology.conf alone; loom-topo.conf's cluster_file over it;
// topology.yaml first only where the release reads it; a bad loom-topo.conf
// is an error naming the file.
START_TEST(fabric_in_the_configuration_directory)
{
	std::string d = tmpdir();
	ck_assert(write_file_atomic(d + "/topology.conf", k_topology).has_value());
	auto f = load_fabric_in(d, true);
	ck_assert_msg(f.has_value(), "%s", f ? "" : f.error().str().c_str());
	ck_assert_sstr_eq(f->source, d + "/topology.conf");
	ck_assert_int_eq(f->cluster.nodes.size(), 16);
	ck_assert(write_file_atomic(d + "/topology.yaml", "- topology: t\n  cluster_default: true\n  tree:\n"
							  "    switches:\n      - {switch: s1, nodes: \"m[1-2]\"}\n")
			  .has_value());
	ck_assert_sstr_eq(topology_file_in(d, false), d + "/topology.conf");
	ck_assert_sstr_eq(topology_file_in(d, true), d + "/topology.yaml");
	auto y = load_fabric_in(d, true);
	ck_assert_msg(y.has_value(), "%s", y ? "" : y.error().str().c_str());
	ck_assert(y->cluster.find_node("m1") != topo::none);
	ck_assert(write_file_atomic(d + "/mine.conf", "SwitchName=x Nodes=z[1-3]\n").has_value());
	ck_assert(write_file_atomic(d + "/loom-topo.conf", "cluster_file=" + d + "/mine.conf\n").has_value());
	auto mine = load_fabric_in(d, true);
	ck_assert_msg(mine.has_value(), "%s", mine ? "" : mine.error().str().c_str());
	ck_assert_int_eq(mine->cluster.nodes.size(), 3);
	ck_assert(write_file_atomic(d + "/loom-topo.conf", "cluster_flie=x\n").has_value());
	auto bad = load_fabric_in(d, true);
	ck_assert(!bad.has_value());
	ck_assert_msg(bad.error().str().find("loom-topo.conf") != std::string::npos &&
			      bad.error().str().find("cluster_flie") != std::string::npos,
		      "%s", bad.error().str().c_str());
	for (const char *n : {"topology.conf", "topology.yaml", "mine.conf", "loom-topo.conf"})
		unlink((d + "/" + n).c_str());
	rmdir(d.c_str());
}
END_TEST

// Leaves cabled across the node names (leaf1: n1 n3 n5 n7, leaf2: n2 n4 n6
// n8): in Slurm's order every ring neighbour crosses a leaf, in loom's only
// the two hops between the leaves.
START_TEST(rank_order_of_leaves_cabled_across_the_names)
{
	std::string d = tmpdir();
	ck_assert(write_file_atomic(d + "/topology.conf", "SwitchName=leaf1 Nodes=n1,n3,n5,n7\n"
							  "SwitchName=leaf2 Nodes=n2,n4,n6,n8\n"
							  "SwitchName=top Switches=leaf[1-2]\n")
			  .has_value());
	auto f = load_fabric_in(d, false);
	ck_assert_msg(f.has_value(), "%s", f ? "" : f.error().str().c_str());
	const topo::Cluster &c = f->cluster;
	std::vector<std::string> slurm = {"n1", "n2", "n3", "n4"};
	auto order = place::rank_order(c, slurm);
	ck_assert(order.has_value());
	ck_assert_sstr_eq(join(*order, " "), "n1 n3 n2 n4");
	place::RingCrossings before = place::ring_crossings(c, slurm), after = place::ring_crossings(c, *order);
	ck_assert_int_eq(before.hops, 4);
	ck_assert_int_eq(before.leaf, 4);
	ck_assert_int_eq(after.leaf, 2);
	// One leaf: no crossing; two hosts: one edge.
	ck_assert_int_eq(place::ring_crossings(c, {"n1", "n3", "n5"}).leaf, 0);
	ck_assert_int_eq(place::ring_crossings(c, {"n1", "n2"}).hops, 1);
	ck_assert_int_eq(place::ring_crossings(c, {"n1", "n2"}).leaf, 1);
	// A host the fabric does not know comes last; one named twice is refused.
	auto with_unknown = place::rank_order(c, {"x9", "n2", "n1"});
	ck_assert(with_unknown.has_value());
	ck_assert_sstr_eq(join(*with_unknown, " "), "n1 n2 x9");
	auto twice = place::rank_order(c, {"n1", "n1"});
	ck_assert(!twice.has_value());
	ck_assert(twice.error().str().find("'n1'") != std::string::npos);

	// A step as slurmstepd sees it: its node list, this node, the task counts
	// in Slurm's order (n1 runs 2 tasks, the others 1).
	auto r = place::step_ranks(c, "n[1-4]", "n2", "2,1(x3)");
	ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
	ck_assert_int_eq(r->node_rank, 2);
	ck_assert_sstr_eq(join(r->task_hosts, " "), "n1 n1 n3 n2 n4");
	auto no_tasks = place::step_ranks(c, "n[1-4]", "n4", "");
	ck_assert(no_tasks.has_value() && no_tasks->task_hosts.empty() && no_tasks->node_rank == 3);
	auto stranger = place::step_ranks(c, "n[1-4]", "n7", "");
	ck_assert(!stranger.has_value());
	ck_assert(stranger.error().str().find("'n7'") != std::string::npos);
	auto bad_list = place::step_ranks(c, "n[1-", "n1", "");
	ck_assert(!bad_list.has_value());
	ck_assert(bad_list.error().str().find("n[1-") != std::string::npos);
	unlink((d + "/topology.conf").c_str());
	rmdir(d.c_str());
}
END_TEST

// SLURM_TASKS_PER_NODE as Slurm writes it.
START_TEST(tasks_per_node_text)
{
	auto a = place::tasks_per_node("8(x2),4", 3);
	ck_assert(a.has_value());
	ck_assert_int_eq(a->size(), 3);
	ck_assert_int_eq((*a)[0], 8);
	ck_assert_int_eq((*a)[1], 8);
	ck_assert_int_eq((*a)[2], 4);
	auto one = place::tasks_per_node("1(x16)", 16);
	ck_assert(one.has_value() && one->size() == 16);
	for (const char *bad : {"", "8(x2", "8(x0)", "x", "8,", "-1", "8(x2)4"})
		ck_assert_msg(!place::tasks_per_node(bad, 2).has_value(), "'%s' accepted", bad);
	auto many = place::tasks_per_node("8(x3)", 2);
	ck_assert(!many.has_value());
	ck_assert_msg(many.error().str().find("2 nodes") != std::string::npos, "%s", many.error().str().c_str());
	auto few = place::tasks_per_node("8", 2);
	ck_assert(!few.has_value());
}
END_TEST

// A real NDR fabric (ibnetdiscover, tests/data/place): every host in name
// order, as slurm.conf would list them. loom's order keeps each leaf's hosts
// together, so the ring crosses a leaf once per leaf it touches, the least
// any order can.
START_TEST(rank_order_on_a_real_fabric)
{
	auto text = read_file(test::data("place/ibnetdiscover-ndr-fabric.out"));
	ck_assert_msg(text.has_value(), "%s", text ? "" : text.error().str().c_str());
	auto fabric = topo::parse_ibnetdiscover(*text, "ndr");
	ck_assert_msg(fabric.has_value(), "%s", fabric ? "" : fabric.error().str().c_str());
	auto c = topo::build_cluster(fabric->spec);
	ck_assert_msg(c.has_value(), "%s", c ? "" : c.error().str().c_str());
	std::vector<std::string> hosts;
	for (const topo::Node &n : c->nodes)
		hosts.push_back(n.name);
	std::sort(hosts.begin(), hosts.end());
	std::set<topo::Index> leaves;
	for (const topo::Node &n : c->nodes)
		leaves.insert(n.leaf);
	ck_assert_int_ge(leaves.size(), 2);
	auto order = place::rank_order(*c, hosts);
	ck_assert(order.has_value());
	ck_assert_int_eq(order->size(), hosts.size());
	ck_assert_int_eq(place::ring_crossings(*c, *order).leaf, leaves.size());
	ck_assert_int_ge(place::ring_crossings(*c, hosts).leaf, leaves.size());
	// Each leaf's hosts in one run.
	std::set<topo::Index> done;
	for (size_t i = 0; i < order->size(); i++) {
		topo::Index l = c->nodes[c->find_node((*order)[i])].leaf;
		if (i > 0 && l == c->nodes[c->find_node((*order)[i - 1])].leaf)
			continue;
		ck_assert_msg(done.insert(l).second, "leaf of %s comes back after another leaf", (*order)[i].c_str());
	}
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("select_topo_fabric");
	TCase *tc = tcase_create("fabric");
	tcase_add_test(tc, topology_conf_with_slurm_nodes);
	tcase_add_test(tc, topology_yaml_and_block_conf);
	tcase_add_test(tc, node_missing_from_fabric_is_alone);
	tcase_add_test(tc, broken_fabric_is_an_error);
	tcase_add_test(tc, config_file);
	tcase_add_test(tc, fabric_in_the_configuration_directory);
	tcase_add_test(tc, rank_order_of_leaves_cabled_across_the_names);
	tcase_add_test(tc, tasks_per_node_text);
	tcase_add_test(tc, rank_order_on_a_real_fabric);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
