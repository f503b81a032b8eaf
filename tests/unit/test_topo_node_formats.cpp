// Unit tests for a node's own descriptions on real files
// (tests/data/topology, see PROVENANCE there): NCCL topology XML from Azure,
// hwloc XML of a DGX-2, a POWER8 and a DGX Spark, a recorded H100 host's
// sysfs, and the NCCL settings spank_place derives from them.
#include "tests/unit/check_main.hpp"
#include "tests/unit/topo_formats_fixture.hpp"

#include "lib/topo/build.hpp"
#include "lib/topo/discover.hpp"
#include "lib/topo/formats.hpp"
#include "lib/topo/nccl_env.hpp"
#include "lib/topo/nccl_xml.hpp"
#include "lib/topo/slurm_conf.hpp"

#include <string>

using namespace loom;
using namespace loom::topo;

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
	ck_assert_msg(xml->find("arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\"") !=
			      std::string::npos,
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
	ck_assert_int_eq(n.gpus.size(), 16); // 16 nvml OS devices
	ck_assert_int_eq(n.numas.size(), 2); // 2 NUMANode objects
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
	ck_assert_msg(gres.find("File=/dev/nvidia0 Links=-1,6,6,6,6,6,6,6,6,6,6,6,6,6,6,6\n") != std::string::npos,
		      "%s", gres.c_str());
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
	ck_assert_int_eq(d->node.gpus.size(), 0);         // the file has no GPU object
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

TCase *topo_node_format_tests()
{
	TCase *tc = tcase_create("node_formats");
	tcase_add_test(tc, nccl_topology_azure);
	tcase_add_test(tc, hwloc_dgx2);
	tcase_add_test(tc, hwloc_power8_nvlink_to_cpu);
	tcase_add_test(tc, hwloc_v3_discover);
	tcase_add_test(tc, discover_recorded_h100_root);
	tcase_add_test(tc, nccl_env_of_recorded_nodes);
	return tc;
}
