// Unit tests: garbage in a sysfs file (hwmon, net, EDAC, InfiniBand) is a
// collector error naming the file and the value, never a value silently left
// out (host_sysfs.hpp has the rules); what is absent, or a sensor that cannot
// be read now, is not an error; gather() reports the garbage.
#include "lib/health/gather.hpp"
#include "lib/health/host_sysfs.hpp"
#include "lib/health/infiniband.hpp"

#include <string>
#include <unistd.h>
#include <vector>

// Last: check.h defines a fail() macro that clashes with <ios>.
#include "tests/unit/bounded_reads_fixture.hpp"

using namespace loom;
using namespace loom::health;
using namespace loom::health::testing;

START_TEST(hwmon_garbage_is_an_error_naming_file_and_value)
{
	std::string root = temp_dir();
	std::string hw = root + "/sys/class/hwmon";
	put(root, "sys/class/hwmon/hwmon0/name", "coretemp\n");
	put(root, "sys/class/hwmon/hwmon0/temp1_input", "abc\n");
	put(root, "sys/class/hwmon/hwmon0/temp2_input", "45000\n");
	put(root, "sys/class/hwmon/hwmon0/temp2_crit", "9x\n");
	put(root, "sys/class/hwmon/hwmon0/temp3_input", "-5000\n"); // below zero: a clean value
	put(root, "sys/class/hwmon/hwmon1/fan1_input", "\n");
	put(root, "sys/class/hwmon/hwmon1/fan2_input", "99999999999999999999\n");
	put(root, "sys/class/hwmon/hwmon1/fan3_input", std::string("12\0\xff", 4));
	put(root, "sys/class/hwmon/hwmon1/in0_input", "1.2\n");
	put(root, "sys/class/hwmon/hwmon1/in1_input", "1180\n");
	put(root, "sys/class/hwmon/hwmon1/in1_alarm", "yes\n");
	put(root, "sys/class/hwmon/hwmon2/temp1_input", std::string(70000, '1'));
	std::vector<Error> p;
	auto h = read_hwmon(hw, p);
	ck_assert_sstr_eq(problem_for(p, hw + "/hwmon0/temp1_input"),
			  hw + "/hwmon0/temp1_input: 'abc' is not a number");
	ck_assert_sstr_eq(problem_for(p, hw + "/hwmon0/temp2_crit"), hw + "/hwmon0/temp2_crit: '9x' is not a number");
	ck_assert_sstr_eq(problem_for(p, hw + "/hwmon1/fan1_input"), hw + "/hwmon1/fan1_input: '' is not a number");
	ck_assert_sstr_eq(problem_for(p, hw + "/hwmon1/fan2_input"),
			  hw + "/hwmon1/fan2_input: '99999999999999999999' is out of range");
	ck_assert_sstr_eq(problem_for(p, hw + "/hwmon1/fan3_input"),
			  hw + "/hwmon1/fan3_input: '12\\x00\\xff' is not a number");
	ck_assert_sstr_eq(problem_for(p, hw + "/hwmon1/in0_input"), hw + "/hwmon1/in0_input: '1.2' is not a number");
	ck_assert_sstr_eq(problem_for(p, hw + "/hwmon1/in1_alarm"), hw + "/hwmon1/in1_alarm: 'yes' is not a number");
	ck_assert_sstr_eq(problem_for(p, hw + "/hwmon2/temp1_input"),
			  hw + "/hwmon2/temp1_input: larger than the 65536-byte cap: refused");
	ck_assert_int_eq(p.size(), 8);
	// What was clean is still read: temp2 (without its crit), temp3, in1.
	ck_assert_int_eq(h.size(), 3);
	ck_assert(h[0].value == 45.0 && !h[0].crit);
	ck_assert(h[1].value == -5.0);
	// The one-argument form: the first problem, and how many more.
	auto old = read_hwmon(hw);
	ck_assert(!old);
	ck_assert_sstr_eq(old.error().str(), hw + "/hwmon0/temp1_input: 'abc' is not a number (and 7 more)");
	remove_tree(root);
}
END_TEST

START_TEST(hwmon_absent_and_eio_are_not_errors)
{
	std::string root = temp_dir();
	std::string hw = root + "/sys/class/hwmon";
	put(root, "sys/class/hwmon/hwmon0/temp1_input", "30000\n"); // no name, label, limits
	// A sensor the chip cannot read now (EIO, as /proc/self/mem gives at 0).
	ck_assert_int_eq(::symlink("/proc/self/mem", (hw + "/hwmon0/temp2_input").c_str()), 0);
	std::vector<Error> p;
	auto h = read_hwmon(hw, p);
	ck_assert_msg(p.empty(), "%s", p.empty() ? "" : p[0].str().c_str());
	ck_assert_int_eq(h.size(), 1);
	ck_assert_sstr_eq(h[0].chip, "hwmon0");
	ck_assert_sstr_eq(h[0].label, "temp1");
	// No hwmon directory at all: nothing, no error.
	ck_assert(read_hwmon(root + "/sys/class/none")->empty());
	remove_tree(root);
}
END_TEST

START_TEST(net_garbage_is_an_error_naming_file_and_value)
{
	std::string root = temp_dir();
	std::string net = root + "/sys/class/net";
	put(root, "sys/class/net/eth0/carrier", "2\n");
	put(root, "sys/class/net/eth0/operstate", "sideways\n");
	put(root, "sys/class/net/eth0/statistics/rx_errors", "lots\n");
	put(root, "sys/class/net/eth0/statistics/tx_errors", "-1\n");
	put(root, "sys/class/net/eth0/carrier_changes", "18446744073709551615\n");
	put(root, "sys/class/net/eth1/carrier", "1\n");   // clean, the rest absent
	put(root, "sys/class/net/bonding_masters", "\n"); // a file, not an interface
	std::vector<Error> p;
	auto n = read_net(net, {"lo"}, p);
	ck_assert_sstr_eq(problem_for(p, net + "/eth0/carrier"), net + "/eth0/carrier: '2' is not 0 or 1");
	ck_assert_sstr_eq(problem_for(p, net + "/eth0/operstate"),
			  net + "/eth0/operstate: 'sideways' is not an operstate");
	ck_assert_sstr_eq(problem_for(p, net + "/eth0/statistics/rx_errors"),
			  net + "/eth0/statistics/rx_errors: 'lots' is not a number");
	ck_assert_sstr_eq(problem_for(p, net + "/eth0/statistics/tx_errors"),
			  net + "/eth0/statistics/tx_errors: '-1' is negative, not a count");
	ck_assert_sstr_eq(problem_for(p, net + "/eth0/carrier_changes"),
			  net + "/eth0/carrier_changes: '18446744073709551615' is out of range");
	ck_assert_int_eq(p.size(), 5);
	ck_assert_int_eq(n.size(), 2);
	ck_assert(!n[0].carrier && !n[0].rx_errors && !n[0].tx_errors);
	ck_assert(n[1].carrier && *n[1].carrier && !n[1].rx_errors);
	remove_tree(root);
}
END_TEST

START_TEST(edac_garbage_and_eio_are_errors)
{
	std::string root = temp_dir();
	std::string mc = root + "/sys/devices/system/edac/mc";
	put(root, "sys/devices/system/edac/mc/mc0/ce_count", "12abc\n");
	put(root, "sys/devices/system/edac/mc/mc0/ue_count", "0\n");
	put(root, "sys/devices/system/edac/mc/mc1/ce_count", "-3\n");
	put(root, "sys/devices/system/edac/mc/mc2/ue_count", "1\n");
	mkdirs(mc + "/mc3");
	ck_assert_int_eq(::symlink("/proc/self/mem", (mc + "/mc3/ce_count").c_str()), 0);
	mkdirs(mc + "/mc4");
	std::vector<Error> p;
	auto e = read_edac(mc, p);
	ck_assert_sstr_eq(problem_for(p, mc + "/mc0/ce_count"), mc + "/mc0/ce_count: '12abc' is not a number");
	ck_assert_sstr_eq(problem_for(p, mc + "/mc1/ce_count"), mc + "/mc1/ce_count: '-3' is negative, not a count");
	// EDAC counts always read: EIO is an error, unlike a hwmon sensor's.
	ck_assert_sstr_eq(problem_for(p, mc + "/mc3/ce_count"), mc + "/mc3/ce_count: read error: Input/output error");
	ck_assert_sstr_eq(problem_for(p, mc + "/mc4"), mc + "/mc4: no ce_count or ue_count");
	ck_assert_int_eq(p.size(), 4);
	// mc0 keeps its clean ue_count; mc2 has only ue_count (absent ce_count).
	ck_assert_int_eq(e.size(), 2);
	ck_assert(!e[0].corrected && *e[0].uncorrected == 0);
	ck_assert(!e[1].corrected && *e[1].uncorrected == 1);
	remove_tree(root);
}
END_TEST

START_TEST(ib_garbage_is_an_error_naming_file_and_value)
{
	std::string root = temp_dir();
	std::string ib = root + "/sys/class/infiniband";
	std::string port = ib + "/mlx5_0/ports/1";
	put(root, "sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
	put(root, "sys/class/infiniband/mlx5_0/ports/1/phys_state", "5: LinkUp\n");
	put(root, "sys/class/infiniband/mlx5_0/ports/1/rate", "fast\n");
	put(root, "sys/class/infiniband/mlx5_0/ports/1/link_layer", "InfiniBand\n");
	put(root, "sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error", "xyz\n");
	put(root, "sys/class/infiniband/mlx5_0/ports/1/counters/link_downed", "-5\n");
	put(root, "sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_errors", "14\n");
	put(root, "sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence", "\x01\x02");
	put(root, "sys/class/infiniband/mlx5_1/ports/1/state", "\xff\n");
	fifo(root, "sys/class/infiniband/mlx5_1/ports/1/counters/symbol_error");
	put(root, "sys/class/infiniband/mlx5_2/ports/1/rate", "400 Gb/sec (4X NDR)\n"); // no state
	std::vector<Error> p;
	auto ports = read_ib_sysfs(ib, p);
	ck_assert_sstr_eq(problem_for(p, port + "/rate"), port + "/rate: 'fast' is not a rate");
	ck_assert_sstr_eq(problem_for(p, port + "/counters/symbol_error"),
			  port + "/counters/symbol_error: 'xyz' is not a number");
	ck_assert_sstr_eq(problem_for(p, port + "/counters/link_downed"),
			  port + "/counters/link_downed: '-5' is negative, not a count");
	ck_assert_sstr_eq(problem_for(p, port + "/hw_counters/out_of_sequence"),
			  port + "/hw_counters/out_of_sequence: '\\x01\\x02' is not a number");
	std::string bad_state = ib + "/mlx5_1/ports/1/state";
	ck_assert_sstr_eq(problem_for(p, bad_state), bad_state + ": '\\xff' is not a port state");
	std::string no_state = ib + "/mlx5_2/ports/1/state";
	ck_assert_sstr_eq(problem_for(p, no_state), no_state + ": no port state");
	ck_assert_int_eq(p.size(), 6);
	// mlx5_0/1 is read, without the bad values; the ports without a state are not.
	ck_assert_int_eq(ports.size(), 1);
	ck_assert_sstr_eq(ports[0].state, "ACTIVE");
	ck_assert(!ports[0].rate_gbps);
	ck_assert_int_eq(ports[0].counters.size(), 1);
	ck_assert_int_eq(ports[0].counters.at("port_rcv_errors"), 14);
	// The recorded H100 tree is clean: no problem at all.
	std::vector<Error> none;
	ck_assert_int_eq(read_ib_sysfs(test::data("health/sys-class-infiniband-h100"), none).size(), 9);
	ck_assert_msg(none.empty(), "%s", none.empty() ? "" : none[0].str().c_str());
	remove_tree(root);
}
END_TEST

START_TEST(gather_reports_garbage_as_a_collector_error)
{
	std::string root = temp_dir();
	put(root, "sys/class/hwmon/hwmon3/temp1_input", "abc\n");
	put(root, "sys/class/net/eth0/statistics/rx_errors", "x\n");
	GatherOptions opt;
	opt.root = root;
	opt.kernel_logs = {};
	NodeSample s = gather(opt);
	ck_assert_int_eq(s.errors.size(), 2);
	ck_assert_sstr_eq(s.errors[0].collector, "net");
	ck_assert_sstr_eq(s.errors[0].message, root + "/sys/class/net/eth0/statistics/rx_errors: 'x' is not a number");
	ck_assert_sstr_eq(s.errors[1].collector, "hwmon");
	ck_assert_sstr_eq(s.errors[1].message, root + "/sys/class/hwmon/hwmon3/temp1_input: 'abc' is not a number");
	remove_tree(root);
}
END_TEST

TCase *health_sysfs_garbage_tests()
{
	TCase *tc = tcase_create("sysfs_garbage");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, hwmon_garbage_is_an_error_naming_file_and_value);
	tcase_add_test(tc, hwmon_absent_and_eio_are_not_errors);
	tcase_add_test(tc, net_garbage_is_an_error_naming_file_and_value);
	tcase_add_test(tc, edac_garbage_and_eio_are_errors);
	tcase_add_test(tc, ib_garbage_is_an_error_naming_file_and_value);
	tcase_add_test(tc, gather_reports_garbage_as_a_collector_error);
	return tc;
}
