// Unit tests for the lib/health collectors, on files recorded on real machines
// (tests/data/health, see PROVENANCE there): kernel logs, syslog, the host's
// sysfs trees and a whole recorded root gathered. Expected numbers are
// counted in the recorded files by hand or with grep; the comment next to
// each says how. The suite, with the devices' collectors
// (test_health_collectors_devices.cpp).
#include "lib/health/gather.hpp"
#include "lib/health/host_sysfs.hpp"
#include "lib/health/kernel_log.hpp"
#include "lib/health/link_flaps.hpp"
#include "lib/util/fs.hpp"

#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

// Last: check.h defines a fail() macro that clashes with <ios>.
#include "tests/unit/health_collectors_fixture.hpp"

using namespace loom;
using namespace loom::health;
using namespace loom::health::testing;

namespace {

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
	KernelLog rec = parse_kernel_log(
		"4,1201,88123456,-;NVRM: Xid (PCI:0000:19:00): 79, pid=1, name=x, GPU has fallen off the bus.\n");
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
	tcase_add_test(tc, hwmon_edac_net_trees);
	tcase_add_test(tc, gather_recorded_root);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, health_device_collector_tests());
	return s;
}

LOOM_CHECK_MAIN(make_suite)
