// Unit tests for Slurm's topology files: topology/block's topology.conf,
// topology.yaml (Slurm 25.05+), and the tree's topology.conf on the test
// cluster's files (tests/data/topology), with the cluster file checked
// against slurm.conf's planted mismatches.
#include "tests/unit/check_main.hpp"
#include "tests/unit/topo_formats_fixture.hpp"

#include "lib/topo/build.hpp"
#include "lib/topo/check.hpp"
#include "lib/topo/cluster_json.hpp"
#include "lib/topo/formats.hpp"
#include "lib/topo/slurm_conf.hpp"
#include "lib/util/fs.hpp"

#include <string>

using namespace loom;
using namespace loom::topo;

// topology/block's topology.conf (the man page's example, and errors).
START_TEST(block_conf_in_and_out)
{
	const char *conf = "BlockName=block1 Nodes=node[1-32]\n"
			   "BlockName=block2 Nodes=node[33-64]\n"
			   "BlockName=block3 Nodes=node[65-96]\n"
			   "BlockName=block4 Nodes=node[97-128]\n"
			   "BlockSizes=30,120\n";
	ck_assert(guess_format(conf, "topology.conf") == Format::block_conf);
	auto s = read_spec(conf, "block.conf", Format::unknown);
	ck_assert_msg(s.has_value(), "%s", s ? "" : s.error().str().c_str());
	auto c = build_cluster(*s);
	ck_assert_msg(c.has_value(), "%s", c ? "" : c.error().str().c_str());
	ck_assert_int_eq(c->nodes.size(), 128);
	ck_assert_int_eq(c->nvlink_domains.size(), 4); // one per BlockName=
	// 120 = 4 blocks of the base size 30: one aggregated block over all four.
	Index agg = c->find_domain("block120-1");
	ck_assert_int_ne(agg, none);
	ck_assert_int_eq(c->domains[agg].node_count(), 128);
	auto kinds = locality_kinds(*c);
	ck_assert_sstr_eq(join(kinds, ","), "block,block120,nvlink");
	// Written back: the same blocks; BlockSizes from the smallest block (32) doubled up to four blocks.
	auto out = write_block_conf(*c);
	ck_assert(out.has_value());
	ck_assert_msg(out->find("BlockName=block3 Nodes=node[65-96]\n") != std::string::npos, "%s", out->c_str());
	ck_assert_msg(out->find("BlockSizes=32,64,128\n") != std::string::npos, "%s", out->c_str());
	auto e = [](const char *text) {
		auto r = parse_block_conf(text, "b.conf");
		ck_assert(!r);
		return r.error().str();
	};
	ck_assert_sstr_eq(e("BlockName=a Nodes=n[1-4]\nBlockName=b Nodes=n[4-6]\n"),
			  "b.conf:2: node 'n4' is already in a block (b.conf:1)");
	ck_assert_sstr_eq(e("BlockName=a Nodes=n[1-4]\nBlockSizes=4,12\n"),
			  "b.conf:2: BlockSizes: 12 is not a power of two times 4");
	ck_assert_sstr_eq(e("BlockName=a Nodes=n[1-2]\nBlockSizes=4\n"),
			  "b.conf:1: block 'a' has 2 nodes, fewer than the base block size 4 (b.conf:2)");
	ck_assert_sstr_eq(e("BlockName=a Nodes=n1 Switches=x\n"),
			  "b.conf:1: unknown key Switches= (a block has Nodes= only)");
	ck_assert_sstr_eq(
		e("SwitchName=s Nodes=n1\n"),
		"b.conf:1: expected BlockName= or BlockSizes= (the block plugin's format), found SwitchName=");
	// No NVLink domains: no blocks to write, said plainly.
	auto tree = read_spec(data_text("cluster16-topology.conf"), "c16.conf", Format::unknown);
	auto c16 = build_cluster(*tree);
	auto none_out = write_block_conf(*c16);
	ck_assert(!none_out);
	ck_assert(none_out.error().message.find("no NVLink domains") != std::string::npos);
	// The test cluster's kinds by height: leaf, pod, spine (no names in a topology.conf).
	ck_assert_sstr_eq(join(locality_kinds(*c16), ","), "leaf,pod,spine");
}
END_TEST

// topology.yaml (Slurm 25.05+): the man page's example and loom's own file.
START_TEST(topology_yaml_in)
{
	const char *example = "---\n"
			      "- topology: topo1\n"
			      "  cluster_default: true\n"
			      "  tree:\n"
			      "    switches:\n"
			      "      - switch: sw_root\n"
			      "        children: s[1-2]\n"
			      "      - switch: s1\n"
			      "        nodes: node[01-02]\n"
			      "      - switch: s2\n"
			      "        nodes: node[03-04]\n"
			      "- topology: topo2\n"
			      "  cluster_default: false\n"
			      "  block:\n"
			      "    block_sizes:\n"
			      "      - 4\n"
			      "      - 16\n"
			      "    blocks:\n"
			      "      - block: b1\n"
			      "        nodes: node[01-04]\n"
			      "- topology: topo3\n"
			      "  cluster_default: false\n"
			      "  flat: true\n";
	ck_assert(guess_format(example, "topology.yaml") == Format::topology_yaml);
	auto s = read_spec(example, "topology.yaml", Format::unknown);
	ck_assert_msg(s.has_value(), "%s", s ? "" : s.error().str().c_str());
	auto c = build_cluster(*s);
	ck_assert_msg(c.has_value(), "%s", c ? "" : c.error().str().c_str());
	// The default topology (topo1): 3 switches, 4 nodes, s1 holding node01-02;
	// topo2's block b1 is an NVLink domain of the 4 nodes.
	ck_assert_int_eq(c->domains.size(), 3);
	ck_assert_int_eq(c->nodes.size(), 4);
	ck_assert_int_eq(c->domains[c->find_domain("s1")].node_count(), 2);
	ck_assert_int_eq(c->nvlink_domains.size(), 1);
	ck_assert_int_eq(c->nvlink_domains[0].nodes.size(), 4);
	// Written by loom and read back: the same tree and blocks.
	std::string yaml = write_topology_yaml(*c);
	auto back = read_spec(yaml, "written.yaml", Format::unknown);
	ck_assert_msg(back.has_value(), "%s\n%s", back ? "" : back.error().str().c_str(), yaml.c_str());
	auto c2 = build_cluster(*back);
	ck_assert(c2.has_value());
	ck_assert_int_eq(c2->domains.size(), 3);
	ck_assert_int_eq(c2->nvlink_domains.size(), 1);
	auto e = [](const char *text) {
		auto r = parse_topology_yaml(text, "t.yaml");
		ck_assert(!r);
		return r.error().str();
	};
	ck_assert_sstr_eq(e("- topology: x\n  tree:\n    switches:\n      - switch: a\n        nodez: n1\n"),
			  "t.yaml:5: unknown key 'nodez' in a switch");
	ck_assert_sstr_eq(e("- topology: x\n  tree:\n    switches:\n      - switch: a\n        nodes: n[1-2]\n"
			    "      - switch: b\n        nodes: n2\n"),
			  "t.yaml:6: node 'n2' is already under a switch (t.yaml:4)");
	ck_assert_sstr_eq(
		e("- topology: r\n  ring:\n    rings: []\n"),
		"t.yaml:1: topology 'r' is a ring or torus3d, which loom does not model (give cluster_default to "
		"a tree or block topology)");
	ck_assert(e("- topology: [\n").find("t.yaml:") == 0); // not YAML, with its line
	ck_assert_sstr_eq(e("just a string\n"), "t.yaml:1: expected a list of topologies (- topology: NAME ...)");
	ck_assert_sstr_eq(e("- topology: x\n  tree: {}\n  flat: true\n"),
			  "t.yaml:1: topology 'x' must have exactly one of tree, block, flat, ring, torus3d");
}
END_TEST

START_TEST(topology_conf_and_check)
{
	auto s = read_spec_file(test::data("topology/cluster16-topology.conf"));
	ck_assert_msg(s.has_value(), "%s", s ? "" : s.error().str().c_str());
	auto facts = read_node_facts(test::data("topology/cluster16-slurm.conf"), {"a100", "h100"});
	ck_assert_msg(facts.has_value(), "%s", facts ? "" : facts.error().str().c_str());
	apply_node_facts(*s, *facts, NodeFacts{});
	auto c = build_cluster(*s);
	ck_assert_msg(c.has_value(), "%s", c ? "" : c.error().str().c_str());
	ck_assert_int_eq(c->nodes.size(), 16);
	ck_assert_int_eq(c->total_gpus(), 128);
	ck_assert_int_eq(c->levels, 3);
	Index pod2 = c->find_domain("pod2");
	ck_assert_int_eq(c->domains[pod2].gpu_count, 64);
	ck_assert(c->has_feature(c->find_node("n12"), "h100"));
	ck_assert_sstr_eq(c->classes.name(c->nodes[c->find_node("n02")].perf_class), "a100");
	ck_assert_int_eq(c->node_path(c->find_node("n01"), c->find_node("n16")).hops, 6);
	// Back to topology.conf and in again: the same tree.
	auto again = parse_topology_conf(write_topology_conf(*c), "written");
	ck_assert(again.has_value());
	ck_assert_int_eq(again->domains.size(), 7);
	ck_assert_int_eq(again->nodes.size(), 16);

	// The cluster file written and checked against the planted mismatches.
	std::string json = write_cluster_json(*c);
	auto spec = parse_cluster_json(json, "c.json");
	ck_assert(spec.has_value());
	auto good = parse_slurm_nodes(data_text("cluster16-slurm.conf"), "slurm.conf");
	ck_assert(good.has_value());
	ck_assert_int_eq(check_against_slurm(*spec, "c.json", *good).size(), 0);
	auto bad = parse_slurm_nodes(data_text("cluster16-slurm-mismatch.conf"), "bad.conf");
	ck_assert(bad.has_value());
	auto problems = check_against_slurm(*spec, "c.json", *bad);
	std::string all;
	for (const auto &p : problems)
		all += p.str() + "\n";
	ck_assert_msg(problems.size() == 4, "%s", all.c_str()); // the four planted mistakes
	ck_assert_msg(all.find("bad.conf:7: node 'n03' is defined twice (first at bad.conf:3)") != std::string::npos,
		      "%s", all.c_str());
	ck_assert_msg(all.find("bad.conf:6: node 'n17' is not placed") != std::string::npos, "%s", all.c_str());
	ck_assert_msg(all.find("node 'n16' is not a node in slurm.conf") != std::string::npos, "%s", all.c_str());
	ck_assert_msg(all.find("'n09' has 8 GPUs, but bad.conf:4 gives it Gres gpu count 4") != std::string::npos, "%s",
		      all.c_str());

	// Bad topology.conf lines name file and line.
	auto twice = parse_topology_conf("SwitchName=a Nodes=n1\nSwitchName=b Nodes=n[1-2]\n", "t.conf");
	ck_assert(!twice);
	ck_assert_sstr_eq(twice.error().str(), "t.conf:2: node 'n1' is already under a switch (t.conf:1)");
	auto dangling = parse_topology_conf("SwitchName=top Switches=x\n", "t.conf");
	ck_assert(!dangling);
	ck_assert_sstr_eq(dangling.error().str(), "t.conf:1: switch 'x' is not defined");
	ck_assert(!build_cluster(*parse_topology_conf("SwitchName=a Switches=b\nSwitchName=b Switches=a\n", "c")));

	// Lines that each fit hostlist's own limit still cannot add up to more
	// nodes than one cluster description holds: refused at the line that
	// goes past it, before it is expanded.
	std::string big;
	for (int k = 0; k < 3; k++)
		big += "SwitchName=s" + std::to_string(k) + " Nodes=r" + std::to_string(k) + "n[0-59999]\n";
	auto many = parse_topology_conf(big, "big.conf");
	ck_assert(!many);
	ck_assert_sstr_eq(many.error().str(), "big.conf:3: nodes: the file names more than 131072 nodes in all "
					      "(one file describes at most 131072)");
	auto blocks = parse_block_conf("BlockName=b1 Nodes=a[0-99999]\nBlockName=b2 Nodes=b[0-99999]\n", "block.conf");
	ck_assert(!blocks);
	ck_assert_sstr_eq(blocks.error().where, "block.conf:2");
	auto nodes =
		parse_slurm_nodes("NodeName=a[0-99999] Gres=gpu:8\nNodeName=b[0-99999] Gres=gpu:8\n", "slurm.conf");
	ck_assert(!nodes);
	ck_assert_sstr_eq(nodes.error().where, "slurm.conf:2");
	// Two lines of 60,000 nodes are a cluster loom reads.
	auto two = parse_topology_conf("SwitchName=a Nodes=a[0-59999]\nSwitchName=b Nodes=b[0-59999]\n", "two.conf");
	ck_assert_msg(two.has_value(), "%s", two ? "" : two.error().str().c_str());
	ck_assert_int_eq(two->nodes.size(), 120000);
}
END_TEST

TCase *topo_slurm_file_tests()
{
	TCase *tc = tcase_create("slurm_files");
	tcase_add_test(tc, block_conf_in_and_out);
	tcase_add_test(tc, topology_yaml_in);
	tcase_add_test(tc, topology_conf_and_check);
	return tc;
}
