// Unit tests for the topology formats on real files (tests/data/topology,
// see PROVENANCE there): an InfiniBand fabric from ibnetdiscover, loom's
// cluster file, and files loom does not read. Expected counts were counted
// in the files with grep/awk, as noted beside each assertion. The suite,
// with a node's own descriptions (test_topo_node_formats.cpp) and Slurm's
// topology files (test_topo_slurm_files.cpp).
#include "tests/unit/check_main.hpp"
#include "tests/unit/topo_formats_fixture.hpp"

#include "lib/topo/build.hpp"
#include "lib/topo/cluster_json.hpp"
#include "lib/topo/formats.hpp"
#include "lib/topo/ibnetdiscover.hpp"
#include "lib/topo/slurm_conf.hpp"
#include "lib/util/fs.hpp"

#include <cstdint>
#include <string>

using namespace loom;
using namespace loom::topo;

// The NDR fabric's node a08-p1-dgx-04-c01, found, and its HCA mlx5_5.
static void check_ndr_host_hca(const Cluster &c)
{
	Index host = c.find_node("a08-p1-dgx-04-c01");
	ck_assert_int_ne(host, none);
	// Its HCA mlx5_5 is on port 1 of leaf A09-P1-IBLEAF-04-04 at 4xNDR = 400 Gb/s.
	bool found = false;
	for (uint16_t k = 0; k < c.nodes[host].nic_count; k++) {
		const Nic &x = c.nics[c.nodes[host].nic_begin + k];
		if (x.device == "mlx5_5") {
			found = true;
			ck_assert(x.rate_gbps == 400);
			ck_assert(x.link_layer == LinkLayer::infiniband);
			ck_assert_int_ne(x.rail_switch, none);
			ck_assert_sstr_eq(c.rails[x.rail_switch].name, "A09-P1-IBLEAF-04-04");
			ck_assert_int_eq(x.rail, 3); // the group's fourth leaf by name
		}
	}
	ck_assert(found);
}

START_TEST(ibnetdiscover_real_fabric)
{
	auto f = parse_ibnetdiscover(data_text("ibnetdiscover-ndr-fabric.out"), "fabric.out");
	ck_assert_msg(f.has_value(), "%s", f ? "" : f.error().str().c_str());
	ck_assert_int_eq(f->switches, 40);          // grep -c '^Switch'
	ck_assert_int_eq(f->leaf_switches, 31);     // switch descriptions with IBLEAF: 15 A09 + 16 B09
	ck_assert_int_eq(f->aggregation_nodes, 40); // CAs "Mellanox Technologies Aggregation Node"
	ck_assert_int_eq(f->unnamed_hcas, 69);      // CAs "MT4129 ConnectX7 ..." without a host name
	ck_assert_int_eq(f->placeholder_hcas, 5);   // CAs "localhost ..." (3) and "ubuntu ..." (2)
	ck_assert_int_eq(f->management_hcas, 2);    // CAs "B11-P1-CUFM-02 ...": the cluster's UFM server
	ck_assert_int_eq(f->hcas, 466);             // 582 Ca lines - 40 - 69 - 5 - 2
	ck_assert_int_eq(f->hosts, 119);            // distinct first words of the named CA descriptions, less those 3
	ck_assert_int_eq(f->links, 1114);           // 2228 port lines with 4xNDR, each cable listed at both ends
	ck_assert_int_eq(f->left_out.size(), 40 + 69 + 5 + 2); // each one reported
	// The rail groups: leaves IBLEAF-<rail>-<group>, groups 01-08 (group 01 has no rail 03).
	ck_assert_int_eq(f->rail_groups, 8);
	ck_assert_int_eq(f->spec.rails.size(), 31);
	bool localhost_named = false;
	for (const IbLeftOut &l : f->left_out)
		if (l.desc.rfind("localhost", 0) == 0) {
			localhost_named = !l.guid.empty() && l.sw.find("IBLEAF") != std::string::npos && l.sw_port > 0;
			ck_assert(l.why == IbLeftOut::Why::placeholder);
		}
	ck_assert(localhost_named);
	auto c = build_cluster(f->spec);
	ck_assert_msg(c.has_value(), "%s", c ? "" : c.error().str().c_str());
	ck_assert_int_eq(c->nodes.size(), 119);
	ck_assert(c->find_node("localhost") == none && c->find_node("ubuntu") == none &&
		  c->find_node("B11-P1-CUFM-02") == none);
	// Every node hangs on a rail group whose rails are four leaves (three in group 01).
	Index g4 = c->find_domain("railgroup-A09-P1-IBLEAF-01-04");
	ck_assert_int_ne(g4, none);
	ck_assert_int_eq(c->rails_of(g4).size(), 4);
	ck_assert_int_eq(c->domains[g4].node_count(), 17); // a08-p1-dgx-04-c01..c17
	ck_assert_int_eq(c->rails_of(c->find_domain("railgroup-A09-P1-IBLEAF-01-01")).size(), 3);
	ck_assert_sstr_eq(c->kinds.name(c->domains[g4].kind), "leaf");
	ck_assert(c->find_domain("A09-P1-IBLEAF-04-04") == none); // a rail, not a domain
	// Placeholders kept by GUID when asked: one node per HCA.
	IbOptions by_guid;
	by_guid.placeholders_by_guid = true;
	auto kept = parse_ibnetdiscover(data_text("ibnetdiscover-ndr-fabric.out"), "fabric.out", by_guid);
	ck_assert(kept.has_value());
	ck_assert_int_eq(kept->hosts, 119 + 5 + 69);
	check_ndr_host_hca(*c);
	ck_assert_int_eq(c->domains[0].node_count(), 119); // all leaves reach every spine: one root
	// The rails survive the loom cluster file.
	auto again = read_cluster_json(write_cluster_json(*c), "again.json");
	ck_assert_msg(again.has_value(), "%s", again ? "" : again.error().str().c_str());
	ck_assert_int_eq(again->rails.size(), 31);
	ck_assert_int_eq(again->nics[again->nodes[again->find_node("a08-p1-dgx-04-c01")].nic_begin].rail_switch == none,
			 0);
	// topology.conf for the tree plugin: no switch without Nodes= or Switches=
	// (slurmctld's fatal "lacks children"), each node once, under its group.
	std::string conf = write_topology_conf(*c);
	auto back = parse_topology_conf(conf, "written.conf");
	ck_assert_msg(back.has_value(), "%s", back ? "" : back.error().str().c_str());
	ck_assert_int_eq(back->nodes.size(), 119);
	ck_assert_int_eq(back->domains.size(), 9); // 8 rail groups and the spine
	for (const std::string &line : split_lines(conf))
		if (line.rfind("SwitchName=", 0) == 0)
			ck_assert_msg(line.find(" Nodes=") != std::string::npos ||
					      line.find(" Switches=") != std::string::npos,
				      "%s", line.c_str());
	auto bad = parse_ibnetdiscover(data_text("ibnetdiscover-bad.out"), "bad.out");
	ck_assert(!bad);
	ck_assert_sstr_eq(bad.error().str(), "bad.out: no switches in the ibnetdiscover output");
	ck_assert(!parse_ibnetdiscover("", "empty"));
	ck_assert(!parse_ibnetdiscover("[1] \"S-1\"[2]\n", "x"));
}
END_TEST

// Files loom does not read: "unsupported format" and what it reads, never a JSON path.
START_TEST(unsupported_formats)
{
	auto netq = read_spec("{\"links\": [{\"src\": \"a\"}]}", "netq.json", Format::unknown);
	ck_assert(!netq);
	ck_assert_msg(netq.error().str().rfind("netq.json: unsupported format: JSON without loom's", 0) == 0, "%s",
		      netq.error().str().c_str());
	// Node descriptions that name no compute node, one rule for every reader.
	IbLeftOut::Why why{};
	ck_assert(names_compute_node("gpu017 mlx5_0", &why));
	ck_assert(!names_compute_node("MF0;leaf-7:MQM9700/U1", &why) && why == IbLeftOut::Why::switch_ca);
	ck_assert(!names_compute_node("ufm-01 mlx5_0", &why) && why == IbLeftOut::Why::management_server);
	ck_assert(!names_compute_node("localhost.localdomain HCA-1", &why) && why == IbLeftOut::Why::placeholder);
	ck_assert(!names_compute_node("", &why) && why == IbLeftOut::Why::unnamed);
	ck_assert(!names_compute_node("MT4129 ConnectX7   Mellanox Technologies", &why) &&
		  why == IbLeftOut::Why::unnamed);
	ck_assert(names_compute_node("smith-gpu-3 mlx5_1", &why)); // "sm" only as a whole word
	// A slurm.conf that is none: an error at its line (escaped), not an empty cluster.
	auto bin = parse_slurm_nodes(std::string("\x7f"
						 "ELF\x02\x01garbage\n",
						 14),
				     "slurm.conf");
	ck_assert(!bin);
	ck_assert_sstr_eq(bin.error().str(),
			  "slurm.conf:1: not a slurm.conf line (expected Key=Value): '\\x7fELF\\x02\\x01garbage'");
	auto empty = parse_slurm_nodes("ClusterName=x\nSlurmctldHost=h\n", "slurm.conf");
	ck_assert(!empty);
	ck_assert_sstr_eq(empty.error().str(), "slurm.conf: no NodeName= lines: a slurm.conf without nodes");
	auto inc = parse_slurm_nodes("ClusterName=x\ninclude /etc/slurm/nodes.conf\n", "slurm.conf");
	ck_assert(!inc);
	ck_assert(inc.error().message.find("included file") != std::string::npos);
	auto junk = read_spec("hello world\n", "junk.txt", Format::unknown);
	ck_assert(!junk);
	ck_assert_msg(junk.error().message.find("unsupported format") != std::string::npos &&
			      junk.error().message.find("ibnetdiscover") != std::string::npos,
		      "%s", junk.error().str().c_str());
}
END_TEST

START_TEST(json_strict_and_round_trip)
{
	auto c = read_cluster_json(R"({"version": 1, "domains": [{"name": "l1", "kind": "leaf"}],
		"hardware": {"h": {"gpus": [{"index": 0, "model": "H100"}, {"index": 1, "model": "H100"}]}},
		"nodes": [{"name": "a", "domain": "l1", "hardware": "h"}, {"name": "b", "domain": "l1", "hardware": "h"}]})",
				   "c.json");
	ck_assert_msg(c.has_value(), "%s", c ? "" : c.error().str().c_str());
	ck_assert_int_eq(c->total_gpus(), 4);
	auto again = read_cluster_json(write_cluster_json(*c), "w.json");
	ck_assert(again.has_value());
	ck_assert_int_eq(again->total_gpus(), 4);
	auto unknown = read_cluster_json(R"({"version": 1, "nodes": [{"name": "a", "gpu": 8}]})", "u.json");
	ck_assert(!unknown);
	ck_assert_sstr_eq(unknown.error().str(), "u.json: $.nodes[0].gpu: unknown field");
	auto dangling = read_cluster_json(R"({"version": 1, "nodes": [{"name": "a", "hardware": "x"}]})", "d.json");
	ck_assert(!dangling);
	ck_assert_sstr_eq(dangling.error().str(), "d.json: $.nodes[0].hardware: no hardware entry 'x'");
	auto dup = read_cluster_json(R"({"version": 1, "nodes": [{"name": "a"}, {"name": "a"}]})", "2.json");
	ck_assert(!dup);
	ck_assert_sstr_eq(dup.error().str(), "2.json: $.nodes[1]: duplicate node name 'a' (first at $.nodes[0])");
	ck_assert(!read_cluster_json(R"({"version": 2})", "v.json"));
	ck_assert(!read_cluster_json("{\"version\": 1, \"nodes\": [", "t.json"));
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("topo_formats");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, ibnetdiscover_real_fabric);
	tcase_add_test(tc, unsupported_formats);
	tcase_add_test(tc, json_strict_and_round_trip);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, topo_node_format_tests());
	suite_add_tcase(s, topo_slurm_file_tests());
	return s;
}

LOOM_CHECK_MAIN(make_suite)
