// Unit tests for the health config (fail-closed) and the rules, on recorded
// machines where there is one and on small hand-made samples otherwise: the
// GPUs', the host's and the collectors' own errors. The suite, with the
// network's rules (test_health_rules_network.cpp).
#include "lib/health/config.hpp"
#include "lib/health/kernel_log.hpp"
#include "lib/health/nvidia_smi.hpp"
#include "lib/health/rules.hpp"
#include "lib/health/slurm_ops.hpp"
#include "lib/util/fs.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "tests/unit/health_rules_fixture.hpp"

using namespace loom;
using namespace loom::health;
using namespace loom::health::testing;

namespace {

NodeSample h100_sample()
{
	NodeSample s;
	auto rep = parse_nvidia_smi_q(recorded("nvidia-smi-q-8xh100-535.161.08.txt"), "h100");
	ck_assert(rep.has_value());
	s.gpus = rep->gpus;
	s.gpu_source = "nvidia-smi";
	return s;
}

} // namespace

START_TEST(config_defaults_and_keys)
{
	auto c = parse_health_config("", "empty");
	ck_assert(c.has_value());
	ck_assert(c->gpu_temp_suspect == 84.0);
	ck_assert_int_eq(c->ecc_dram_corr_suspect, 20000000);
	ck_assert(c->xids.action(79) == XidAction::reboot);
	ck_assert(c->xids.action(48) == XidAction::drain);
	ck_assert(c->xids.action(63) == XidAction::ignore);
	ck_assert(c->xids.action(13) == XidAction::restart_app);
	ck_assert(c->xids.action(119) == XidAction::reset_gpu);
	ck_assert(c->xids.action(999) == XidAction::suspect);
	auto a = parse_health_config("# Azure drains on these\nxid_drain=63,92\ngpu_temp_suspect=80.5\nhold_down=15m\n"
				     "throttle_suspect=hw_slowdown\n",
				     "azure.conf");
	ck_assert_msg(a.has_value(), "%s", a ? "" : a.error().str().c_str());
	ck_assert(a->xids.action(63) == XidAction::drain);
	ck_assert(a->xids.action(92) == XidAction::drain);
	ck_assert(a->gpu_temp_suspect == 80.5);
	ck_assert_int_eq(a->hold_down, 900);
	// hw_counters: link and HCA faults judged by default, nothing drains.
	ck_assert_int_eq(c->ib_hw_counters_suspect.at("local_ack_timeout_err"), 1000);
	ck_assert_int_eq(c->ib_hw_counters_suspect.at("req_transport_retries_exceeded"), 100);
	ck_assert_int_eq(c->ib_hw_counters_suspect.at("rx_icrc_encapsulated"), 100);
	ck_assert(!c->ib_hw_counters_suspect.count("out_of_buffer"));
	ck_assert(!c->ib_hw_counters_suspect.count("np_cnp_sent"));
	ck_assert(c->ib_hw_counters_drain.empty());
	// Items change their counter only; 0 turns one off, none all of them.
	auto h = parse_health_config(
		"ib_hw_counters_suspect=local_ack_timeout_err:50,out_of_sequence:7,packet_seq_err:0\n"
		"ib_hw_counters_drain=local_ack_timeout_err:500\n",
		"hw.conf");
	ck_assert_msg(h.has_value(), "%s", h ? "" : h.error().str().c_str());
	ck_assert_int_eq(h->ib_hw_counters_suspect.at("local_ack_timeout_err"), 50);
	ck_assert_int_eq(h->ib_hw_counters_suspect.at("out_of_sequence"), 7);
	ck_assert(!h->ib_hw_counters_suspect.count("packet_seq_err"));
	ck_assert_int_eq(h->ib_hw_counters_suspect.at("implied_nak_seq_err"), 10000);
	ck_assert_int_eq(h->ib_hw_counters_drain.at("local_ack_timeout_err"), 500);
	ck_assert(parse_health_config("ib_hw_counters_suspect=none\n", "t")->ib_hw_counters_suspect.empty());
	ck_assert(ib_hw_counter_kind("np_ecn_marked_roce_packets") == IbHwCounterKind::congestion);
	ck_assert(ib_hw_counter_kind("rx_icrc_encapsulated") == IbHwCounterKind::link);
	ck_assert(ib_hw_counter_kind("rnr_nak_retry_err") == IbHwCounterKind::application);
	// The all-reduce probe.
	ck_assert(c->probe_allreduce_busbw_min == 100.0);
	ck_assert_int_eq(c->probe_allreduce_size, 256 << 20);
	auto p = parse_health_config("probe_allreduce_busbw_min=380\nprobe_allreduce_size=1G\n", "t");
	ck_assert(p && p->probe_allreduce_busbw_min == 380.0 && p->probe_allreduce_size == (uint64_t(1) << 30));
}
END_TEST

START_TEST(config_fails_closed)
{
	struct Bad {
		const char *text, *expect;
	} bad[] = {
		{"gpu_temp_suspct=80\n", "unknown key 'gpu_temp_suspct'"},
		{"gpu_temp_suspect=hot\n", "expected a number"},
		{"xid_drain=48,x\n", "bad Xid 'x'"},
		{"xid_drain=48\nxid_ignore=48\n", "listed under both drain and ignore"},
		{"xid_default=panic\n", "expected one of"},
		{"throttle_suspect=hw_therml\n", "unknown throttle reason 'hw_therml'"},
		{"gpu_temp_suspect=90\ngpu_temp_drain=85\n", "below gpu_temp_suspect"},
		{"hold_down=10m\nhold_down=20m\n", "hold_down"},
		{"gpu_source=magic\n", "gpu_source"},
		{"ib_hw_counters_suspect=np_cnp_sent:10\n", "'np_cnp_sent' counts congestion"},
		{"ib_hw_counters_drain=rp_cnp_handled:10\n", "'rp_cnp_handled' counts congestion"},
		{"ib_hw_counters_suspect=rx_write_requests:10\n", "'rx_write_requests' counts traffic"},
		{"ib_hw_counters_suspect=local_ack_timout_err:10\n", "unknown hw_counter 'local_ack_timout_err'"},
		{"ib_hw_counters_suspect=local_ack_timeout_err\n", "expected counter:limit"},
		{"ib_hw_counters_suspect=local_ack_timeout_err:many\n", "'local_ack_timeout_err'"},
		{"ib_hw_counters_suspect=local_ack_timeout_err:-1\n", "'local_ack_timeout_err'"},
		{"ib_hw_counters_suspect=packet_seq_err:5,\n", "expected counter:limit"},
		{"ib_hw_counters_suspect=packet_seq_err:5,packet_seq_err:6\n", "'packet_seq_err' given twice"},
		{"ib_hw_counters_drain=req_transport_retries_exceeded:10\n", "below its suspect limit 100"},
		{"probe_allreduce_busbw_min=fast\n", "expected a number"},
		{"probe_allreduce_busbw_min=-1\n", "probe_allreduce_busbw_min"},
		{"probe_allreduce_size=1k\n", "between 1M and 64G"},
		{"probe_allreduce_size=1048577\n", "multiple of 4"},
	};
	for (const auto &b : bad) {
		auto c = parse_health_config(b.text, "health.conf");
		ck_assert_msg(!c, "accepted: %s", b.text);
		std::string msg = c.error().str();
		ck_assert_msg(msg.find(b.expect) != std::string::npos, "%s -> %s", b.text, msg.c_str());
		ck_assert_msg(msg.find("health.conf") != std::string::npos, "%s", msg.c_str());
	}
}
END_TEST

START_TEST(recorded_h100_is_healthy)
{
	// Idle H100s at 29-31 C, no ECC errors, no remaps: ok. The recording shows
	// "HW Power Brake Slowdown : Active" on every GPU, which the default
	// throttle_suspect (hw_thermal, sw_thermal) does not count.
	auto c = parse_health_config("gpu_count=8\n", "t");
	Verdict v = judge(h100_sample(), *c);
	ck_assert_msg(v.outcome == Outcome::ok, "%s", v.reason().c_str());
	ck_assert_int_eq(v.exit_code(), 0);
	ck_assert_sstr_eq(v.reason(), "");
	ck_assert(v.actions.empty());
	// With power-brake counted, all eight are suspect.
	auto strict = parse_health_config("throttle_suspect=hw_power_brake\n", "t");
	Verdict s = judge(h100_sample(), *strict);
	ck_assert(s.outcome == Outcome::suspect);
	ck_assert_int_eq(s.findings.size(), 8);
	ck_assert(has_action(s, "checkpoint"));
}
END_TEST

START_TEST(xid_119_drains_with_reset)
{
	NodeSample s = h100_sample();
	KernelLog log = parse_kernel_log(recorded("kmsg-xid-119-h100.log"));
	map_xids_to_gpus(log.xids, s.gpus);
	s.xids = log.xids;
	auto c = parse_health_config("", "t");
	Verdict v = judge(s, *c);
	ck_assert(v.outcome == Outcome::drain);
	ck_assert_int_eq(v.exit_code(), 2);
	// five Xid 119 lines on 0000:9b:00 = GPU 4 -> one finding with the count
	ck_assert(has_finding(v, "gpu_xid", Outcome::drain, "GPU 4 (0000:9b:00): Xid 119 x5: reset_gpu"));
	ck_assert(has_action(v, "drain"));
	ck_assert(has_action(v, "reset_gpu 4"));
	ck_assert(v.reason().rfind("loom: gpu_xid: GPU 4 (0000:9b:00): Xid 119 x5", 0) == 0);
	ck_assert(v.reason().size() <= 200);
	// A vendor table that only watches 119 (suspect) turns it into a warning.
	auto soft = parse_health_config("xid_suspect=119\n", "t");
	ck_assert(judge(s, *soft).outcome == Outcome::suspect);
}
END_TEST

START_TEST(xid_48_63_94_three_actions)
{
	NodeSample s = h100_sample();
	KernelLog log = parse_kernel_log(recorded("kmsg-xid-48-63-94.log"));
	map_xids_to_gpus(log.xids, s.gpus);
	s.xids = log.xids;
	auto c = parse_health_config("", "t");
	Verdict v = judge(s, *c);
	// 48 drains; 63 is ignored (no finding); 94 x9 is the application's (ok, informational)
	ck_assert(v.outcome == Outcome::drain);
	ck_assert(has_finding(v, "gpu_xid", Outcome::drain, "Xid 48 x1: drain"));
	ck_assert(has_finding(v, "gpu_xid", Outcome::ok, "Xid 94 x9: restart_app"));
	ck_assert(!has_finding(v, "gpu_xid", Outcome::ok, "Xid 63"));
	ck_assert(!has_finding(v, "gpu_xid", Outcome::drain, "Xid 63"));
	// Xid 13 x16 and 43 from the other recording: restart_app and ignore -> ok
	NodeSample t;
	t.xids = parse_kernel_log(recorded("kmsg-xid-and-memory-errors.log")).xids;
	Verdict w = judge(t, *c);
	ck_assert_msg(w.outcome == Outcome::ok, "%s", w.reason().c_str());
	ck_assert(has_finding(w, "gpu_xid", Outcome::ok, "PCI 0000:38:00: Xid 13 x16: restart_app"));
}
END_TEST

START_TEST(retired_pages_and_pending_azure)
{
	NodeSample s;
	auto rep = parse_nvidia_smi_q(recorded("azure-bad_nvsmi8_output.txt"), "bad");
	s.gpus = rep->gpus;
	s.gpu_source = "nvidia-smi";
	auto c = parse_health_config("", "t");
	Verdict v = judge(s, *c);
	ck_assert(v.outcome == Outcome::drain);
	// GPU 00000001: 60 single + 5 double = 65 retired pages >= 10
	ck_assert(has_finding(v, "gpu_retired_pages", Outcome::drain, "GPU 0 (0001:00:00): 65 retired pages"));
	// four GPUs with "Pending Page Blacklist : Yes"
	int pending = 0;
	for (const auto &f : v.findings)
		pending += f.evidence.find("page retirement pending") != std::string::npos;
	ck_assert_int_eq(pending, 4);
	// The original Azure recording: all 16 "... Bit ECC : 0" and 8 "Pending Page
	// Blacklist : No" (grep -c): healthy.
	auto orig = parse_nvidia_smi_q(recorded("azure-orig_nvsmi8_output.txt"), "orig");
	NodeSample o;
	o.gpus = orig->gpus;
	ck_assert(judge(o, *c).outcome == Outcome::ok);
}
END_TEST

START_TEST(gpu_counters_thresholds)
{
	auto c = parse_health_config("gpu_count=2\n", "t");
	NodeSample s;
	s.gpu_source = "nvml";
	GpuState g;
	g.index = 0;
	g.pci_bus = "0000:19:00";
	g.temp_c = 86;
	g.ecc_agg_sram_corr = 10000;
	s.gpus.push_back(g);
	Verdict v = judge(s, *c);
	ck_assert(has_finding(v, "gpu_count", Outcome::drain, "1 GPUs visible, 2 expected"));
	ck_assert(has_finding(v, "gpu_temp", Outcome::suspect, "GPU 0 (0000:19:00) at 86 C"));
	ck_assert(has_finding(v, "gpu_ecc", Outcome::suspect, "10000 correctable SRAM"));
	s.gpus[0].ecc_vol_dram_uncorr = 1;
	s.gpus[0].remap_failure = true;
	s.gpus[0].temp_c = 95;
	Verdict w = judge(s, *c);
	ck_assert(has_finding(w, "gpu_ecc", Outcome::drain, "1 uncorrectable"));
	ck_assert(has_finding(w, "gpu_row_remap", Outcome::drain, "row remapping failed"));
	ck_assert(has_finding(w, "gpu_temp", Outcome::drain, "95 C"));
	ck_assert(has_action(w, "reset_gpu 0"));
}
END_TEST

START_TEST(nvlink_inactive_drains)
{
	std::vector<GpuState> gpus;
	ck_assert(parse_nvlink_status(recorded("azure-bad_nvlink_status.txt"), "bad", gpus).has_value());
	NodeSample s;
	s.gpus = gpus;
	Verdict v = judge(s, *parse_health_config("", "t"));
	ck_assert(has_finding(v, "gpu_nvlink", Outcome::drain, "GPU 6: all NVLinks inactive"));
	std::vector<GpuState> good;
	ck_assert(parse_nvlink_status(recorded("nvidia-smi.nvlink.status.a100"), "a100", good).has_value());
	NodeSample t;
	t.gpus = good;
	ck_assert(judge(t, *parse_health_config("", "t")).outcome == Outcome::ok);
}
END_TEST

START_TEST(host_rules)
{
	NodeSample s;
	s.hwmon.push_back({"coretemp", "temp", "Package id 0", 101, 100.0, 90.0, std::nullopt, false});
	s.hwmon.push_back({"nct6775", "fan", "fan2", 0, std::nullopt, std::nullopt, std::nullopt, true});
	s.edac.push_back({"mc0", 150, 0});
	s.net.push_back({"eth0", false, "down", 3, 0, 0, 0});
	auto c = parse_health_config("eth_carrier_required=eth0,eth1\n", "t");
	Verdict v = judge(s, *c);
	ck_assert(has_finding(v, "hwmon", Outcome::drain, "coretemp Package id 0 at 101.0 C, critical 100.0 C"));
	ck_assert(has_finding(v, "hwmon", Outcome::suspect, "fan alarm"));
	ck_assert(has_finding(v, "edac", Outcome::suspect, "mc0: 150 corrected"));
	ck_assert(has_finding(v, "eth_carrier", Outcome::drain, "eth0: no carrier (down)"));
	ck_assert(has_finding(v, "eth_carrier", Outcome::drain, "eth1: no such interface"));
	s.edac[0].uncorrected = 2;
	ck_assert(has_finding(judge(s, *c), "edac", Outcome::drain, "mc0: 2 uncorrected"));
}
END_TEST

START_TEST(collector_errors_and_reason_text)
{
	NodeSample s;
	s.errors.push_back({"gpu", "nvidia-smi-q.txt: cut short: 8 GPUs attached but 1 described"});
	// A check that cannot judge: unknown (exit 3), never ok; the node is
	// marked suspect and checkpointed, never drained on it.
	Verdict v = judge(s, *parse_health_config("", "t"));
	ck_assert(v.outcome == Outcome::unknown);
	ck_assert_int_eq(v.exit_code(), 3);
	ck_assert(has_action(v, "suspect") && has_action(v, "checkpoint") && !has_action(v, "drain"));
	ck_assert(judge(s, *parse_health_config("collector_error=suspect\n", "t")).exit_code() == 1);
	ck_assert(judge(s, *parse_health_config("collector_error=drain\n", "t")).outcome == Outcome::drain);
	auto hide = parse_health_config("collector_error=ok\n", "t");
	ck_assert(!hide.has_value()); // an unreadable collector cannot be declared healthy
	ck_assert(hide.error().str().find("collector_error") != std::string::npos);
	// A drain finding outweighs one that cannot judge; that outweighs a suspect one.
	ck_assert(std::max(Outcome::unknown, Outcome::suspect) == Outcome::unknown);
	ck_assert(std::max(Outcome::unknown, Outcome::drain) == Outcome::drain);
	// Quotes and newlines never reach a scontrol reason; long reasons are cut.
	Verdict q;
	q.findings.push_back({"x", Outcome::drain, std::string("a\"b'c\nd") + std::string(300, 'z')});
	std::string r = q.reason();
	ck_assert(r.find('"') == std::string::npos && r.find('\'') == std::string::npos &&
		  r.find('\n') == std::string::npos);
	ck_assert_int_eq(r.size(), 200);
	ck_assert(r.rfind("loom: x: a b c d", 0) == 0);
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("health_rules");
	TCase *tc = tcase_create("rules");
	tcase_add_test(tc, config_defaults_and_keys);
	tcase_add_test(tc, config_fails_closed);
	tcase_add_test(tc, recorded_h100_is_healthy);
	tcase_add_test(tc, xid_119_drains_with_reset);
	tcase_add_test(tc, xid_48_63_94_three_actions);
	tcase_add_test(tc, retired_pages_and_pending_azure);
	tcase_add_test(tc, gpu_counters_thresholds);
	tcase_add_test(tc, nvlink_inactive_drains);
	tcase_add_test(tc, host_rules);
	tcase_add_test(tc, collector_errors_and_reason_text);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, health_network_rule_tests());
	return s;
}

LOOM_CHECK_MAIN(make_suite)
