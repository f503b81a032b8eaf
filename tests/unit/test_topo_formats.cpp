// Unit tests for the topology formats on real files (tests/data/topology,
// see PROVENANCE there). Expected counts were counted in the files with
// grep/awk, as noted beside each assertion.
#include "tests/unit/check_main.hpp"

#include "lib/topo/check.hpp"
#include "lib/topo/cluster_json.hpp"
#include "lib/topo/discover.hpp"
#include "lib/topo/formats.hpp"
#include "lib/topo/ibnetdiscover.hpp"
#include "lib/topo/nccl_env.hpp"
#include "lib/topo/nccl_xml.hpp"
#include "lib/topo/slurm_conf.hpp"
#include "lib/util/fs.hpp"

#include <algorithm>

using namespace loom;
using namespace loom::topo;

static std::string data_text(const char *name)
{
	auto t = read_file(test::data(std::string("topology/") + name));
	ck_assert_msg(t.has_value(), "%s", t ? "" : t.error().str().c_str());
	return *t;
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
	Index host = c->find_node("a08-p1-dgx-04-c01");
	ck_assert_int_ne(host, none);
	// Its HCA mlx5_5 is on port 1 of leaf A09-P1-IBLEAF-04-04 at 4xNDR = 400 Gb/s.
	bool found = false;
	for (uint16_t k = 0; k < c->nodes[host].nic_count; k++) {
		const Nic &x = c->nics[c->nodes[host].nic_begin + k];
		if (x.device == "mlx5_5") {
			found = true;
			ck_assert(x.rate_gbps == 400);
			ck_assert(x.link_layer == LinkLayer::infiniband);
			ck_assert_int_ne(x.rail_switch, none);
			ck_assert_sstr_eq(c->rails[x.rail_switch].name, "A09-P1-IBLEAF-04-04");
			ck_assert_int_eq(x.rail, 3); // the group's fourth leaf by name
		}
	}
	ck_assert(found);
	ck_assert_int_eq(c->domains[0].node_count(), 119); // all leaves reach every spine: one root
	// The rails survive the loom cluster file.
	auto again = read_cluster_json(write_cluster_json(*c), "again.json");
	ck_assert_msg(again.has_value(), "%s", again ? "" : again.error().str().c_str());
	ck_assert_int_eq(again->rails.size(), 31);
	ck_assert_int_eq(again->nics[again->nodes[again->find_node("a08-p1-dgx-04-c01")].nic_begin].rail_switch ==
				 none, 0);
	// topology.conf for the tree plugin: no switch without Nodes= or Switches=
	// (slurmctld's fatal "lacks children"), each node once, under its group.
	std::string conf = write_topology_conf(*c);
	auto back = parse_topology_conf(conf, "written.conf");
	ck_assert_msg(back.has_value(), "%s", back ? "" : back.error().str().c_str());
	ck_assert_int_eq(back->nodes.size(), 119);
	ck_assert_int_eq(back->domains.size(), 9); // 8 rail groups and the spine
	for (const std::string &line : split_lines(conf))
		if (line.rfind("SwitchName=", 0) == 0)
			ck_assert_msg(line.find(" Nodes=") != std::string::npos || line.find(" Switches=") != std::string::npos,
				      "%s", line.c_str());
	auto bad = parse_ibnetdiscover(data_text("ibnetdiscover-bad.out"), "bad.out");
	ck_assert(!bad);
	ck_assert_sstr_eq(bad.error().str(), "bad.out: no switches in the ibnetdiscover output");
	ck_assert(!parse_ibnetdiscover("", "empty"));
	ck_assert(!parse_ibnetdiscover("[1] \"S-1\"[2]\n", "x"));
}
END_TEST

START_TEST(nccl_topology_azure)
{
	auto a = parse_nccl_topology(data_text("nccl-topo-azure-ndv4-a100.xml"), "ndv4.xml");
	ck_assert_msg(a.has_value(), "%s", a ? "" : a.error().str().c_str());
	ck_assert_int_eq(a->gpus.size(), 8);  // class="0x030200"
	ck_assert_int_eq(a->nics.size(), 8);  // class="0x020700"
	ck_assert_int_eq(a->numas.size(), 4); // <cpu numaid=0..3>
	ck_assert_sstr_eq(a->gpus[0].pci_bus_id, "0003:00:00.0");
	ck_assert_sstr_eq(a->gpus[0].nic, "0103:00:00.0"); // the NIC behind the same bridge
	ck_assert_sstr_eq(a->numas[0].cpus, "0-23");       // affinity 00ffffff
	auto h = parse_nccl_topology(data_text("nccl-topo-azure-ndv5-h100.xml"), "ndv5.xml");
	ck_assert(h.has_value());
	ck_assert_int_eq(h->gpus.size(), 8); // class="0x0302..."
	ck_assert_int_eq(h->nics.size(), 8); // class="0x0207..."
	ck_assert_int_eq(h->numas.size(), 2);
	// Write it back and read it again: same GPUs and pairing.
	h->name = "h100-1";
	ClusterSpec s;
	s.nodes.push_back(*h);
	auto c = build_cluster(s);
	ck_assert(c.has_value());
	auto xml = write_nccl_topology(*c, 0);
	ck_assert(xml.has_value());
	auto again = parse_nccl_topology(*xml, "written.xml");
	ck_assert_msg(again.has_value(), "%s", again ? "" : again.error().str().c_str());
	ck_assert_int_eq(again->gpus.size(), 8);
	for (size_t k = 0; k < 8; k++) {
		ck_assert_sstr_eq(again->gpus[k].pci_bus_id, h->gpus[k].pci_bus_id);
		ck_assert_sstr_eq(again->gpus[k].nic, h->gpus[k].nic);
	}
	// What NCCL's loader requires survives the trip: the CPU (the file's
	// <cpu arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">)
	// and each GPU's link (link_speed="32.0 GT/s PCIe" link_width="16").
	ck_assert_sstr_eq(h->cpu.arch, "x86_64");
	ck_assert_sstr_eq(h->cpu.vendor, "GenuineIntel");
	ck_assert_int_eq(h->cpu.family, 6);
	ck_assert_int_eq(h->cpu.model, 143);
	ck_assert(h->gpus[0].pcie_gts == 32 && h->gpus[0].pcie_width == 16);
	ck_assert_msg(xml->find("arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\"") != std::string::npos,
		      "%s", xml->c_str());
	ck_assert(xml->find("link_speed=\"32.0 GT/s PCIe\" link_width=\"16\"") != std::string::npos);
	ck_assert(again->cpu == h->cpu);
	// No CPU architecture known (a topology.conf knows none): refused, not a file NCCL refuses.
	ClusterSpec bare = s;
	bare.nodes[0].cpu = CpuSpec{};
	auto bc = build_cluster(bare);
	auto refused = write_nccl_topology(*bc, 0);
	ck_assert(!refused);
	ck_assert_msg(refused.error().message.find("CPU architecture is unknown") != std::string::npos, "%s",
		      refused.error().str().c_str());
	ck_assert(!parse_nccl_topology("<system><cpu>", "trunc.xml"));
	ck_assert(!parse_nccl_topology("", "empty.xml"));
	ck_assert(!parse_nccl_topology("garbage", "g.xml"));
}
END_TEST

START_TEST(hwloc_dgx2)
{
	auto s = read_spec_file(test::data("topology/hwloc-dgx2.xml"));
	ck_assert_msg(s.has_value(), "%s", s ? "" : s.error().str().c_str());
	ck_assert_int_eq(s->nodes.size(), 1);
	const NodeSpec &n = s->nodes[0];
	ck_assert_int_eq(n.gpus.size(), 16);  // 16 nvml OS devices
	ck_assert_int_eq(n.numas.size(), 2);  // 2 NUMANode objects
	ck_assert_sstr_eq(n.gpus[0].model, "Tesla V100-SXM3-32GB-H");
	// 192 entries of 25000 MB/s in NVLinkBandwidth: 16 GPUs x 6 NVSwitch links, both directions.
	for (const auto &g : n.gpus) {
		ck_assert(g.nvswitch);
		ck_assert_int_eq(g.nvlinks, 6);
	}
	// <info name="Architecture" value="x86_64">, the Package's CPUVendor GenuineIntel, family 6, model 85;
	// the GPUs' pci_link_speed 15.753846 GB/s: x16 at 8 GT/s (Gen3).
	ck_assert_sstr_eq(n.cpu.arch, "x86_64");
	ck_assert_sstr_eq(n.cpu.vendor, "GenuineIntel");
	ck_assert_int_eq(n.cpu.family, 6);
	ck_assert_int_eq(n.cpu.model, 85);
	ck_assert(n.gpus[0].pcie_gts == 8 && n.gpus[0].pcie_width == 16);
	auto c = build_cluster(*s);
	ck_assert(c.has_value());
	std::string gres = write_gres_conf(*c, 0);
	ck_assert_msg(gres.find("File=/dev/nvidia0 Links=-1,6,6,6,6,6,6,6,6,6,6,6,6,6,6,6\n") != std::string::npos, "%s",
		      gres.c_str());
}
END_TEST

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
	ck_assert_sstr_eq(e("BlockName=a Nodes=n1 Switches=x\n"), "b.conf:1: unknown key Switches= (a block has Nodes= only)");
	ck_assert_sstr_eq(e("SwitchName=s Nodes=n1\n"),
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
	ck_assert_sstr_eq(e("- topology: r\n  ring:\n    rings: []\n"),
			  "t.yaml:1: topology 'r' is a ring or torus3d, which loom does not model (give cluster_default to "
			  "a tree or block topology)");
	ck_assert(e("- topology: [\n").find("t.yaml:") == 0);                      // not YAML, with its line
	ck_assert_sstr_eq(e("just a string\n"), "t.yaml:1: expected a list of topologies (- topology: NAME ...)");
	ck_assert_sstr_eq(e("- topology: x\n  tree: {}\n  flat: true\n"),
			  "t.yaml:1: topology 'x' must have exactly one of tree, block, flat, ring, torus3d");
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
	ck_assert(!names_compute_node("MT4129 ConnectX7   Mellanox Technologies", &why) && why == IbLeftOut::Why::unnamed);
	ck_assert(names_compute_node("smith-gpu-3 mlx5_1", &why)); // "sm" only as a whole word
	// A slurm.conf that is none: an error at its line (escaped), not an empty cluster.
	auto bin = parse_slurm_nodes(std::string("\x7f" "ELF\x02\x01garbage\n", 14), "slurm.conf");
	ck_assert(!bin);
	ck_assert_sstr_eq(bin.error().str(), "slurm.conf:1: not a slurm.conf line (expected Key=Value): '\\x7fELF\\x02\\x01garbage'");
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

// POWER8 with P100s: NVLinks between GPU pairs and from each GPU to its CPU
// package; cpusets of several 32-bit words with an empty (zero) word.
START_TEST(hwloc_power8_nvlink_to_cpu)
{
	auto s = read_spec_file(test::data("topology/hwloc-power8-p100.xml"));
	ck_assert_msg(s.has_value(), "%s", s ? "" : s.error().str().c_str());
	const NodeSpec &n = s->nodes[0];
	ck_assert_int_eq(n.gpus.size(), 4); // PCIDev class 0302 vendor 10de
	ck_assert_int_eq(n.numas.size(), 2);
	// NUMANode 0 cpuset 0x03030303: PUs 0-1,8-9,16-17,24-25 (the PU objects' os_index under it).
	ck_assert_sstr_eq(n.numas[0].cpus, "0-1,8-9,16-17,24-25");
	// NUMANode 1 cpuset 0x00000303,0x03030000,,0x0: words 3..0, so bits 80-81,88-89 (word 2), 96-97,104-105 (word 3).
	ck_assert_sstr_eq(n.numas[1].cpus, "80-81,88-89,96-97,104-105");
	// NVLinkBandwidth: GPU0-GPU1 and GPU2-GPU3 at 40000 MB/s (2 NVLink-1 links of 20000), each GPU
	// also 40000 to its Package: no NVSwitch, no link between the pairs.
	for (const auto &g : n.gpus) {
		ck_assert(!g.nvswitch);
		ck_assert_int_eq(g.nvlinks, 2);
		ck_assert_int_eq(g.peers.size(), 1);
		ck_assert_int_eq(g.peers[0].links, 2);
	}
	ck_assert_int_eq(n.gpus[0].peers[0].gpu, 1);
	ck_assert_int_eq(n.gpus[2].peers[0].gpu, 3);
	auto c = build_cluster(*s);
	ck_assert(c.has_value());
	std::string gres = write_gres_conf(*c, 0);
	ck_assert_msg(gres.find("File=/dev/nvidia0 Links=-1,2,0,0\n") != std::string::npos, "%s", gres.c_str());
	ck_assert_msg(gres.find("File=/dev/nvidia3 Links=0,0,2,-1\n") != std::string::npos, "%s", gres.c_str());
	// Multi-word masks, one rule for hwloc, Linux and NCCL.
	ck_assert_sstr_eq(*cpulist_from_mask("0x00000001,,0x0"), "64");
	ck_assert_sstr_eq(*cpulist_from_mask("00000001,00000000"), "32");
	ck_assert_sstr_eq(*cpulist_from_mask("ffffffffff"), "0-39");
	ck_assert(!cpulist_from_mask("0x1,0x123456789"));
	ck_assert(!cpulist_from_mask("0xf...f,0x1"));
	ck_assert(!cpulist_from_mask("zz"));
}
END_TEST

// DGX Spark (GB10, ARM): hwloc XML version 3.0, which Debian's hwloc 2.9 refuses;
// discover --hwloc-xml reads it with loom's own reader.
START_TEST(hwloc_v3_discover)
{
	DiscoverOptions o;
	o.hwloc_xml = test::data("topology/hwloc-dgx-gb10.xml");
	o.hostname = "spark";
	auto d = discover_node(o);
	ck_assert_msg(d.has_value(), "%s", d ? "" : d.error().str().c_str());
	ck_assert_int_eq(d->node.numas.size(), 1);
	ck_assert_sstr_eq(d->node.numas[0].cpus, "0-19"); // cpuset 0x000fffff, 20 PUs
	ck_assert_int_eq(d->node.gpus.size(), 0);          // the file has no GPU object
	ck_assert_sstr_eq(d->node.name, "spark");
}
END_TEST

START_TEST(discover_recorded_h100_root)
{
	DiscoverOptions o;
	o.root = test::data("topology/root-h100");
	o.hostname = "h100-rec";
	auto d = discover_node(o);
	ck_assert_msg(d.has_value(), "%s", d ? "" : d.error().str().c_str());
	// 9 devices under sys/class/infiniband: mlx5_0,1,4-9 InfiniBand at 400, mlx5_bond_0 Ethernet at 200.
	ck_assert_int_eq(d->node.nics.size(), 9);
	int ib = 0;
	for (const auto &x : d->node.nics)
		if (x.link_layer == LinkLayer::infiniband) {
			ib++;
			ck_assert(x.rate_gbps == 400);
		} else {
			ck_assert_sstr_eq(x.device, "mlx5_bond_0");
			ck_assert(x.rate_gbps == 200);
		}
	ck_assert_int_eq(ib, 8);
	// No GPU recorded: none invented, and the report says so.
	ck_assert_int_eq(d->node.gpus.size(), 0);
	ck_assert(!d->nvml_loaded);
	bool said = false;
	for (const auto &note : d->notes)
		said = said || note.find("gpus: none found") != std::string::npos;
	ck_assert(said);
}
END_TEST

// spank_place --comm-env=auto's settings, on recorded nodes. The Azure H100
// file: NCCL_TOPO_FILE with its 8 GPUs and their NICs, but no NCCL_IB_HCA
// (the file names no HCA device). With the HCAs named, the list follows the
// GPUs' own NICs. The recorded H100 host's sysfs: no GPU, so no topology
// file, and NCCL_IB_HCA its 8 InfiniBand HCAs, not the Ethernet bond.
START_TEST(nccl_env_of_recorded_nodes)
{
	auto h = parse_nccl_topology(data_text("nccl-topo-azure-ndv5-h100.xml"), "ndv5.xml");
	ck_assert(h.has_value());
	h->name = "h1";
	ClusterSpec s;
	s.nodes.push_back(*h);
	auto c = build_cluster(s);
	ck_assert(c.has_value());
	auto e = nccl_env(*c, "h1");
	ck_assert_msg(e.has_value(), "%s", e ? "" : e.error().str().c_str());
	ck_assert_sstr_eq(e->ib_hca, "");
	ck_assert_sstr_eq(e->no_topo, "");
	auto back = parse_nccl_topology(e->topo_xml, "NCCL_TOPO_FILE");
	ck_assert_msg(back.has_value(), "%s", back ? "" : back.error().str().c_str());
	ck_assert_int_eq(back->gpus.size(), 8);
	ck_assert_int_eq(back->nics.size(), 8);
	// Name the HCAs (mlx5_<k> for the NIC of GPU k, the file's pairing).
	ClusterSpec named = s;
	for (auto &nic : named.nodes[0].nics)
		for (size_t k = 0; k < named.nodes[0].gpus.size(); k++)
			if (named.nodes[0].gpus[k].nic == nic.device) {
				nic.device = "mlx5_" + std::to_string(k);
				named.nodes[0].gpus[k].nic = nic.device;
			}
	auto cn = build_cluster(named);
	ck_assert_msg(cn.has_value(), "%s", cn ? "" : cn.error().str().c_str());
	auto en = nccl_env(*cn, "h1");
	ck_assert(en.has_value());
	ck_assert_sstr_eq(en->ib_hca, "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1");

	DiscoverOptions o;
	o.root = test::data("topology/root-h100");
	o.hostname = "h2";
	auto d = discover_node(o);
	ck_assert(d.has_value());
	ClusterSpec r;
	r.nodes.push_back(d->node);
	auto cr = build_cluster(r);
	ck_assert(cr.has_value());
	auto er = nccl_env(*cr, "h2");
	ck_assert_msg(er.has_value(), "%s", er ? "" : er.error().str().c_str());
	ck_assert_sstr_eq(er->topo_xml, "");
	ck_assert_msg(er->no_topo.find("no GPU") != std::string::npos, "%s", er->no_topo.c_str());
	// sys/class/infiniband: mlx5_0, 1, 4-9 InfiniBand; mlx5_bond_0 Ethernet.
	ck_assert_sstr_eq(er->ib_hca, "=mlx5_0:1,mlx5_1:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1,mlx5_8:1,mlx5_9:1");
	auto none = nccl_env(*cr, "h3");
	ck_assert(!none.has_value());
	ck_assert(none.error().str().find("'h3'") != std::string::npos);
	// A node with neither GPUs nor HCAs: an error that says what to build.
	ClusterSpec bare;
	NodeSpec b;
	b.name = "h4";
	bare.nodes.push_back(b);
	auto cb = build_cluster(bare);
	ck_assert(cb.has_value());
	auto eb = nccl_env(*cb, "h4");
	ck_assert(!eb.has_value());
	ck_assert_msg(eb.error().str().find("loom topo discover") != std::string::npos, "%s", eb.error().str().c_str());
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
	ck_assert_msg(all.find("bad.conf:7: node 'n03' is defined twice (first at bad.conf:3)") != std::string::npos, "%s", all.c_str());
	ck_assert_msg(all.find("bad.conf:6: node 'n17' is not placed") != std::string::npos, "%s", all.c_str());
	ck_assert_msg(all.find("node 'n16' is not a node in slurm.conf") != std::string::npos, "%s", all.c_str());
	ck_assert_msg(all.find("'n09' has 8 GPUs, but bad.conf:4 gives it Gres gpu count 4") != std::string::npos, "%s", all.c_str());

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
	auto nodes = parse_slurm_nodes("NodeName=a[0-99999] Gres=gpu:8\nNodeName=b[0-99999] Gres=gpu:8\n", "slurm.conf");
	ck_assert(!nodes);
	ck_assert_sstr_eq(nodes.error().where, "slurm.conf:2");
	// Two lines of 60,000 nodes are a cluster loom reads.
	auto two = parse_topology_conf("SwitchName=a Nodes=a[0-59999]\nSwitchName=b Nodes=b[0-59999]\n", "two.conf");
	ck_assert_msg(two.has_value(), "%s", two ? "" : two.error().str().c_str());
	ck_assert_int_eq(two->nodes.size(), 120000);
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
	tcase_add_test(tc, nccl_topology_azure);
	tcase_add_test(tc, hwloc_dgx2);
	tcase_add_test(tc, hwloc_power8_nvlink_to_cpu);
	tcase_add_test(tc, block_conf_in_and_out);
	tcase_add_test(tc, unsupported_formats);
	tcase_add_test(tc, topology_yaml_in);
	tcase_add_test(tc, hwloc_v3_discover);
	tcase_add_test(tc, discover_recorded_h100_root);
	tcase_add_test(tc, nccl_env_of_recorded_nodes);
	tcase_add_test(tc, topology_conf_and_check);
	tcase_add_test(tc, json_strict_and_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
