// Unit tests for the health rules on the network, on recorded machines:
// InfiniBand ports down or slow, error counters and their link suspect
// mark, hw counters (faults, not congestion) and link flaps.
#include "lib/exchange/suspect_mark.hpp"
#include "lib/health/config.hpp"
#include "lib/health/infiniband.hpp"
#include "lib/health/link_flaps.hpp"
#include "lib/health/rules.hpp"
#include "lib/util/fs.hpp"

#include <cstdlib>
#include <string>

#include "tests/unit/health_rules_fixture.hpp"

using namespace loom;
using namespace loom::health;
using namespace loom::health::testing;
using namespace loom::exchange;

namespace {

// A copy of the recorded H100 InfiniBand sysfs tree, to raise counters in.
std::string copy_ib_tree()
{
	char tmpl[] = "/tmp/loom-health-rules.XXXXXX";
	char *d = ::mkdtemp(tmpl);
	ck_assert(d != nullptr);
	std::string cmd = "cp -R '" + test::data("health/sys-class-infiniband-h100") + "' '" + d + "/ib'";
	ck_assert_int_eq(std::system(cmd.c_str()), 0);
	return d;
}

void remove_tree(const std::string &dir)
{
	std::string cmd = "rm -rf '" + dir + "'";
	ck_assert_int_eq(std::system(cmd.c_str()), 0);
}

} // namespace

START_TEST(ib_ports_down_and_rate)
{
	NodeSample s;
	s.ib_ports = *parse_ibstat(recorded("ibstat-h100-port-down.txt"), "down");
	Verdict v = judge(s, *parse_health_config("", "t"));
	// three ports "State: Down" (mlx5_2, mlx5_7, mlx5_8)
	int down = 0;
	for (const auto &f : v.findings)
		down += f.check == "ib_port" && f.severity == Outcome::drain;
	ck_assert_int_eq(down, 3);
	ck_assert(has_finding(v, "ib_port", Outcome::drain, "mlx5_2/1: state DOWN"));
	// All active, but Azure's 400 Gb/s floor: the recording has one 100 Gb/s
	// Ethernet port (mlx5_1, "Link layer: Ethernet"), which the InfiniBand
	// rate check leaves alone.
	NodeSample up;
	up.ib_ports = *parse_ibstat(recorded("ibstat-h100-all-active.txt"), "up");
	Verdict u = judge(up, *parse_health_config("ib_rate_min=400\n", "t"));
	ck_assert_msg(u.outcome == Outcome::ok, "%s", u.reason().c_str());
	Verdict u2 = judge(up, *parse_health_config("ib_rate_min=800\n", "t"));
	ck_assert(has_finding(u2, "ib_rate", Outcome::drain, "400 Gb/s, below 800 Gb/s"));
	ck_assert(judge(up, *parse_health_config("ib_port_count=12\n", "t")).outcome == Outcome::drain);
}
END_TEST

START_TEST(ib_error_counters_sysfs)
{
	NodeSample s;
	s.ib_ports = *read_ib_sysfs(test::data("health/sys-class-infiniband-h100"));
	ck_assert(judge(s, *parse_health_config("", "t")).outcome == Outcome::ok);
	// mlx5_1: link_downed 255 + port_rcv_errors 14 + excessive_buffer_overrun_errors 15 = 284
	// (cat the counters); the other ports have port_rcv_errors 14 only.
	Verdict v = judge(s, *parse_health_config("ib_errors_suspect=100\n", "t"));
	ck_assert(v.outcome == Outcome::suspect);
	ck_assert_int_eq(v.findings.size(), 1);
	ck_assert(has_finding(v, "ib_errors", Outcome::suspect, "mlx5_1/1: 284 port errors (link_downed 255"));
	// The mark loom health check --drain sets for it is a link mark: what
	// select/topo counts against the node's leaf. A GPU check's is not.
	ck_assert(is_link_check(v.findings[0].check));
	ck_assert(is_link_suspect_mark(suspect_mark(v.findings[0].check, v.findings[0].evidence)));
	ck_assert(!is_link_suspect_mark(suspect_mark("gpu_temp", "GPU 3 at 74 C")));
	ck_assert(!is_link_suspect_mark("loom:suspect"));
	ck_assert(!is_link_suspect_mark("site: ib_errors"));
}
END_TEST

START_TEST(ib_hw_counters_sysfs)
{
	// The recorded H100 node: every link hw_counter at 0 (roce_adp_retrans 3
	// is not judged by default): ok.
	NodeSample s;
	s.ib_ports = *read_ib_sysfs(test::data("health/sys-class-infiniband-h100"));
	ck_assert_int_eq(s.ib_ports.size(), 9);
	Verdict ok = judge(s, *parse_health_config("", "t"));
	ck_assert_msg(ok.outcome == Outcome::ok, "%s", ok.reason().c_str());
	// A copy with mlx5_4's ACK timeouts past their limit (1000): suspect,
	// naming the port, the counter and the value.
	std::string dir = copy_ib_tree();
	std::string ib = dir + "/ib";
	ck_assert(write_file_atomic(ib + "/mlx5_4/ports/1/hw_counters/local_ack_timeout_err", "1500\n").has_value());
	s.ib_ports = *read_ib_sysfs(ib);
	Verdict v = judge(s, *parse_health_config("", "t"));
	ck_assert(v.outcome == Outcome::suspect);
	ck_assert_int_eq(v.findings.size(), 1);
	ck_assert(
		has_finding(v, "ib_hw_counter", Outcome::suspect, "mlx5_4/1: local_ack_timeout_err 1500 (limit 1000)"));
	ck_assert_sstr_eq(v.reason(), "loom: ib_hw_counter: mlx5_4/1: local_ack_timeout_err 1500 (limit 1000)");
	ck_assert(has_action(v, "checkpoint"));
	// Just below the limit: ok.
	ck_assert(write_file_atomic(ib + "/mlx5_4/ports/1/hw_counters/local_ack_timeout_err", "999\n").has_value());
	s.ib_ports = *read_ib_sysfs(ib);
	ck_assert(judge(s, *parse_health_config("", "t")).outcome == Outcome::ok);
	// Where the site drains on it.
	ck_assert(write_file_atomic(ib + "/mlx5_4/ports/1/hw_counters/local_ack_timeout_err", "1500\n").has_value());
	s.ib_ports = *read_ib_sysfs(ib);
	Verdict d = judge(s, *parse_health_config("ib_hw_counters_drain=local_ack_timeout_err:1200\n", "t"));
	ck_assert(d.outcome == Outcome::drain);
	ck_assert_sstr_eq(d.reason(), "loom: ib_hw_counter: mlx5_4/1: local_ack_timeout_err 1500 (limit 1200)");
	ck_assert(judge(s, *parse_health_config("ib_hw_counters_suspect=local_ack_timeout_err:0\n", "t")).outcome ==
		  Outcome::ok);
	// Corrupted RoCE packets on the bonded Ethernet port; transport retries
	// exhausted on mlx5_0.
	ck_assert(write_file_atomic(ib + "/mlx5_bond_0/ports/1/hw_counters/rx_icrc_encapsulated", "250\n").has_value());
	ck_assert(write_file_atomic(ib + "/mlx5_0/ports/1/hw_counters/req_transport_retries_exceeded", "100\n")
			  .has_value());
	s.ib_ports = *read_ib_sysfs(ib);
	Verdict m = judge(s, *parse_health_config("", "t"));
	ck_assert_int_eq(m.findings.size(), 3);
	ck_assert(has_finding(m, "ib_hw_counter", Outcome::suspect,
			      "mlx5_bond_0/1: rx_icrc_encapsulated 250 (limit 100)"));
	ck_assert(has_finding(m, "ib_hw_counter", Outcome::suspect,
			      "mlx5_0/1: req_transport_retries_exceeded 100 (limit 100)"));
	// Congestion is not a fault: ECN marks and CNPs by the billion, and the
	// application's RNR NAKs and receive drops, leave the node ok.
	remove_tree(dir);
	dir = copy_ib_tree();
	ib = dir + "/ib";
	for (const char *k : {"np_cnp_sent", "np_ecn_marked_roce_packets", "rp_cnp_handled", "roce_slow_restart_cnps",
			      "rnr_nak_retry_err", "out_of_buffer", "out_of_sequence", "roce_adp_retrans"})
		ck_assert(write_file_atomic(ib + "/mlx5_bond_0/ports/1/hw_counters/" + k, "4000000000\n").has_value());
	s.ib_ports = *read_ib_sysfs(ib);
	ck_assert_int_eq(s.ib_ports.back().hw_counters.at("np_cnp_sent"), 4000000000ull);
	Verdict cg = judge(s, *parse_health_config("", "t"));
	ck_assert_msg(cg.outcome == Outcome::ok, "%s", cg.reason().c_str());
	// A port that is down drains for that, not for its counters.
	ck_assert(write_file_atomic(ib + "/mlx5_5/ports/1/hw_counters/local_ack_timeout_err", "5000\n").has_value());
	ck_assert(write_file_atomic(ib + "/mlx5_5/ports/1/state", "1: DOWN\n").has_value());
	s.ib_ports = *read_ib_sysfs(ib);
	Verdict dn = judge(s, *parse_health_config("", "t"));
	ck_assert_int_eq(dn.findings.size(), 1);
	ck_assert(has_finding(dn, "ib_port", Outcome::drain, "mlx5_5/1: state DOWN"));
	remove_tree(dir);
}
END_TEST

START_TEST(link_flaps_rules)
{
	NodeSample s;
	s.flaps = count_link_flaps(split_lines(recorded("azure-1dev_6flap_syslog")));
	// ib6 lost carrier 6 times: drain at the default 5
	Verdict v = judge(s, *parse_health_config("", "t"));
	ck_assert(has_finding(v, "link_flaps", Outcome::drain, "ib6 lost carrier 6 times"));
	ck_assert(judge(s, *parse_health_config("link_flaps_drain=7\n", "t")).outcome == Outcome::suspect);
	ck_assert(judge(s, *parse_health_config("link_flaps_drain=0\nlink_flaps_suspect=0\n", "t")).outcome ==
		  Outcome::ok);
}
END_TEST

TCase *health_network_rule_tests()
{
	TCase *tc = tcase_create("network");
	tcase_add_test(tc, ib_ports_down_and_rate);
	tcase_add_test(tc, ib_error_counters_sysfs);
	tcase_add_test(tc, ib_hw_counters_sysfs);
	tcase_add_test(tc, link_flaps_rules);
	return tc;
}
