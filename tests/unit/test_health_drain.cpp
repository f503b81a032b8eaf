// Unit tests for `loom health check`'s parts outside the rules: reading
// scontrol's node records (recorded on each release), the plan (drain,
// resume, mark and clear suspect) with its hold-down and ownership rules, the
// hold-down state file, the suspect flag, the time-limited helper runner and
// the JSON/Prometheus reports.
#include "lib/exchange/suspect_mark.hpp"
#include "lib/health/drain.hpp"
#include "lib/health/report.hpp"
#include "lib/health/slurm_ops.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"
#include "lib/util/subprocess.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "tests/unit/check_main.hpp"

using namespace loom;
using namespace loom::health;
using namespace loom::exchange;

namespace {

// `scontrol show node` recorded on the test cluster of each release
// (tests/data/health/PROVENANCE): n1 idle with loom's suspect mark in Extra
// and a site note in Comment, n2 drained by an admin, n3 drained by loom, n4
// running a job with a reboot requested; then n2 down; then n1's notes cleared.
const char *releases[] = {"22.05.8", "24.11.5", "26.05.3"};

std::string recorded(const char *release, const char *what)
{
	auto t = read_file(loom::test::data(std::string("health/scontrol/") + release + "/show-node-" + what + ".txt"));
	ck_assert_msg(t.has_value(), "%s", t ? "" : t.error().str().c_str());
	return *t;
}

SlurmNode node_in(const char *release, const char *what, const char *name)
{
	auto n = parse_show_node(recorded(release, what), name);
	ck_assert_msg(n.has_value(), "%s %s %s: %s", release, what, name, n ? "" : n.error().str().c_str());
	return *n;
}

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

START_TEST(scontrol_node_records_of_each_release)
{
	for (const char *r : releases) {
		auto all = parse_show_node(recorded(r, "all"));
		ck_assert_msg(all.has_value(), "%s: %s", r, all ? "" : all.error().str().c_str());
		ck_assert_uint_eq(all->size(), 4);
		SlurmNode n1 = all->at("n1");
		ck_assert_sstr_eq(n1.state, "IDLE");
		ck_assert(!n1.drained() && !n1.out_of_our_hands());
		ck_assert_sstr_eq(n1.extra, "loom:suspect:gpu_temp:GPU 3 at 82 C rising 0.4 C/s");
		ck_assert_sstr_eq(n1.comment, "site: rack A09");
		ck_assert_sstr_eq(n1.suspect_field(), "extra");
		ck_assert_int_eq(n1.gres_gpus, 8); // Gres=gpu:8
		SlurmNode n2 = all->at("n2");
		ck_assert(n2.drained() && !n2.drained_by_loom());
		ck_assert_sstr_eq(n2.reason, "admin: replacing DIMM");
		ck_assert_sstr_eq(n2.reason_by, "root");
		ck_assert(all->at("n3").drained_by_loom());
		ck_assert_sstr_eq(all->at("n3").reason, "loom: gpu_xid: GPU 4 (0000:9b:00): Xid 119 x5: reset_gpu");
		SlurmNode n4 = all->at("n4");
		ck_assert_sstr_eq(n4.state, "MIXED+DRAIN+REBOOT_REQUESTED");
		ck_assert_sstr_eq(n4.base, "MIXED");
		ck_assert(n4.has("REBOOT_REQUESTED") && n4.out_of_our_hands());
		// A list of two nodes, a down node, cleared notes.
		auto list = parse_show_node(recorded(r, "list"));
		ck_assert(list && list->size() == 2 && list->count("n2") && list->count("n3"));
		SlurmNode down = node_in(r, "down", "n2");
		ck_assert_sstr_eq(down.base, "DOWN");
		ck_assert(down.out_of_our_hands());
		ck_assert_sstr_eq(down.reason, "admin: PSU swap");
		SlurmNode cleared = node_in(r, "cleared", "n1");
		ck_assert(cleared.extra.empty() && cleared.comment.empty() && cleared.suspect_field().empty());
		// "Node nosuch not found": not a record.
		auto none = parse_show_node(recorded(r, "nosuch"));
		ck_assert(!none.has_value());
		ck_assert(!parse_show_node(recorded(r, "all"), "n9"));
	}
}
END_TEST

START_TEST(scontrol_records_edge_cases)
{
	// Typed and mixed Gres (slurm.conf(5) syntax as scontrol prints it).
	auto n = parse_show_node("NodeName=g1 Arch=x86_64\n   Gres=gpu:h100:4(S:0),gpu:a100:4(S:1),nic:2\n"
				 "   State=DOWN*+DRAIN ThreadsPerCore=1\n",
				 "g1");
	ck_assert(n.has_value());
	ck_assert_int_eq(n->gres_gpus, 8);
	ck_assert(n->not_responding && n->base == "DOWN" && n->drained());
	auto none = parse_show_node("NodeName=c1 Arch=x86_64\n   Gres=(null)\n   State=IDLE\n", "c1");
	ck_assert(none && none->gres_gpus == -1);
	// A record without State= is refused, naming the node.
	auto bad = parse_show_node("NodeName=c2 Arch=x86_64\n   Gres=gpu:8\n");
	ck_assert(!bad.has_value());
	ck_assert(bad.error().str().find("c2") != std::string::npos);
	// The mark: one line, no quotes, bounded.
	std::string m = suspect_mark("gpu_temp", "GPU 3 'hot'\nrising", 30);
	ck_assert_sstr_eq(m, "loom:suspect:gpu_temp:GPU 3...");
	ck_assert_sstr_eq(suspect_mark("gpu_temp", "GPU 3 'hot'\nrising"), "loom:suspect:gpu_temp:GPU 3  hot  rising");
	ck_assert(is_loom_suspect_mark(m));
}
END_TEST

namespace {
std::vector<NodeStep> steps(const NodePlan &p)
{
	std::vector<NodeStep> out;
	for (const auto &s : p.steps)
		out.push_back(s.step);
	return out;
}
SlurmNode node(const char *state, const char *reason = "", const char *extra = "", const char *comment = "")
{
	std::string text = std::string("NodeName=n1 Arch=x86_64\n   State=") + state + " ThreadsPerCore=1\n";
	if (*comment)
		text += std::string("   Comment=") + comment + "\n";
	if (*extra)
		text += std::string("   Extra=") + extra + "\n";
	if (*reason)
		text += std::string("   Reason=") + reason + " [root@2026-12-01T10:00:00]\n";
	auto n = parse_show_node(text, "n1");
	ck_assert(n.has_value());
	return *n;
}
} // namespace

START_TEST(plan_drain_when_critical_only_once)
{
	HoldState h;
	NodePlan p = plan_node(node("MIXED"), verdict(Outcome::drain), h, 1000, 600);
	ck_assert(steps(p) == std::vector<NodeStep>{NodeStep::drain});
	ck_assert_sstr_eq(p.steps[0].text, "loom: gpu_xid: GPU 4: Xid 119 x5");
	// Already drained by loom with that reason: nothing to do.
	SlurmNode drained = node("MIXED+DRAIN", "loom: gpu_xid: GPU 4: Xid 119 x5");
	ck_assert(plan_node(drained, verdict(Outcome::drain), h, 1010, 600).steps.empty());
	// New evidence: the reason is updated.
	ck_assert(steps(plan_node(drained, verdict(Outcome::drain, "gpu_ecc", "GPU 1: 3 uncorrectable"), h, 1020,
				  600)) == std::vector<NodeStep>{NodeStep::update_reason});
	// Unknown never drains: it marks.
	NodePlan u =
		plan_node(node("IDLE"), verdict(Outcome::unknown, "collector_gpu", "no GPU data (8 GPUs expected)"), h,
			  1030, 600);
	ck_assert(steps(u) == std::vector<NodeStep>{NodeStep::mark_suspect});
	ck_assert_sstr_eq(u.steps[0].field, "extra");
	ck_assert_sstr_eq(u.steps[0].text, "loom:suspect:collector_gpu:no GPU data (8 GPUs expected)");
	// Nor does it touch a node loom drained (not resumed either: cannot judge).
	ck_assert(plan_node(drained, verdict(Outcome::unknown), h, 1040, 600).steps.empty());
}
END_TEST

START_TEST(plan_suspect_mark_keeps_others_notes)
{
	HoldState h;
	Verdict sv = verdict(Outcome::suspect, "predict", "GPU 3 temperature 80 C rising, 84 C in 600 s");
	const std::string mark = "loom:suspect:predict:GPU 3 temperature 80 C rising, 84 C in 600 s";
	NodePlan p = plan_node(node("IDLE"), sv, h, 1000, 600);
	ck_assert(steps(p) == std::vector<NodeStep>{NodeStep::mark_suspect});
	ck_assert_sstr_eq(p.steps[0].field, "extra");
	ck_assert_sstr_eq(p.steps[0].text, mark);
	// The same mark already there: nothing to do; a new one replaces loom's own.
	ck_assert(plan_node(node("IDLE", "", mark.c_str()), sv, h, 1010, 600).steps.empty());
	NodePlan again = plan_node(node("IDLE", "", "loom:suspect:gpu_temp:old"), sv, h, 1020, 600);
	ck_assert(steps(again) == std::vector<NodeStep>{NodeStep::mark_suspect});
	ck_assert_sstr_eq(again.steps[0].field, "extra");
	// Extra holds a site's note: the mark goes to Comment; both taken: no mark.
	NodePlan c = plan_node(node("IDLE", "", "{\"rack\":\"A09\"}"), sv, h, 1030, 600);
	ck_assert(steps(c) == std::vector<NodeStep>{NodeStep::mark_suspect});
	ck_assert_sstr_eq(c.steps[0].field, "comment");
	NodePlan none = plan_node(node("IDLE", "", "{\"rack\":\"A09\"}", "site: warranty"), sv, h, 1040, 600);
	ck_assert(none.steps.empty());
	ck_assert(none.why.find("others' notes") != std::string::npos);
	// Nodes out of loom's hands are never marked.
	for (const char *st :
	     {"DOWN+DRAIN", "IDLE*", "MIXED+DRAIN+REBOOT_REQUESTED", "IDLE+POWERED_DOWN", "IDLE+MAINTENANCE"})
		ck_assert_msg(plan_node(node(st), sv, h, 1050, 600).steps.empty(), "%s", st);
	// Nor one an admin drained.
	ck_assert(plan_node(node("IDLE+DRAIN", "admin: DIMM"), sv, h, 1060, 600).steps.empty());
}
END_TEST

START_TEST(plan_clears_only_its_own_after_hold_down)
{
	HoldState h;
	const char *mark = "loom:suspect:predict:GPU 3 temperature rising";
	SlurmNode marked = node("IDLE", "", mark, "site: rack A09");
	// The first ok check starts the clock; the mark stays through the hold-down.
	ck_assert(plan_node(marked, verdict(Outcome::ok), h, 1000, 600).steps.empty());
	ck_assert_int_eq(h.healthy_since, 1000);
	ck_assert(plan_node(marked, verdict(Outcome::ok), h, 1599, 600).steps.empty());
	// A suspect or unknown check in between restarts it.
	(void)plan_node(marked, verdict(Outcome::unknown), h, 1300, 600);
	ck_assert_int_eq(h.healthy_since, 0);
	ck_assert(plan_node(marked, verdict(Outcome::ok), h, 1400, 600).steps.empty());
	NodePlan clear = plan_node(marked, verdict(Outcome::ok), h, 2000, 600);
	ck_assert(steps(clear) == std::vector<NodeStep>{NodeStep::clear_suspect});
	ck_assert_sstr_eq(clear.steps[0].field, "extra");
	// In Comment, cleared there; a site's Extra is never cleared.
	HoldState h2{1, 0};
	NodePlan cc = plan_node(node("IDLE", "", "{\"rack\":\"A09\"}", mark), verdict(Outcome::ok), h2, 5000, 600);
	ck_assert(steps(cc) == std::vector<NodeStep>{NodeStep::clear_suspect});
	ck_assert_sstr_eq(cc.steps[0].field, "comment");
	ck_assert(plan_node(node("IDLE", "", "site: rack A09"), verdict(Outcome::ok), h2, 6000, 600).steps.empty());
	// loom's own drain and mark: resumed and cleared together.
	NodePlan both = plan_node(node("IDLE+DRAIN", "loom: gpu_xid: GPU 4: Xid 119 x5", mark), verdict(Outcome::ok),
				  h2, 7000, 600);
	ck_assert(steps(both) == (std::vector<NodeStep>{NodeStep::resume, NodeStep::clear_suspect}));
	// An admin's drain is never resumed, however long the node is healthy (nhc#134).
	HoldState h3;
	SlurmNode admin = node("IDLE+DRAIN", "replacing DIMM B3");
	for (int64_t t = 0; t <= 100000; t += 10000)
		ck_assert(plan_node(admin, verdict(Outcome::ok), h3, t, 600).steps.empty());
	// Nor re-drained with loom's reason when it turns critical.
	ck_assert(plan_node(admin, verdict(Outcome::drain), h3, 200000, 600).steps.empty());
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
	ck_assert_msg(hung.error().str().find("timed out after 1 s") != std::string::npos, "%s",
		      hung.error().str().c_str());
	ck_assert_msg(s < 3.0, "took %.1f s", s);
	// A child that closes its output but keeps running is still bounded.
	auto quiet = run_command({"sh", "-c", "exec >/dev/null 2>&1; sleep 30"}, 1);
	ck_assert(!quiet);
	ck_assert(!run_command({"/nonexistent/scontrol"}, 1));
	ck_assert_sstr_eq(command_line({"scontrol", "update", "reason=loom: x y"}),
			  "scontrol update \"reason=loom: x y\"");
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
	ck_assert(p.find("loom_health_ib_port_active{node=\"n\\\"1\",device=\"mlx5_0\",port=\"1\"} 0\n") !=
		  std::string::npos);
	ck_assert(p.find("loom_health_gpu_temperature_celsius{node=\"n\\\"1\",gpu=\"4\"} 31\n") != std::string::npos);
	// Every non-comment line is "name{labels} value".
	for (const auto &line : split_lines(p))
		if (!line.empty() && line[0] != '#')
			ck_assert_msg(line.find("} ") != std::string::npos && line.rfind("loom_health_", 0) == 0, "%s",
				      line.c_str());
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("health_drain");
	TCase *tc = tcase_create("drain");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, scontrol_node_records_of_each_release);
	tcase_add_test(tc, scontrol_records_edge_cases);
	tcase_add_test(tc, plan_drain_when_critical_only_once);
	tcase_add_test(tc, plan_suspect_mark_keeps_others_notes);
	tcase_add_test(tc, plan_clears_only_its_own_after_hold_down);
	tcase_add_test(tc, hold_state_and_suspect_flag_files);
	tcase_add_test(tc, helper_commands_have_a_deadline);
	tcase_add_test(tc, json_and_prometheus_reports);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
