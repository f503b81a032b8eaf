// Unit tests for the checkpoint interval policy (Young/Daly against Daly's
// published vectors), the time-limit margin, the job MTBF from failure
// statistics, and the coordinator's decisions.
#include "lib/ckpt/coordinator.hpp"
#include "lib/ckpt/policy.hpp"
#include "lib/exchange/failure_stats.hpp"

#include <cmath>

// Check defines a fail() macro: include it after the C++ library headers.
#include "tests/unit/check_main.hpp"

using namespace loom;
using namespace loom::ckpt;

START_TEST(daly_published_vectors)
{
	// Daly (2006): C = 5 min; M = 24 h -> 117 min, 6 h -> 57 min, 15 min -> 9.1 min.
	ck_assert_int_eq(std::lround(daly_interval(300, 24 * 3600) / 60), 117);
	ck_assert_int_eq(std::lround(daly_interval(300, 6 * 3600) / 60), 57);
	ck_assert_int_eq(std::lround(daly_interval(300, 15 * 60) / 6), 91); // 9.1 min
	// Young: sqrt(2CM); C = 5 min, M = 24 h -> 120 min exactly.
	ck_assert(std::fabs(young_interval(300, 86400) - 7200) < 1e-6);
	// C >= 2M: the interval is M.
	ck_assert(daly_interval(1000, 400) == 400);
}
END_TEST

START_TEST(auto_interval_bounds)
{
	IntervalBounds b{600, 3600};
	ck_assert_int_eq(auto_interval(300, 86400, b), 3600); // 117 min clamped to 1 h
	ck_assert_int_eq(auto_interval(300, 900, b), 600);    // 9.1 min raised to 10 min
	ck_assert_int_eq(auto_interval(30, 86400, {60, 86400}), std::lround(daly_interval(30, 86400)));
	ck_assert_int_eq(auto_interval(0, 86400, b), 3600); // no measurement: the longest
	ck_assert_int_eq(auto_interval(NAN, 86400, b), 3600);
}
END_TEST

START_TEST(time_limit_margin_from_measured_write)
{
	ck_assert_int_eq(time_limit_margin(0, 120), 120);
	ck_assert_int_eq(time_limit_margin(30, 20), 70); // 2 x 30 s + 10 s
	ck_assert_int_eq(time_limit_margin(30, 300), 300);
}
END_TEST

static double mtbf_of(const exchange::NodeStats &n, double prior)
{
	return exchange::mtbf_estimate(n.exposure_s, n.failures, prior);
}

START_TEST(failure_stats_and_job_mtbf)
{
	// The file as jobcomp/health writes it.
	exchange::FailureStats h;
	h.updated = 1700000000;
	h.nodes["n1"].exposure_s = 150000; // 2 failures: (150000 + 30000) / 3 = 60000
	h.nodes["n1"].failures = 2;
	h.nodes["n1"].gpu_class = "h100";
	h.nodes["n2"].exposure_s = 90000; // no failure: (90000 + 30000) / 1 = 120000
	h.nodes["n2"].gpu_class = "h100";
	h.nodes["n4"].failures = 1; // a failure before any exposure: 30000 / 2 = 15000, never 0
	h.gpu_classes["h100"].exposure_s = 240000;
	h.gpu_classes["h100"].failures = 3;
	auto s = exchange::parse_failure_stats(exchange::failure_stats_json(h), "stats.json");
	ck_assert_msg(s.has_value(), "%s", s ? "" : s.error().str().c_str());
	const double site = 30000;
	ck_assert(std::fabs(mtbf_of(s->nodes.at("n1"), site) - 60000) < 1e-6);
	ck_assert(std::fabs(mtbf_of(s->nodes.at("n2"), site) - 120000) < 1e-6);
	ck_assert(std::fabs(mtbf_of(s->nodes.at("n4"), site) - 15000) < 1e-6);
	// n1, n2, and n3 (no history: the site's 30000 s): 1 / (1/60000 + 1/120000 + 1/30000) = 17142.857 s.
	ck_assert(std::fabs(exchange::job_mtbf(*s, {"n1", "n2", "n3"}, site) - 120000.0 / 7) < 1e-6);
	exchange::FailureStats empty;
	ck_assert(std::fabs(exchange::job_mtbf(empty, {"a", "b", "c", "d"}, 86400) - 21600) < 1e-6);
	ck_assert(std::fabs(exchange::job_mtbf(empty, {}, 86400) - 86400) < 1e-6);
	// Another shape or version is refused, naming the file and the field.
	auto bad = exchange::parse_failure_stats(
		R"({"version":1,"updated":0,"nodes":{"n1":{"failures":-1}},"gpu_classes":{}})", "f.json");
	ck_assert(!bad.has_value());
	ck_assert_msg(bad.error().str().find("f.json") != std::string::npos, "%s", bad.error().str().c_str());
	ck_assert(!exchange::parse_failure_stats(R"({"version":2,"updated":0,"nodes":{},"gpu_classes":{}})", "f")
			   .has_value());
	ck_assert(!exchange::parse_failure_stats(R"({"format":"loom-failure-stats/1","nodes":{}})", "f").has_value());
}
END_TEST

START_TEST(coordinator_interval_and_time_limit)
{
	CoordinatorPlan p;
	p.interval_auto = false;
	p.interval_s = 100;
	p.margin_min_s = 30;
	CoordinatorLogic c(p, 1000);
	Observation o;
	o.now = 1050;
	o.end_time = 1400;
	ck_assert(c.next(o).signal == Ask::none);
	o.now = 1100;
	ck_assert(c.next(o).signal == Ask::interval);
	o.now = 1102;
	ck_assert(c.next(o).signal == Ask::none); // just asked
	// The application committed at 1150 (write took 20 s): the next one is due at 1250.
	o.newest_step = 10, o.newest_created = 1150, o.newest_write_s = 20;
	o.now = 1240;
	ck_assert(c.next(o).signal == Ask::none);
	o.now = 1250;
	ck_assert(c.next(o).signal == Ask::interval);
	// Margin = 2 x 20 + 10 = 50 s before the end at 1400.
	o.now = 1345;
	ck_assert(c.next(o).signal == Ask::none);
	o.now = 1350;
	Decision d = c.next(o);
	ck_assert(d.signal == Ask::time_limit);
	ck_assert(!d.requeue);
	o.now = 1355;
	d = c.next(o);
	ck_assert(!d.requeue && d.signal == Ask::none); // nothing new committed yet
	// Not answered 15 s after: asked again (a program that started after the
	// first ask took it as seen), then not before another 15 s.
	o.now = 1365;
	d = c.next(o);
	ck_assert(d.signal == Ask::time_limit && !d.requeue);
	ck_assert_msg(d.why.find("asking again") != std::string::npos, "%s", d.why.c_str());
	o.now = 1366;
	ck_assert(c.next(o).signal == Ask::none);
	o.now = 1370, o.newest_step = 11, o.newest_created = 1368;
	d = c.next(o);
	ck_assert(d.requeue);
	o.now = 1372;
	d = c.next(o);
	ck_assert(!d.requeue && d.signal == Ask::none); // once
}
END_TEST

START_TEST(coordinator_no_requeue_without_budget_and_suspect_flag)
{
	CoordinatorPlan p;
	p.interval_auto = true;
	p.bounds = {60, 3600};
	p.mtbf_s = 86400;
	p.cost_default_s = 5;
	p.margin_min_s = 10;
	p.may_requeue = false;
	p.reask_s = 3;
	CoordinatorLogic c(p, 0);
	Observation o;
	o.now = 1;
	o.suspect_mtime = -5; // flag older than the job: not acted on
	o.suspect_mtime = 0;
	ck_assert(c.next(o).signal == Ask::none);
	ck_assert_int_eq(c.interval(), auto_interval(5, 86400, p.bounds));
	o.now = 2, o.suspect_mtime = 1.5;
	ck_assert(c.next(o).signal == Ask::suspect);
	o.now = 4;
	ck_assert(c.next(o).signal == Ask::none); // the same flag asks once
	o.now = 5, o.suspect_mtime = 4.5;         // touched again
	ck_assert(c.next(o).signal == Ask::suspect);
	o.end_time = 20, o.now = 11;
	ck_assert(c.next(o).signal == Ask::time_limit);
	o.now = 12, o.newest_step = 3, o.newest_created = 11.5;
	ck_assert(!c.next(o).requeue); // the budget is used up
	o.now = 19;
	ck_assert(c.next(o).signal == Ask::none); // answered: not asked again
}
END_TEST

// The seed's case: a NIC predicted to fail 30 s ahead under a job with an
// hour left, checkpointing every 10 minutes.
START_TEST(coordinator_moves_off_a_node_predicted_to_fail)
{
	CoordinatorPlan p;
	p.interval_auto = false;
	p.interval_s = 600;
	p.cost_default_s = 5;
	p.margin_min_s = 10;
	CoordinatorLogic c(p, 1000);
	Observation o;
	o.now = 1100, o.end_time = 4700, o.newest_step = 50, o.newest_created = 1050;
	ck_assert(c.next(o).signal == Ask::none);
	// The mark (eta 30 s): a checkpoint first, no requeue yet.
	o.now = 1200, o.suspect_mtime = 1199, o.suspect_eta_s = 30;
	Decision d = c.next(o);
	ck_assert(d.signal == Ask::suspect && !d.requeue);
	o.now = 1202;
	ck_assert(!c.next(o).requeue); // not committed yet
	// Committed 3 s after the ask: move now. Moving loses 1 s + a 5 s
	// restart; staying loses the 27 s to the failure and a restart.
	o.now = 1206, o.newest_step = 61, o.newest_created = 1205;
	d = c.next(o);
	ck_assert_msg(d.requeue && d.migrate, "%s", d.note.c_str());
	ck_assert_msg(d.why.find("failure predicted in 23 s") != std::string::npos, "%s", d.why.c_str());
	o.now = 1210;
	ck_assert(!c.next(o).requeue); // once

	// The job ends before the predicted failure: it stays.
	CoordinatorLogic late(p, 1000);
	o = Observation{};
	o.now = 1100, o.end_time = 1230, o.newest_step = 50, o.newest_created = 1050;
	(void)late.next(o);
	o.now = 1200, o.suspect_mtime = 1199, o.suspect_eta_s = 120;
	(void)late.next(o);
	o.now = 1206, o.newest_step = 61, o.newest_created = 1205;
	d = late.next(o);
	ck_assert(!d.requeue && d.note.find("not moving off the suspect node") != std::string::npos);

	// It moved 10 minutes ago (migrate_window 1 h), or migrate=no: it stays.
	CoordinatorLogic again(p, 1000);
	o = Observation{};
	o.now = 1100, o.end_time = 4700, o.newest_step = 50, o.newest_created = 1050, o.last_migration = 600;
	(void)again.next(o);
	o.now = 1200, o.suspect_mtime = 1199, o.suspect_eta_s = 30;
	(void)again.next(o);
	o.now = 1206, o.newest_step = 61, o.newest_created = 1205;
	d = again.next(o);
	ck_assert(!d.requeue && d.note.find("moved 606 s ago") != std::string::npos);
	p.migrate = false;
	CoordinatorLogic off(p, 1000);
	o.last_migration = 0;
	o.now = 1100, o.newest_step = 50, o.newest_created = 1050, o.suspect_mtime = 0;
	(void)off.next(o);
	o.now = 1200, o.suspect_mtime = 1199;
	(void)off.next(o);
	o.now = 1206, o.newest_step = 61, o.newest_created = 1205;
	d = off.next(o);
	ck_assert(!d.requeue && d.note == "not moving off the suspect node: migrate=no");
}
END_TEST

START_TEST(migration_cost_compares_work_lost)
{
	// A fresh checkpoint, failure in 30 s: move (6 < 35).
	MigrationCost c = migration_cost(1, 30, 3600, 600, 5);
	ck_assert(c.worth() && c.move == 6 && c.stay == 36);
	// The job ends in 20 s, before the failure: staying loses nothing.
	ck_assert(!migration_cost(1, 30, 20, 600, 5).worth());
	// The newest checkpoint is 500 s old and the next one comes in 100 s,
	// before a failure 300 s away: staying loses at most an interval, moving the 500 s.
	c = migration_cost(500, 300, 0, 600, 5);
	ck_assert(c.stay == 605 && c.move == 505 && c.worth());
	// Unknown failure time: half an interval away.
	c = migration_cost(1, 0, 0, 600, 5);
	ck_assert(c.stay == 306 && c.worth());
}
END_TEST

START_TEST(coordinator_thread_stops_promptly)
{
	Coordinator c;
	int observed = 0, signals = 0;
	CoordinatorPlan p;
	p.interval_auto = false;
	p.interval_s = 0;
	CoordinatorHooks h;
	h.observe = [&] {
		observed++;
		Observation o;
		o.now = 1e9 + observed;
		return o;
	};
	h.signal = [&](Ask, const std::string &) { signals++; };
	h.requeue = [](const std::string &, bool) {};
	c.start(p, h, 0, 600);
	while (observed == 0)
		::usleep(1000);
	auto t0 = std::chrono::steady_clock::now();
	c.stop();
	double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	ck_assert_msg(waited < 1.0, "stop took %.2f s with a 600 s poll period", waited);
	ck_assert(!c.running());
	ck_assert_int_eq(signals, 1);
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("ckpt_policy");
	TCase *tc = tcase_create("policy");
	tcase_add_test(tc, daly_published_vectors);
	tcase_add_test(tc, auto_interval_bounds);
	tcase_add_test(tc, time_limit_margin_from_measured_write);
	tcase_add_test(tc, failure_stats_and_job_mtbf);
	tcase_add_test(tc, coordinator_interval_and_time_limit);
	tcase_add_test(tc, coordinator_no_requeue_without_budget_and_suspect_flag);
	tcase_add_test(tc, coordinator_thread_stops_promptly);
	tcase_add_test(tc, coordinator_moves_off_a_node_predicted_to_fail);
	tcase_add_test(tc, migration_cost_compares_work_lost);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
