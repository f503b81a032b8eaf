// select/topo's fabric loading: topology.conf + Slurm node records, nodes the
// fabric lacks, and loom-topo.conf parsing.
#include "tests/unit/check_main.hpp"
#include "tests/unit/tree16.hpp"

#include "plugins/select_topo/config.hpp"
#include "plugins/select_topo/fabric.hpp"
#include "lib/util/fs.hpp"

#include <unistd.h>

using namespace loom;
using namespace loom::select_topo;

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
	ck_assert(write_file_atomic(topo, "SwitchName=leaf1 Nodes=n[1-4]\nSwitchName=pod Switches=leaf9\n").has_value());
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
	auto none = read_config(p);
	ck_assert(none.has_value());
	ck_assert(none->path.empty());
	ck_assert_int_eq(none->max_candidates, 3);
	ck_assert(write_file_atomic(p, "# fabric\ncluster_file=/etc/slurm/c.json\ngpu_classes=a100,h100\n").has_value());
	auto c = read_config(p);
	ck_assert(c.has_value());
	ck_assert_sstr_eq(c->cluster_file, "/etc/slurm/c.json");
	ck_assert_int_eq(c->gpu_classes.size(), 2);
	ck_assert(write_file_atomic(p, "max_candidates=100\n").has_value());
	auto bad = read_config(p);
	ck_assert(!bad);
	ck_assert_msg(bad.error().str().find("loom-topo.conf:1") != std::string::npos &&
			      bad.error().str().find("max_candidates") != std::string::npos,
		      "%s", bad.error().str().c_str());
	ck_assert(write_file_atomic(p, "failure_stats=/var/spool/loom/loom-failure-stats.json\nfailure_stats_poll=2s\n")
			  .has_value());
	auto fs = read_config(p);
	ck_assert(fs.has_value());
	ck_assert_sstr_eq(fs->failure_stats, "/var/spool/loom/loom-failure-stats.json");
	ck_assert_int_eq(fs->failure_stats_poll_s, 2);
	ck_assert(write_file_atomic(p, "failure_stats=stats.json\n").has_value());
	auto rel = read_config(p);
	ck_assert(!rel);
	ck_assert_msg(rel.error().str().find("failure_stats='stats.json'") != std::string::npos, "%s",
		      rel.error().str().c_str());
	ck_assert(write_file_atomic(p, "failure_stats=none\n").has_value());
	ck_assert(read_config(p).has_value());
	unlink(p.c_str());
	rmdir(d.c_str());
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
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
