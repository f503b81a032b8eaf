// Unit tests for the lib/health collectors, on files recorded on real machines
// (tests/data/health, see PROVENANCE there). Expected numbers are counted in
// the recorded files by hand or with grep; the comment next to each says how.
#include "lib/health/gather.hpp"
#include "lib/health/gpu_probe.hpp"
#include "lib/health/host_sysfs.hpp"
#include "lib/health/infiniband.hpp"
#include "lib/health/kernel_log.hpp"
#include "lib/health/link_flaps.hpp"
#include "lib/health/nvidia_smi.hpp"
#include "lib/health/nvml.hpp"
#include "lib/util/nvml_api.hpp"
#include "lib/util/fs.hpp"

#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

// Last: check.h defines a fail() macro that clashes with <ios>.
#include "tests/unit/check_main.hpp"

using namespace loom;
using namespace loom::health;

namespace {

std::string recorded(const std::string &name)
{
	auto t = read_file(test::data("health/" + name));
	ck_assert_msg(t.has_value(), "%s", t ? "" : t.error().str().c_str());
	return *t;
}

NvidiaSmiReport h100()
{
	auto rep = parse_nvidia_smi_q(recorded("nvidia-smi-q-8xh100-535.161.08.txt"), "h100");
	ck_assert_msg(rep.has_value(), "%s", rep ? "" : rep.error().str().c_str());
	return *rep;
}

std::string temp_dir()
{
	char tmpl[] = "/tmp/loom-health-test.XXXXXX";
	char *d = ::mkdtemp(tmpl);
	ck_assert(d != nullptr);
	return d;
}

void put(const std::string &root, const std::string &rel, const std::string &text)
{
	std::string path = root + "/" + rel;
	std::string cmd = "mkdir -p '" + path.substr(0, path.rfind('/')) + "'";
	ck_assert_int_eq(std::system(cmd.c_str()), 0);
	ck_assert(write_file_atomic(path, text).has_value());
}

void remove_tree(const std::string &dir)
{
	std::string cmd = "rm -rf '" + dir + "'";
	ck_assert_int_eq(std::system(cmd.c_str()), 0);
}

} // namespace

START_TEST(pci_bus_ids_normalise)
{
	ck_assert_sstr_eq(normalize_pci("PCI:0000:9b:00"), "0000:9b:00");
	ck_assert_sstr_eq(normalize_pci("00000000:9B:00.0"), "0000:9b:00");
	ck_assert_sstr_eq(normalize_pci("00000001:00:00.0"), "0001:00:00");
	ck_assert_sstr_eq(normalize_pci("not a bus"), "");
	ck_assert_sstr_eq(normalize_pci("0000:9b"), "");
}
END_TEST

START_TEST(xid_119_lines_and_gpu_index)
{
	KernelLog log = parse_kernel_log(recorded("kmsg-xid-119-h100.log"));
	// grep -c "NVRM: Xid" kmsg-xid-119-h100.log -> 5, all "Xid (PCI:0000:9b:00): 119"
	ck_assert_int_eq(log.xids.size(), 5);
	for (const auto &x : log.xids) {
		ck_assert_int_eq(x.xid, 119);
		ck_assert_sstr_eq(x.pci_bus, "0000:9b:00");
	}
	ck_assert_sstr_eq(log.xids[0].time, "Sun Feb 23 16:24:18 2025");
	ck_assert_sstr_eq(log.xids[0].process, "pid=2024380, name=nvidia-smi");
	ck_assert(log.xids[0].message.rfind("Timeout after 6s", 0) == 0);
	// line 1: "NVRM: GPU at PCI:0000:9b:00: GPU-509665ad-b600-ac93-3616-d754b23d636d"
	ck_assert_sstr_eq(log.uuid_by_pci["0000:9b:00"], "GPU-509665ad-b600-ac93-3616-d754b23d636d");
	// The recorded 8xH100 nvidia-smi -q has "GPU 00000000:9B:00.0" with Minor Number 4,
	// and the log itself says "GPU4 GSP".
	ck_assert_int_eq(map_xids_to_gpus(log.xids, h100().gpus), 5);
	ck_assert_int_eq(log.xids[0].gpu_index, 4);
}
END_TEST

START_TEST(xid_48_63_94_in_iso_log)
{
	KernelLog log = parse_kernel_log(recorded("kmsg-xid-48-63-94.log"));
	// grep -c "NVRM: Xid" -> 11: one 48, one 63, nine 94 (grep -c "): 94")
	ck_assert_int_eq(log.xids.size(), 11);
	int n48 = 0, n63 = 0, n94 = 0;
	for (const auto &x : log.xids) {
		n48 += x.xid == 48;
		n63 += x.xid == 63;
		n94 += x.xid == 94;
	}
	ck_assert_int_eq(n48, 1);
	ck_assert_int_eq(n63, 1);
	ck_assert_int_eq(n94, 9);
	ck_assert_sstr_eq(log.xids[0].time, "2024-11-15T12:02:03,470068+00:00");
	ck_assert_sstr_eq(log.xids[0].process, "pid='<unknown>', name=<unknown>");
	// 0000:19:00 is Minor Number 0 in the recorded H100 nvidia-smi -q.
	map_xids_to_gpus(log.xids, h100().gpus);
	ck_assert_int_eq(log.xids[0].gpu_index, 0);
	// The 24 nvidia-peermem lines are neither Xids nor events.
	ck_assert_int_eq(log.events.size(), 0);
}
END_TEST

START_TEST(xid_13_43_and_oom_kills)
{
	KernelLog log = parse_kernel_log(recorded("kmsg-xid-and-memory-errors.log"));
	// grep -c "NVRM: Xid" -> 17: sixteen Xid 13 and one Xid 43
	ck_assert_int_eq(log.xids.size(), 17);
	ck_assert_int_eq(log.xids.back().xid, 43);
	// grep -c "Out of memory: Kill\|oom-kill:" -> 6 (the oom_reaper line is not a kill)
	int oom = 0;
	for (const auto &e : log.events)
		oom += e.kind == "oom_kill";
	ck_assert_int_eq(oom, 6);
	ck_assert_sstr_eq(log.events[0].time, "2025-01-21T08:42:30,287197+00:00");
	// No GPU at 0000:38:00 in the H100 recording: the index stays unknown.
	ck_assert_int_eq(map_xids_to_gpus(log.xids, h100().gpus), 0);
	ck_assert_int_eq(log.xids[0].gpu_index, -1);
}
END_TEST

START_TEST(nccl_segfaults_and_kmsg_records)
{
	KernelLog log = parse_kernel_log(recorded("kmsg-nccl-segfault.log"));
	// grep -c "in libnccl" -> 2
	ck_assert_int_eq(log.events.size(), 2);
	ck_assert_sstr_eq(log.events[0].kind, "segfault_nccl");
	// /dev/kmsg record form: "pri,seq,usec,flags;message"
	KernelLog rec = parse_kernel_log("4,1201,88123456,-;NVRM: Xid (PCI:0000:19:00): 79, pid=1, name=x, GPU has fallen off the bus.\n");
	ck_assert_int_eq(rec.xids.size(), 1);
	ck_assert_int_eq(rec.xids[0].xid, 79);
	// Not an Xid: no number, or no closing parenthesis.
	ck_assert(!parse_xid_line("NVRM: Xid (PCI:0000:19:00): abc"));
	ck_assert(!parse_xid_line("NVRM: Xid (PCI:0000:19:00"));
}
END_TEST

START_TEST(link_flaps_from_syslog)
{
	std::vector<std::string> lines = split_lines(recorded("azure-1dev_6flap_syslog"));
	auto flaps = count_link_flaps(lines);
	// grep -c "lost carrier" -> 6, grep -c "Gained carrier" -> 6, all on ib6
	ck_assert_int_eq(flaps.size(), 1);
	ck_assert_sstr_eq(flaps[0].iface, "ib6");
	ck_assert_int_eq(flaps[0].lost, 6);
	ck_assert_int_eq(flaps[0].gained, 6);
	ck_assert_sstr_eq(flaps[0].first_time, "Aug 17 06:18:01");
	// "Link updated" is not "Link up".
	ck_assert_int_eq(count_link_flaps({"mlx5_core 0000:1a:00.0 ib0: Link updated"}).size(), 0);
}
END_TEST

START_TEST(nvidia_smi_h100)
{
	NvidiaSmiReport rep = h100();
	ck_assert_sstr_eq(rep.driver_version, "535.161.08");
	// "Attached GPUs : 8" and eight "GPU 0000..." blocks
	ck_assert_int_eq(rep.attached, 8);
	ck_assert_int_eq(rep.gpus.size(), 8);
	const GpuState &g = rep.gpus[0];
	ck_assert_int_eq(g.index, 0);
	ck_assert_sstr_eq(g.pci_bus, "0000:19:00");
	ck_assert_sstr_eq(g.uuid, "GPU-ee7954ec-da95-fd7a-ddfd-c6b32cc2f8aa");
	ck_assert_sstr_eq(g.name, "NVIDIA H100 80GB HBM3");
	ck_assert(g.temp_c && *g.temp_c == 29.0);          // GPU Current Temp : 29 C
	ck_assert(g.mem_temp_c && *g.mem_temp_c == 39.0);  // Memory Current Temp : 39 C
	ck_assert(g.power_w && *g.power_w > 67.7 && *g.power_w < 67.8); // 67.74 W
	ck_assert(g.power_limit_w && *g.power_limit_w == 700.0);
	ck_assert(g.hw_slowdown && g.hw_power_brake && !g.hw_thermal_slowdown); // "HW Power Brake Slowdown : Active"
	ck_assert(g.ecc_vol_dram_uncorr && *g.ecc_vol_dram_uncorr == 0);
	ck_assert(g.ecc_agg_sram_uncorr && *g.ecc_agg_sram_uncorr == 0); // parity + SEC-DED
	ck_assert(!g.retired_sbe);                   // Retired Pages: N/A on H100
	ck_assert(g.remap_pending && !*g.remap_pending);
	ck_assert(g.pcie_replays && *g.pcie_replays == 67); // Replays Since Reset : 67
	ck_assert(g.max_sm_clock_mhz && *g.max_sm_clock_mhz == 1980);
	ck_assert_int_eq(rep.gpus[4].index, 4);
	ck_assert_sstr_eq(rep.gpus[4].pci_bus, "0000:9b:00");
}
END_TEST

START_TEST(nvidia_smi_truncated_is_an_error)
{
	auto rep = parse_nvidia_smi_q(recorded("nvidia-smi-q-truncated.txt"), "truncated.txt");
	ck_assert(!rep);
	// "Attached GPUs : 8" but the text stops inside the first GPU block
	ck_assert_msg(rep.error().str().find("8 GPUs attached but 1 described") != std::string::npos, "%s",
		      rep.error().str().c_str());
}
END_TEST

START_TEST(nvidia_smi_retired_pages_azure)
{
	auto orig = parse_nvidia_smi_q(recorded("azure-orig_nvsmi8_output.txt"), "orig");
	auto bad = parse_nvidia_smi_q(recorded("azure-bad_nvsmi8_output.txt"), "bad");
	ck_assert(orig && bad);
	ck_assert_int_eq(bad->gpus.size(), 8);
	// bad: "Pending Page Blacklist : Yes" on GPUs 00000002, 4, 6 and 8 (grep -c -> 4)
	int pending = 0;
	for (const auto &g : bad->gpus)
		pending += g.retired_pending.value_or(false);
	ck_assert_int_eq(pending, 4);
	// GPU 00000002: Single Bit 2, Double Bit 61; no Minor Number, so index = order
	ck_assert_int_eq(bad->gpus[1].index, 1);
	ck_assert_sstr_eq(bad->gpus[1].pci_bus, "0002:00:00");
	ck_assert_int_eq(*bad->gpus[1].retired_dbe, 61);
	ck_assert_int_eq(*bad->gpus[1].retired_sbe, 2);
}
END_TEST

START_TEST(nvlink_status)
{
	std::vector<GpuState> gpus;
	auto n = parse_nvlink_status(recorded("nvidia-smi.nvlink.status.a100"), "a100", gpus);
	ck_assert(n.has_value());
	// 8 "GPU" lines, 96 "Link N:" lines (12 per GPU), none inactive
	ck_assert_int_eq(*n, 96);
	ck_assert_int_eq(gpus.size(), 8);
	ck_assert_int_eq(gpus[0].nvlinks.size(), 12);
	ck_assert(gpus[0].nvlinks[11].active);
	std::vector<GpuState> bad;
	auto m = parse_nvlink_status(recorded("azure-bad_nvlink_status.txt"), "bad", bad);
	ck_assert(m.has_value());
	// "GPU 6: ..." then "all links are inactive": reported, with no active link
	ck_assert_int_eq(bad.size(), 1);
	ck_assert_int_eq(bad[0].index, 6);
	ck_assert(bad[0].nvlink_reported);
	ck_assert_int_eq(bad[0].nvlinks.size(), 0);
}
END_TEST

START_TEST(ib_sysfs_h100)
{
	auto ports = read_ib_sysfs(test::data("health/sys-class-infiniband-h100"));
	ck_assert(ports.has_value());
	// ls sys-class-infiniband-h100 -> 9 devices with one port each
	ck_assert_int_eq(ports->size(), 9);
	const IbPort &p = (*ports)[1]; // mlx5_1 (sorted)
	ck_assert_sstr_eq(p.device, "mlx5_1");
	ck_assert_sstr_eq(p.state, "ACTIVE");     // "4: ACTIVE"
	ck_assert_sstr_eq(p.phys_state, "LinkUp"); // "5: LinkUp"
	ck_assert(p.rate_gbps && *p.rate_gbps == 400.0); // "400 Gb/sec (4X NDR)"
	ck_assert_sstr_eq(p.link_layer, "InfiniBand");
	ck_assert_int_eq(p.counters.at("link_downed"), 255);      // cat .../counters/link_downed
	ck_assert_int_eq(p.counters.at("port_rcv_errors"), 14);
	ck_assert_int_eq(p.hw_counters.at("roce_adp_retrans"), 3); // hw_counters/roce_adp_retrans
	ck_assert_sstr_eq(ports->back().device, "mlx5_bond_0");
	ck_assert_sstr_eq(ports->back().link_layer, "Ethernet");
	// A missing class directory: no HCAs, no error.
	auto none = read_ib_sysfs("/nonexistent/sys/class/infiniband");
	ck_assert(none && none->empty());
}
END_TEST

START_TEST(ibstat_text)
{
	auto down = parse_ibstat(recorded("ibstat-h100-port-down.txt"), "down");
	ck_assert(down.has_value());
	// grep -c "State: Down" -> 3 (mlx5_2, mlx5_7, mlx5_8), 12 CA blocks
	ck_assert_int_eq(down->size(), 12);
	int n_down = 0;
	for (const auto &p : *down)
		n_down += p.state == "DOWN";
	ck_assert_int_eq(n_down, 3);
	auto up = parse_ibstat(recorded("ibstat-h100-all-active.txt"), "up");
	ck_assert(up.has_value());
	for (const auto &p : *up)
		ck_assert_sstr_eq(p.state, "ACTIVE");
	ck_assert(!parse_ibstat("\tPort 1:\n\t\tState: Active\n", "x"));
}
END_TEST

START_TEST(hwmon_edac_net_trees)
{
	std::string root = temp_dir();
	put(root, "sys/class/hwmon/hwmon0/name", "coretemp\n");
	put(root, "sys/class/hwmon/hwmon0/temp1_input", "91000\n");
	put(root, "sys/class/hwmon/hwmon0/temp1_crit", "100000\n");
	put(root, "sys/class/hwmon/hwmon0/temp1_label", "Package id 0\n");
	put(root, "sys/class/hwmon/hwmon1/name", "nct6775\n");
	put(root, "sys/class/hwmon/hwmon1/fan2_input", "0\n");
	put(root, "sys/class/hwmon/hwmon1/fan2_alarm", "1\n");
	put(root, "sys/class/hwmon/hwmon1/in0_input", "1180\n");
	put(root, "sys/devices/system/edac/mc/mc0/ce_count", "12\n");
	put(root, "sys/devices/system/edac/mc/mc0/ue_count", "1\n");
	put(root, "sys/class/net/eth0/carrier", "0\n");
	put(root, "sys/class/net/eth0/operstate", "down\n");
	put(root, "sys/class/net/eth0/statistics/rx_errors", "7\n");
	put(root, "sys/class/net/lo/carrier", "1\n");
	auto h = read_hwmon(root + "/sys/class/hwmon");
	ck_assert(h && h->size() == 3);
	ck_assert_sstr_eq((*h)[0].label, "Package id 0");
	ck_assert((*h)[0].value == 91.0 && *(*h)[0].crit == 100.0);
	ck_assert_sstr_eq((*h)[1].kind, "fan");
	ck_assert((*h)[1].alarm);
	ck_assert((*h)[2].value > 1.17 && (*h)[2].value < 1.19);
	auto e = read_edac(root + "/sys/devices/system/edac/mc");
	ck_assert(e && e->size() == 1 && *(*e)[0].corrected == 12 && *(*e)[0].uncorrected == 1);
	auto n = read_net(root + "/sys/class/net");
	ck_assert(n && n->size() == 1); // lo left out
	ck_assert(!*(*n)[0].carrier && *(*n)[0].rx_errors == 7);
	remove_tree(root);
}
END_TEST

START_TEST(gather_recorded_root)
{
	// A recorded root assembled from the recordings: an H100 node with the
	// Xid 119 kernel log, its nvidia-smi -q, its InfiniBand sysfs tree, and
	// Azure's link-flap syslog.
	std::string root = temp_dir();
	put(root, "var/log/kern.log", recorded("kmsg-xid-119-h100.log"));
	put(root, "var/log/syslog", recorded("azure-1dev_6flap_syslog"));
	put(root, "nvidia-smi-q.txt", recorded("nvidia-smi-q-8xh100-535.161.08.txt"));
	ck_assert_int_eq(::mkdir((root + "/sys").c_str(), 0755), 0);
	ck_assert_int_eq(::mkdir((root + "/sys/class").c_str(), 0755), 0);
	std::string ib = test::data("health/sys-class-infiniband-h100");
	ck_assert_int_eq(::symlink(ib.c_str(), (root + "/sys/class/infiniband").c_str()), 0);
	GatherOptions opt;
	opt.root = root;
	NodeSample s = gather(opt);
	ck_assert_msg(s.errors.empty(), "%s", s.errors.empty() ? "" : s.errors[0].message.c_str());
	ck_assert_sstr_eq(s.gpu_source, "nvidia-smi");
	ck_assert_int_eq(s.gpus.size(), 8);
	ck_assert_int_eq(s.xids.size(), 5);
	ck_assert_int_eq(s.xids[0].gpu_index, 4);
	ck_assert_int_eq(s.ib_ports.size(), 9);
	ck_assert_int_eq(s.flaps.size(), 1);
	ck_assert_int_eq(s.flaps[0].lost, 6);
	// Expected GPUs but no data: an error, not a healthy node.
	std::string empty = temp_dir();
	opt.root = empty;
	opt.expected_gpus = 8;
	NodeSample e = gather(opt);
	ck_assert_int_eq(e.errors.size(), 1);
	ck_assert_sstr_eq(e.errors[0].collector, "gpu");
	remove_tree(root);
	remove_tree(empty);
}
END_TEST

START_TEST(nvml_absent_is_reported)
{
	// A library that does not exist stands for a machine without the driver:
	// the session must fail and say so, never report zero faults.
	auto s = NvmlSession::open("libnvidia-ml-loom-test-absent.so.1");
	ck_assert(!s);
	ck_assert_msg(s.error().str().find("NVML not available") != std::string::npos, "%s",
		      s.error().str().c_str());
}
END_TEST

START_TEST(nvml_without_its_calls_is_refused)
{
	// A library that loads but is not NVML (libc here; an old or partial
	// libnvidia-ml alike): the session names the library and the calls it
	// lacks, and nvml::Library says which of a list are absent.
	auto s = NvmlSession::open("libc.so.6");
	ck_assert(!s);
	ck_assert_msg(s.error().str().find("libc.so.6 lacks nvmlInit_v2, nvmlShutdown, nvmlErrorString") !=
			      std::string::npos,
		      "%s", s.error().str().c_str());
	auto lib = loom::nvml::Library::open("libc.so.6");
	ck_assert(lib.has_value());
	std::string lacks = (*lib)->lacking({"malloc", "nvmlDeviceGetUUID", "free", "nvmlEventSetWait_v2"});
	ck_assert_str_eq(lacks.c_str(), "nvmlDeviceGetUUID, nvmlEventSetWait_v2");
	ck_assert(!(*lib)->api().init && !(*lib)->api().nvlink_state);
	std::string text = (*lib)->error(9);
	ck_assert_str_eq(text.c_str(), "NVML error 9");
}
END_TEST

START_TEST(gpu_probe_without_gpu_never_passes)
{
	// No CUDA runtime at all: not run, not passed, and it says why.
	ProbeResult r = probe_memory_bandwidth(0, 1 << 20, 1, "libcudart-loom-test-absent.so");
	ck_assert(!r.ran);
	ck_assert(!r.passed());
	ck_assert_msg(r.why.rfind("no GPU: no CUDA runtime", 0) == 0, "%s", r.why.c_str());
	// An empty result never passes either, whatever the threshold.
	ProbeResult empty;
	empty.ran = true;
	ck_assert(!empty.passed());
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("health_collectors");
	TCase *tc = tcase_create("collectors");
	tcase_add_test(tc, pci_bus_ids_normalise);
	tcase_add_test(tc, xid_119_lines_and_gpu_index);
	tcase_add_test(tc, xid_48_63_94_in_iso_log);
	tcase_add_test(tc, xid_13_43_and_oom_kills);
	tcase_add_test(tc, nccl_segfaults_and_kmsg_records);
	tcase_add_test(tc, link_flaps_from_syslog);
	tcase_add_test(tc, nvidia_smi_h100);
	tcase_add_test(tc, nvidia_smi_truncated_is_an_error);
	tcase_add_test(tc, nvidia_smi_retired_pages_azure);
	tcase_add_test(tc, nvlink_status);
	tcase_add_test(tc, ib_sysfs_h100);
	tcase_add_test(tc, ibstat_text);
	tcase_add_test(tc, hwmon_edac_net_trees);
	tcase_add_test(tc, gather_recorded_root);
	tcase_add_test(tc, nvml_absent_is_reported);
	tcase_add_test(tc, nvml_without_its_calls_is_refused);
	tcase_add_test(tc, gpu_probe_without_gpu_never_passes);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
