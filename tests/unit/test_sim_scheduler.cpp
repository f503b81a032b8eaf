// Unit tests for loom sim's scheduler loop: one job on an idle tree,
// backfill behind the head's reservation, the same failures for every
// placer, contention and tiers in a run.
#include "tests/unit/check_main.hpp"
#include "tests/unit/sim_fixture.hpp"

#include "lib/place/engine.hpp"
#include "lib/sim/jobs.hpp"
#include "lib/sim/report.hpp"
#include "lib/sim/simulator.hpp"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

using namespace loom;
using namespace loom::sim;

// Tiers in the simulator: on two classes (a100 1x at 1.00, h100 2x at 1.60:
// 0.80 per work), a value job goes to h100 through the engine, to a100 by
// hand (the cheapest per hour), and pays its GPUs' price for its run: 8 GPUs
// x 1.60 x 1 h (2 h of work at 2x) = 12.80.
START_TEST(tiers_in_the_simulator)
{
	topo::Cluster c = make("gpus=128 fabric=fat nodes_per_leaf=4 leaves_per_pod=4 classes=a100:50,h100:50");
	place::TierTable t;
	{
		ConfigSchema schema;
		std::vector<std::string> classes;
		schema.list("gpu_classes", &classes);
		place::add_tier_keys(schema, &t);
		ck_assert(schema.parse_text("gpu_classes=a100,h100\ngpu_class.a100=throughput:1,price:1.00\n"
					    "gpu_class.h100=throughput:2,price:1.60\n",
					    "loom-topo.conf")
				  .has_value());
		ck_assert(place::check_tiers(t, classes, "loom-topo.conf").has_value());
	}
	std::vector<Job> jobs = {job(1, 100, 1, 8, 7200)};
	jobs[0].need.tier = "value";
	auto run = [&](const char *mode) {
		RunConfig cfg = quiet("loom");
		cfg.weights.tiers = std::make_shared<const place::TierTable>(t);
		cfg.cost.class_speed = {{"a100", 1}, {"h100", 2}};
		cfg.tier_mode = mode;
		auto r = simulate(c, jobs, {}, cfg);
		ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
		return r->jobs[0];
	};
	JobResult e = run("engine");
	ck_assert_sstr_eq(e.gpu_class, "h100");
	ck_assert_int_eq(e.end_s - e.first_start_s, 3600);
	ck_assert_msg(std::fabs(e.cost - 12.8) < 1e-9, "cost %.3f", e.cost);
	JobResult h = run("by-hand");
	ck_assert_sstr_eq(h.gpu_class, "a100");
	ck_assert_int_eq(h.end_s - h.first_start_s, 7200);
	ck_assert_msg(std::fabs(h.cost - 16.0) < 1e-9, "cost %.3f", h.cost);
	ck_assert_sstr_eq(e.tier, "value");
}
END_TEST

// Contention in the simulator: leaves of 4 nodes 4:1 to the pod (3200 Gbit/s
// for 32 GPUs, a full leaf's share 100: a heavy step 0.6 + 0.4 x 4 = 2.2).
// Eight single-node jobs fill both leaves; one on each leaf ends at 100 s and
// a 2-node heavy job A starts across the two at 200 s: alone on the uplinks,
// 3200 / 8 = 400, step 1. Two more end at 300 s and B starts across them at
// 400 s, sharing the uplinks with A: 3200 / 16 = 200, step 1.4. Without the
// contention model both run at 2.2.
START_TEST(contention_in_the_simulator)
{
	topo::Cluster c = make("gpus=64 fabric=fat nodes_per_leaf=4 leaves_per_pod=2 leaf_oversub=4");
	std::vector<Job> jobs;
	for (uint32_t i = 0; i < 8; i++) {
		jobs.push_back(job(i + 1, i, 1, 8, 100000));
		jobs.back().limit_s = 200000;
	}
	for (uint32_t i : {0u, 4u})
		jobs[i].work_s = 100 - i;
	for (uint32_t i : {1u, 5u})
		jobs[i].work_s = 300 - i;
	jobs.push_back(job(9, 200, 2, 8, 3600));
	jobs.push_back(job(10, 400, 2, 8, 3600));
	jobs[8].comm = jobs[9].comm = place::Comm::heavy;
	auto run = [&](bool contention) {
		RunConfig cfg = quiet("loom");
		cfg.contention = contention;
		auto r = simulate(c, jobs, {}, cfg);
		ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
		return *r;
	};
	RunResult on = run(true), off = run(false);
	const JobResult &a = on.jobs[8], &b = on.jobs[9];
	ck_assert_int_eq(a.first_start_s, 200);
	ck_assert_int_eq(b.first_start_s, 400);
	ck_assert_int_eq(a.leaves, 2);
	ck_assert_int_eq(b.leaves, 2);
	ck_assert_msg(std::fabs(a.step_factor - 1) < 1e-9, "A %g", a.step_factor);
	ck_assert_msg(std::fabs(b.step_factor - 1.4) < 1e-9, "B %g", b.step_factor);
	ck_assert_int_eq(a.end_s - a.first_start_s, 3600);
	ck_assert_int_eq(b.end_s - b.first_start_s, 5040);
	ck_assert(std::fabs(off.jobs[8].step_factor - 2.2) < 1e-9 && std::fabs(off.jobs[9].step_factor - 2.2) < 1e-9);
}
END_TEST

START_TEST(run_one_job)
{
	// One 4-node job on an idle fat tree: it starts at once, runs its work
	// times the step factor of one leaf (1) and completes.
	topo::Cluster c = make("gpus=512 fabric=fat");
	std::vector<Job> jobs = {job(1, 100, 4, 8, 7200)};
	auto r = simulate(c, jobs, {}, quiet("loom"));
	ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
	const JobResult &j = r->jobs[0];
	ck_assert_str_eq(j.state.c_str(), "COMPLETED");
	ck_assert_int_eq(j.first_start_s, 100);
	ck_assert_int_eq(j.end_s, 100 + 7200);
	ck_assert_int_eq(j.leaves, 1);
	ck_assert(std::fabs(j.ettr() - 1) < 1e-9);
	ck_assert_int_eq(r->summary.decisions, 1);
}
END_TEST

START_TEST(backfill_respects_reservation)
{
	// 4 nodes of 8 GPUs. A: 3 nodes for 10 h. B (head, all 4 nodes) must
	// wait for A. C (1 node, limit 2 h) ends before A's limit: backfilled at
	// once. D (1 node, limit 40 h) would delay B: it waits for B.
	topo::Cluster c = make("gpus=32 fabric=fat nodes_per_leaf=4");
	Job a = job(1, 0, 3, 8, 36000), b = job(2, 10, 4, 8, 3600), cj = job(3, 20, 1, 8, 3600),
	    d = job(4, 30, 1, 8, 72000);
	a.limit_s = 36000;
	cj.limit_s = 7200;
	d.limit_s = 40 * 3600;
	auto r = simulate(c, {a, b, cj, d}, {}, quiet("loom"));
	ck_assert(r.has_value());
	ck_assert_int_eq(r->jobs[0].first_start_s, 0);
	ck_assert_msg(r->jobs[2].first_start_s < 120, "C started at %lld",
		      static_cast<long long>(r->jobs[2].first_start_s));
	ck_assert_int_eq(r->jobs[1].first_start_s, 36000); // B when A ends
	ck_assert_msg(r->jobs[3].first_start_s >= 36000 + 3600, "D started at %lld",
		      static_cast<long long>(r->jobs[3].first_start_s));
}
END_TEST

START_TEST(deterministic_same_failures_for_every_placer)
{
	topo::Cluster c = make("gpus=2304 fabric=nvl72");
	MixGen g;
	g.days = 2;
	g.large_min = 64;
	g.large_max = 256;
	auto jobs = generate_mix(g, 2304, 8);
	FailureModel m = default_failure_model();
	m.rate_per_1000_node_days = 50; // enough to see some in two days
	auto fails = draw_failures(m, c.nodes.size(), 2 * 86400, 3);
	ck_assert(!fails.empty());
	RunConfig cfg;
	cfg.failures = m;
	cfg.horizon_s = 2 * 86400;
	cfg.large_gpus = 64;
	auto one = simulate(c, jobs, fails, cfg);
	auto two = simulate(c, jobs, fails, cfg);
	ck_assert(one.has_value() && two.has_value());
	ck_assert(jobs_csv(*one) == jobs_csv(*two));
	ck_assert(timeline_csv(*one) == timeline_csv(*two));
	ck_assert(one->summary.job_failures > 0);
	for (const char *p : {"tree", "firstfit", "block"}) {
		cfg.placer = p;
		auto r = simulate(c, jobs, fails, cfg);
		ck_assert_msg(r.has_value(), "%s", p);
		ck_assert_int_eq(r->summary.jobs, one->summary.jobs);
		ck_assert_int_eq(r->summary.failures, one->summary.failures); // the same failures for every placer
	}
	// Every job that started got whole-gang nodes: no more GPUs busy than exist.
	for (const Sample &s : one->timeline)
		ck_assert(s.busy_gpus <= 2304 && s.busy_gpus >= 0);
}
END_TEST

TCase *sim_scheduler_tests()
{
	TCase *t = tcase_create("scheduler");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, run_one_job);
	tcase_add_test(t, contention_in_the_simulator);
	tcase_add_test(t, tiers_in_the_simulator);
	tcase_add_test(t, backfill_respects_reservation);
	tcase_add_test(t, deterministic_same_failures_for_every_placer);
	return t;
}
