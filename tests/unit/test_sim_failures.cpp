// Unit tests for loom sim's failures: each cause's outcome through
// lib/health's classifier, the draws, the model file; and failures in a run:
// ETTR against Daly's interval, a warning's checkpoint, spares taking a
// failed node's place or a moving job.
#include "tests/unit/check_main.hpp"
#include "tests/unit/sim_fixture.hpp"

#include "lib/place/spares.hpp"
#include "lib/sim/failures.hpp"
#include "lib/sim/simulator.hpp"

#include <cmath>
#include <map>
#include <string>
#include <vector>

using namespace loom;
using namespace loom::sim;

START_TEST(failure_outcomes)
{
	// Each cause's evidence through jobcomp/health's own classifier.
	FailureModel m = default_failure_model();
	std::vector<std::string> job = {"n00001", "n00002", "n00003"};
	std::map<std::string, const Cause *> by;
	for (const Cause &c : m.causes)
		by[c.name] = &c;
	Outcome gpu = judge_failure(*by["gpu"], 7, job, "n00002", true, 0, 10);
	ck_assert(gpu.cls == health::FailureClass::gpu_fault);
	ck_assert(gpu.requeue);
	ck_assert_int_eq(gpu.drain.size(), 1);
	ck_assert_str_eq(gpu.drain[0].c_str(), "n00002");
	Outcome host = judge_failure(*by["host"], 7, job, "n00003", false, 0, 10);
	ck_assert(host.cls == health::FailureClass::node_failure);
	ck_assert(host.requeue && host.drain.size() == 1 && host.drain[0] == "n00003");
	Outcome net = judge_failure(*by["network"], 7, job, "n00001", true, 0, 10);
	ck_assert(net.cls == health::FailureClass::network_fault);
	ck_assert(net.drain.size() == 1 && net.drain[0] == "n00001");
	Outcome hang = judge_failure(*by["nccl"], 7, job, "n00001", true, 0, 10);
	ck_assert(hang.cls == health::FailureClass::nccl_timeout);
	ck_assert(hang.requeue && hang.drain.empty()); // a watchdog timeout blames no node
	Outcome bug = judge_failure(*by["software"], 7, job, "n00001", true, 0, 10);
	ck_assert(bug.cls == health::FailureClass::user_error);
	ck_assert(!bug.requeue && bug.drain.empty());
	Outcome spent = judge_failure(*by["gpu"], 7, job, "n00002", true, 10, 10);
	ck_assert(!spent.requeue && spent.drain.size() == 1); // budget spent: drained, not requeued
	for (const char *c : {"hbm", "sram", "gsp"})
		ck_assert_msg(judge_failure(*by[c], 7, job, "n00002", true, 0, 10).cls ==
				      health::FailureClass::gpu_fault,
			      "%s", c);
	ck_assert(judge_failure(*by["nic"], 7, job, "n00002", true, 0, 10).cls == health::FailureClass::network_fault);
}
END_TEST

START_TEST(failure_draws)
{
	FailureModel m = default_failure_model();
	// 10,000 nodes for 100 days at 3.79 per 1000 node-days: 3,790 expected
	// (Poisson: sd 62).
	auto a = draw_failures(m, 10000, 100 * 86400, 5);
	auto b = draw_failures(m, 10000, 100 * 86400, 5);
	ck_assert_int_eq(a.size(), b.size());
	for (size_t i = 0; i < a.size(); i++)
		ck_assert(a[i].t == b[i].t && a[i].node == b[i].node && a[i].cause == b[i].cause);
	ck_assert_msg(std::fabs(static_cast<double>(a.size()) - 3790) < 4 * 62, "%zu failures", a.size());
	// Lemons: 1% of the nodes at 10x the rate hold 10/(99+10) = 9.2% of the failures.
	std::map<int32_t, int> per;
	for (const Failure &f : a)
		per[f.node]++;
	int lemon_failures = 0;
	for (const auto &[node, n] : per)
		if (n >= 4) // a normal node expects 0.35
			lemon_failures += n;
	ck_assert_msg(lemon_failures > 200 && lemon_failures < 500, "%d", lemon_failures);
	// Causes in their shares: the GPU (30.1%) about 1,140 of them.
	size_t gpu = 0;
	for (const Failure &f : a)
		gpu += m.causes[f.cause].name == "gpu";
	ck_assert_msg(gpu > 1000 && gpu < 1290, "%zu", gpu);
	FailureModel off = m;
	off.none = true;
	ck_assert(draw_failures(off, 10000, 86400, 1).empty());
}
END_TEST

START_TEST(failure_model_file)
{
	auto m = parse_failure_model("rate=6.5 lemon_share=0\ncause.gpu.repair=1d cause.software.share=0\n",
				     "test.model");
	ck_assert_msg(m.has_value(), "%s", m ? "" : m.error().str().c_str());
	ck_assert(std::fabs(m->rate_per_1000_node_days - 6.5) < 1e-9);
	for (const Cause &c : m->causes) {
		if (c.name == "gpu")
			ck_assert_int_eq(c.repair_s, 86400);
		if (c.name == "software")
			ck_assert(c.share == 0);
	}
	auto bad = parse_failure_model("cause.cosmic.share=1\n", "test.model");
	ck_assert(!bad.has_value());
	ck_assert_msg(bad.error().str().find("test.model:1") != std::string::npos &&
			      bad.error().str().find("cause.cosmic.share") != std::string::npos,
		      "%s", bad.error().str().c_str());
}
END_TEST

START_TEST(ettr_agrees_with_daly)
{
	// One 2,048-GPU job for 30 days of work on a cluster of 2,304 GPUs, at a
	// failure rate that gives it an MTBF M = 3 h. With a checkpoint cost C,
	// restart R and requeue delay D, the expected share of wall time that
	// becomes committed work with interval T is about
	//   T / (T + C) * (1 - ((T + C) / 2 + R + D) / M)
	// and the best T is near Daly's.
	topo::Cluster c = make("gpus=2304 fabric=nvl72");
	FailureModel m = default_failure_model();
	m.lemon_share = 0;
	m.ckpt_max_restarts = 100000; // every failure requeues: the interval alone decides
	m.user_resubmit_s = 121;      // a held job is released as fast as a requeue
	for (Cause &k : m.causes)     // every failure requeues the job at once
		if (k.name == "software" || k.name == "nccl")
			k.share = 0;
	double node_days = 3.0 / 24 * 256; // M = 3 h over the job's 256 nodes
	m.rate_per_1000_node_days = 1000 / node_days;
	const double M = 3 * 3600.0, C = 60, R = 300, D = 121;
	std::vector<Job> jobs = {job(1, 0, 256, 8, 30 * 86400, true)};
	jobs[0].limit_s = 400 * 86400;
	double best = 0;
	int64_t best_t = 0;
	for (int64_t t : {600, 1200, 1800, 3600}) {
		RunConfig cfg;
		cfg.failures = m;
		cfg.ckpt.interval_s = t;
		cfg.ckpt.cost_s = C;
		cfg.ckpt.restart_s = R;
		cfg.large_gpus = 2048;
		auto fails = draw_failures(m, c.nodes.size(), 60 * 86400, 11);
		auto r = simulate(c, jobs, fails, cfg);
		ck_assert(r.has_value());
		double ettr = r->jobs[0].ettr();
		double T = static_cast<double>(t);
		double expect = T / (T + C) * (1 - ((T + C) / 2 + R + D) / M);
		ck_assert_msg(std::fabs(ettr - expect) < 0.04, "T=%lld: ETTR %.3f, expected about %.3f",
			      static_cast<long long>(t), ettr, expect);
		if (ettr > best) {
			best = ettr;
			best_t = t;
		}
	}
	// Daly: sqrt(2CM) ~ 1138 s; of the intervals tried, 1200 s should win.
	ck_assert_msg(best_t == 1200, "best interval %lld", static_cast<long long>(best_t));
}
END_TEST

START_TEST(warning_saves_work_and_steers_placement)
{
	// A 2-node --ckpt job with a 6 h interval; its first node fails 5 h in.
	// Announced 1 h ahead, the node turns suspect: spank_ckpt checkpoints the
	// job then (4 h of work kept, 1 h lost).
	topo::Cluster c = make("gpus=32 fabric=fat nodes_per_leaf=4");
	FailureModel m = default_failure_model();
	uint32_t gpu = 0;
	for (uint32_t k = 0; k < m.causes.size(); k++)
		if (m.causes[k].name == "gpu")
			gpu = k;
	Job big = job(1, 0, 2, 8, 20 * 3600, true);
	RunConfig cfg;
	cfg.failures = m;
	cfg.ckpt.interval_s = 6 * 3600;
	auto first = simulate(c, {big}, {}, cfg);
	ck_assert(first.has_value());
	ck_assert_str_eq(first->jobs[0].first_nodes.c_str(), "n[00001-00002]");
	Failure f;
	f.t = 5 * 3600;
	f.node = c.find_node("n00001");
	f.cause = gpu;
	auto plain = simulate(c, {big}, {f}, cfg);
	f.warn_t = 4 * 3600;
	auto warned = simulate(c, {big}, {f}, cfg);
	ck_assert(plain.has_value() && warned.has_value());
	ck_assert_int_eq(plain->summary.job_failures, 1);
	ck_assert_int_eq(warned->summary.job_failures, 1);
	ck_assert_int_eq(warned->summary.warnings, 1);
	// 16 GPUs: 5 h lost without the warning, 1 h with it.
	ck_assert_msg(std::fabs(plain->jobs[0].lost_gpu_s / 3600 - 16 * 5) < 0.1, "%.2f",
		      plain->jobs[0].lost_gpu_s / 3600);
	ck_assert_msg(std::fabs(warned->jobs[0].lost_gpu_s / 3600 - 16 * 1) < 0.1, "%.2f",
		      warned->jobs[0].lost_gpu_s / 3600);
	ck_assert(warned->jobs[0].end_s < plain->jobs[0].end_s);
	// An idle node marked suspect: a 1-node job arriving then is placed off
	// it by loom (suspect nodes last); first-fit, which knows nothing of
	// health, takes it, and the job dies with the node.
	Failure g;
	g.t = 3 * 3600;
	g.warn_t = 2 * 3600;
	g.node = c.find_node("n00003");
	g.cause = gpu;
	Job one = job(3, 2 * 3600 + 60, 1, 8, 7200);
	Job hold = job(4, 0, 2, 8, 10 * 3600); // n00001-n00002 busy: n00003 and n00004 are left
	auto loom_run = simulate(c, {hold, one}, {g}, cfg);
	cfg.placer = "firstfit";
	auto ff_run = simulate(c, {hold, one}, {g}, cfg);
	ck_assert(loom_run.has_value() && ff_run.has_value());
	ck_assert_str_eq(loom_run->jobs[1].first_nodes.c_str(), "n00004");
	ck_assert_int_eq(loom_run->summary.job_failures, 0);
	ck_assert_str_eq(ff_run->jobs[1].first_nodes.c_str(), "n00003");
	ck_assert_int_eq(ff_run->summary.job_failures, 1);
}
END_TEST

// The spare pool (leaf:1 on two leaves of four: n00004 and n00008). Long
// jobs never get spares; a failed node is replaced by its leaf's spare
// replace_s after detection instead of the queue's requeue; a job whose
// node turns suspect moves to a spare once its checkpoint is committed, and
// the node then fails under nobody.
START_TEST(spares_replace_a_failed_node_and_take_a_moving_job)
{
	topo::Cluster c = make("gpus=64 fabric=fat nodes_per_leaf=4");
	FailureModel m = default_failure_model();
	uint32_t gpu = 0;
	for (uint32_t k = 0; k < m.causes.size(); k++)
		if (m.causes[k].name == "gpu")
			gpu = k;
	RunConfig cfg;
	cfg.failures = m;
	cfg.ckpt.interval_s = 3600;
	auto spec = place::parse_spares("leaf:1");
	ck_assert(spec.has_value());
	Job a = job(1, 0, 3, 8, 10 * 3600, true), b = job(2, 0, 3, 8, 10 * 3600, true);
	Job shorty = job(3, 60, 1, 8, 600), longer = job(4, 60, 1, 8, 600);
	shorty.limit_s = 1800;
	longer.limit_s = 7200;
	Failure f;
	f.t = 5 * 3600 + 1800;
	f.node = c.find_node("n00002");
	f.cause = gpu;
	RunConfig plain = cfg;
	auto without = simulate(c, {a, b}, {f}, plain);
	cfg.spares = *spec;
	auto with = simulate(c, {a, b, shorty, longer}, {f}, cfg);
	ck_assert(without.has_value() && with.has_value());
	const JobResult &ja = with->jobs[0];
	ck_assert_str_eq(ja.first_nodes.c_str(), "n[00001-00003]");
	ck_assert_str_eq(with->jobs[1].first_nodes.c_str(), "n[00005-00007]");
	// The 30-minute job borrows a spare at once; the 2-hour one waits for a
	// node that is nobody's spare.
	ck_assert_msg(with->jobs[2].first_nodes == "n00004" || with->jobs[2].first_nodes == "n00008", "%s",
		      with->jobs[2].first_nodes.c_str());
	ck_assert_int_eq(with->jobs[2].first_start_s, 60);
	ck_assert_msg(with->jobs[3].first_start_s >= 10 * 3600, "the 2-hour job started at %lld on %s",
		      static_cast<long long>(with->jobs[3].first_start_s), with->jobs[3].first_nodes.c_str());
	// n00002 fails: job 1 is back on n00001, n00003 and the spare n00004
	// replace_s (10 s) after the failure, where the queue's requeue waits
	// requeue_delay (121 s): it ends 111 s sooner.
	ck_assert_int_eq(with->summary.replacements, 1);
	ck_assert_int_eq(with->summary.spare_misses, 0);
	ck_assert(std::fabs(with->summary.replace_wait_mean_s - 10) < 1e-9);
	ck_assert_int_eq(ja.restarts, 1);
	ck_assert_int_eq(without->jobs[0].end_s - ja.end_s, 121 - 10);
	// A warning an hour ahead on n00006, under job 2, with migration on: it
	// checkpoints at the mark and moves to leaf2's spare; the failure finds
	// nobody there.
	Failure g;
	g.t = 5 * 3600;
	g.warn_t = 4 * 3600;
	g.node = c.find_node("n00006");
	g.cause = gpu;
	cfg.migrate = true;
	auto moved = simulate(c, {a, b}, {g}, cfg);
	ck_assert(moved.has_value());
	ck_assert_int_eq(moved->summary.migrations, 1);
	ck_assert_int_eq(moved->summary.migrations_to_spares, 1);
	ck_assert_int_eq(moved->summary.job_failures, 0);
	ck_assert_int_eq(moved->jobs[1].restarts, 1);
	// Lost on the first run: its wall time less the work it committed, that
	// is the three hourly checkpoint writes and the one at the mark (60 s
	// each), on 24 GPUs; nothing computed is thrown away.
	ck_assert_msg(std::fabs(moved->jobs[1].lost_gpu_s - 24.0 * (3 * 60 + 60)) < 24.0 * 15, "%.0f GPU-s lost",
		      moved->jobs[1].lost_gpu_s);
	cfg.migrate = false;
	auto stayed = simulate(c, {a, b}, {g}, cfg);
	ck_assert(stayed.has_value());
	ck_assert_int_eq(stayed->summary.job_failures, 1);
	ck_assert(stayed->jobs[1].lost_gpu_s > moved->jobs[1].lost_gpu_s);
}
END_TEST

TCase *sim_failure_tests()
{
	TCase *t = tcase_create("failures");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, failure_outcomes);
	tcase_add_test(t, failure_draws);
	tcase_add_test(t, failure_model_file);
	tcase_add_test(t, ettr_agrees_with_daly);
	tcase_add_test(t, warning_saves_work_and_steers_placement);
	tcase_add_test(t, spares_replace_a_failed_node_and_take_a_moving_job);
	return t;
}
