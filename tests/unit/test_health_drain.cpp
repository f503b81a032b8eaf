// Unit tests for `loom health check`'s parts outside the rules: reading
// scontrol's node record, the drain/resume decision with its hold-down, the
// hold-down state file, the suspect flag, the time-limited helper runner and
// the JSON/Prometheus reports.
#include "lib/health/drain.hpp"
#include "lib/health/report.hpp"
#include "lib/health/subprocess.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"

#include <thread>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <unistd.h>

#include "tests/unit/check_main.hpp"

using namespace loom;
using namespace loom::health;

namespace {

// `scontrol show node n1` of Slurm 22.05 (src/api/node_info.c prints these
// lines in this order; the reason carries " [user@time]").
const char *show_node = "NodeName=n1 Arch=x86_64 CoresPerSocket=8 \n"
			"   CPUAlloc=0 CPUEfctv=16 CPUTot=16 CPULoad=0.31\n"
			"   AvailableFeatures=(null)\n"
			"   Gres=gpu:8\n"
			"   NodeAddr=127.0.0.1 NodeHostName=vm Version=22.05.8\n"
			"   RealMemory=8000 AllocMem=0 FreeMem=N/A Sockets=2 Boards=1\n"
			"   State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
			"   Partitions=debug \n"
			"   CfgTRES=cpu=16,mem=8000M,billing=16,gres/gpu=8\n"
			"   CurrentWatts=0 AveWatts=0\n"
			"   ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n"
			"   Reason=loom: gpu_xid: GPU 4 (0000:9b:00): Xid 119 x5: reset_gpu [root@2026-11-30T21:00:00]\n\n";

Verdict verdict(Outcome o, const std::string &check = "gpu_xid", const std::string &ev = "GPU 4: Xid 119 x5")
{
	Verdict v;
	v.outcome = o;
	if (o != Outcome::ok)
		v.findings.push_back({check, o, ev});
	return v;
}

std::string temp_dir()
{
	char tmpl[] = "/tmp/loom-health-drain.XXXXXX";
	char *d = ::mkdtemp(tmpl);
	ck_assert(d != nullptr);
	return d;
}

} // namespace

START_TEST(scontrol_node_record)
{
	auto st = parse_scontrol_node(show_node, "n1");
	ck_assert(st.has_value());
	ck_assert_sstr_eq(st->state, "IDLE+DRAIN");
	ck_assert_sstr_eq(st->reason, "loom: gpu_xid: GPU 4 (0000:9b:00): Xid 119 x5: reset_gpu");
	ck_assert(st->drained() && st->by_loom());
	ck_assert(!parse_scontrol_node(show_node, "n2"));
	ck_assert(!parse_scontrol_node("Node n9 not found\n", "n9"));
}
END_TEST

START_TEST(drain_when_critical_only_once)
{
	HoldState h;
	SlurmNodeState up{"MIXED", ""};
	DrainDecision d = decide_drain(up, verdict(Outcome::drain), h, 1000, 600);
	ck_assert(d.step == DrainStep::drain);
	ck_assert_sstr_eq(d.reason, "loom: gpu_xid: GPU 4: Xid 119 x5");
	// Already drained by loom with that reason: nothing to do.
	SlurmNodeState drained{"MIXED+DRAIN", "loom: gpu_xid: GPU 4: Xid 119 x5"};
	ck_assert(decide_drain(drained, verdict(Outcome::drain), h, 1010, 600).step == DrainStep::none);
	// New evidence: the reason is updated.
	ck_assert(decide_drain(drained, verdict(Outcome::drain, "gpu_ecc", "GPU 1: 3 uncorrectable"), h, 1020, 600).step ==
		  DrainStep::update_reason);
	// Suspect never drains.
	ck_assert(decide_drain(up, verdict(Outcome::suspect), h, 1030, 600).step == DrainStep::none);
}
END_TEST

START_TEST(resume_after_hold_down_only_own_drains)
{
	HoldState h;
	SlurmNodeState ours{"IDLE+DRAIN", "loom: gpu_xid: GPU 4: Xid 119 x5"};
	// First healthy check starts the hold-down clock.
	ck_assert(decide_drain(ours, verdict(Outcome::ok), h, 1000, 600).step == DrainStep::none);
	ck_assert_int_eq(h.healthy_since, 1000);
	ck_assert(decide_drain(ours, verdict(Outcome::ok), h, 1599, 600).step == DrainStep::none);
	// A suspect check in between restarts it.
	ck_assert(decide_drain(ours, verdict(Outcome::suspect), h, 1300, 600).step == DrainStep::none);
	ck_assert_int_eq(h.healthy_since, 0);
	ck_assert(decide_drain(ours, verdict(Outcome::ok), h, 1400, 600).step == DrainStep::none);
	ck_assert(decide_drain(ours, verdict(Outcome::ok), h, 1999, 600).step == DrainStep::none);
	ck_assert(decide_drain(ours, verdict(Outcome::ok), h, 2000, 600).step == DrainStep::resume);
	// An admin's drain is never resumed, however long the node is healthy (nhc#134).
	HoldState h2;
	SlurmNodeState admin{"IDLE+DRAIN", "replacing DIMM B3"};
	for (int64_t t = 0; t <= 100000; t += 10000)
		ck_assert(decide_drain(admin, verdict(Outcome::ok), h2, t, 600).step == DrainStep::none);
	// Nor re-drained with loom's reason when it turns critical.
	ck_assert(decide_drain(admin, verdict(Outcome::drain), h2, 200000, 600).step == DrainStep::none);
}
END_TEST

START_TEST(hold_state_and_suspect_flag_files)
{
	std::string dir = temp_dir();
	std::string path = dir + "/hold-n1.json";
	auto none = load_hold_state(path);
	ck_assert(none && none->healthy_since == 0);
	ck_assert(save_hold_state(path, {1234, 88}).has_value());
	auto back = load_hold_state(path);
	ck_assert(back && back->healthy_since == 1234 && back->kmsg_cursor == 88);
	ck_assert(write_file_atomic(path, "{\"healthy_since\": 1, \"typo\": 2}\n").has_value());
	ck_assert(!load_hold_state(path)); // strict: an unknown field is an error
	ck_assert(update_suspect_flag(dir, verdict(Outcome::suspect, "predict", "gpu3.temp rising")).has_value());
	auto flag = read_file(dir + "/suspect");
	ck_assert(flag.has_value());
	ck_assert_sstr_eq(*flag, "loom: predict: gpu3.temp rising\n");
	ck_assert(update_suspect_flag(dir, verdict(Outcome::ok)).has_value());
	ck_assert_int_ne(::access((dir + "/suspect").c_str(), F_OK), 0);
	ck_assert(update_suspect_flag(dir, verdict(Outcome::ok)).has_value()); // already gone: fine
	std::string cmd = "rm -rf '" + dir + "'";
	ck_assert_int_eq(std::system(cmd.c_str()), 0);
}
END_TEST

START_TEST(helper_commands_have_a_deadline)
{
	auto r = run_command({"sh", "-c", "echo drained; exit 3"}, 5);
	ck_assert(r.has_value());
	ck_assert_int_eq(r->exit_code, 3);
	ck_assert_sstr_eq(r->output, "drained\n");
	auto t0 = std::chrono::steady_clock::now();
	auto hung = run_command({"sleep", "30"}, 1);
	double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	ck_assert(!hung);
	ck_assert_msg(hung.error().str().find("timed out after 1 s") != std::string::npos, "%s", hung.error().str().c_str());
	ck_assert_msg(s < 3.0, "took %.1f s", s);
	// A child that closes its output but keeps running is still bounded.
	auto quiet = run_command({"sh", "-c", "exec >/dev/null 2>&1; sleep 30"}, 1);
	ck_assert(!quiet);
	ck_assert(!run_command({"/nonexistent/scontrol"}, 1));
	ck_assert_sstr_eq(command_line({"scontrol", "update", "reason=loom: x y"}), "scontrol update \"reason=loom: x y\"");
	// Cancelled from another thread: the child is killed within a slice.
	std::atomic<bool> stop{false};
	std::thread t([&] {
		std::this_thread::sleep_for(std::chrono::milliseconds(200));
		stop = true;
	});
	t0 = std::chrono::steady_clock::now();
	auto c = run_command({"sleep", "30"}, 20, &stop);
	s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	t.join();
	ck_assert(!c);
	ck_assert_msg(c.error().str().find("cancelled") != std::string::npos, "%s", c.error().str().c_str());
	ck_assert_msg(s < 1.5, "cancel took %.2f s", s);
	// Nothing starts once cancelled.
	auto none = run_command({"sh", "-c", "echo ran"}, 5, &stop);
	ck_assert(!none);
	// Not cancelled: the flag costs nothing but slices.
	std::atomic<bool> go{false};
	auto fine = run_command({"sh", "-c", "sleep 0.3; echo done"}, 5, &go);
	ck_assert(fine.has_value());
	ck_assert_sstr_eq(fine->output, "done\n");
}
END_TEST

START_TEST(json_and_prometheus_reports)
{
	NodeSample s;
	GpuState g;
	g.index = 4;
	g.temp_c = 31;
	g.ecc_vol_dram_uncorr = 0;
	s.gpus.push_back(g);
	s.xids.push_back({119, "0000:9b:00", 4, "t", "", "Timeout"});
	s.xids.push_back({119, "0000:9b:00", 4, "t", "", "Timeout"});
	s.ib_ports.push_back({"mlx5_0", 1, "DOWN", "Polling", 40.0, "InfiniBand", {}, {}});
	Verdict v = verdict(Outcome::drain);
	v.actions = {"drain", "reset_gpu 4"};
	auto j = json_parse(verdict_json("n\"1", s, v), "json");
	ck_assert(j.has_value());
	ObjectReader r(j->get(), "$");
	ck_assert_sstr_eq(*r.str("node"), "n\"1");
	ck_assert_sstr_eq(*r.str("outcome"), "drain");
	ck_assert_int_eq(*r.integer("exit_code"), 2);
	std::string p = verdict_prometheus("n\"1", s, v);
	ck_assert_msg(p.find("loom_health_outcome{node=\"n\\\"1\"} 2\n") != std::string::npos, "%s", p.c_str());
	ck_assert(p.find("loom_health_xid_events{node=\"n\\\"1\",gpu=\"4\",xid=\"119\"} 2\n") != std::string::npos);
	ck_assert(p.find("loom_health_ib_port_active{node=\"n\\\"1\",device=\"mlx5_0\",port=\"1\"} 0\n") != std::string::npos);
	ck_assert(p.find("loom_health_gpu_temperature_celsius{node=\"n\\\"1\",gpu=\"4\"} 31\n") != std::string::npos);
	// Every non-comment line is "name{labels} value".
	for (const auto &line : split_lines(p))
		if (!line.empty() && line[0] != '#')
			ck_assert_msg(line.find("} ") != std::string::npos && line.rfind("loom_health_", 0) == 0, "%s", line.c_str());
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("health_drain");
	TCase *tc = tcase_create("drain");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, scontrol_node_record);
	tcase_add_test(tc, drain_when_critical_only_once);
	tcase_add_test(tc, resume_after_hold_down_only_own_drains);
	tcase_add_test(tc, hold_state_and_suspect_flag_files);
	tcase_add_test(tc, helper_commands_have_a_deadline);
	tcase_add_test(tc, json_and_prometheus_reports);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
