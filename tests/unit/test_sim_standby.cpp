// loom sim: standby nodes inside the allocation (RunConfig::standby,
// lib/sim/sim_standby.cpp): a failed node replaced without the queue.
#include "lib/ckpt/standby.hpp"

#include <cmath>
#include <vector>

#include "tests/unit/check_main.hpp"
#include "tests/unit/sim_fixture.hpp"

using namespace loom;
using namespace loom::sim;

namespace {

uint32_t cause_named(const FailureModel &m, const std::string &name)
{
	for (uint32_t k = 0; k < m.causes.size(); k++)
		if (m.causes[k].name == name)
			return k;
	ck_abort_msg("no cause %s", name.c_str());
	return 0;
}

Failure gpu_fault(const topo::Cluster &c, const FailureModel &m, int64_t t, const char *node)
{
	Failure f;
	f.t = t;
	f.node = c.find_node(node);
	f.cause = cause_named(m, "gpu");
	return f;
}

RunConfig hourly_checkpoints()
{
	RunConfig cfg;
	cfg.failures = default_failure_model();
	cfg.ckpt.interval_s = 3600;
	cfg.standby_min_gpus = 8;
	return cfg;
}

} // namespace

// A 3-node --ckpt job with one standby: placed on 4 nodes of one leaf. Its
// second node's GPU falls off the bus at 5.5 h: the step is back on the
// other two and the standby in_alloc_s (15 s) after detection, where the
// requeue waits requeue_delay (121 s): the job ends 106 s sooner, never
// requeued, one restart. Until then the standby's 8 GPUs were held idle.
START_TEST(standby_replaces_a_failed_node_without_the_queue)
{
	topo::Cluster c = make("gpus=64 fabric=fat nodes_per_leaf=4");
	RunConfig cfg = hourly_checkpoints();
	Job a = job(1, 0, 3, 8, 10 * 3600, true);
	Failure f = gpu_fault(c, cfg.failures, 5 * 3600 + 1800, "n00002");
	auto queued = simulate(c, {a}, {f}, cfg);
	cfg.standby = 1;
	auto kept = simulate(c, {a}, {f}, cfg);
	ck_assert(queued.has_value() && kept.has_value());
	const JobResult &q = queued->jobs[0], &k = kept->jobs[0];
	ck_assert_str_eq(q.first_nodes.c_str(), "n[00001-00003]");
	ck_assert_str_eq(k.first_nodes.c_str(), "n[00001-00004]");
	ck_assert_str_eq(k.state.c_str(), "COMPLETED");
	ck_assert_int_eq(kept->summary.in_alloc_restarts, 1);
	ck_assert_int_eq(kept->summary.requeues, 0);
	ck_assert_int_eq(queued->summary.requeues, 1);
	ck_assert_int_eq(k.restarts, 1);
	ck_assert_int_eq(q.end_s - k.end_s, 121 - 15);
	ck_assert_msg(std::fabs(kept->summary.standby_gpu_h - 8 * 5.5) < 1e-6, "standby GPU-h %.3f",
		      kept->summary.standby_gpu_h);
	ck_assert_msg(k.ettr() > q.ettr(), "ETTR %.4f with the standby, %.4f without", k.ettr(), q.ettr());
}
END_TEST

// A standby that fails only leaves the job (the step was not on it); the
// next failure of one of the job's own nodes finds none left and takes the
// requeue, after which the job holds a new standby (its request is the same):
// 2 h of the first standby, then the second from the restart to the end.
START_TEST(standby_failure_leaves_the_job_running)
{
	topo::Cluster c = make("gpus=64 fabric=fat nodes_per_leaf=4");
	RunConfig cfg = hourly_checkpoints();
	cfg.standby = 1;
	Job a = job(1, 0, 3, 8, 10 * 3600, true);
	Failure s = gpu_fault(c, cfg.failures, 2 * 3600, "n00004");
	Failure f = gpu_fault(c, cfg.failures, 5 * 3600 + 1800, "n00002");
	auto r = simulate(c, {a}, {s, f}, cfg);
	ck_assert(r.has_value());
	ck_assert_int_eq(r->summary.failures, 2);
	ck_assert_int_eq(r->summary.job_failures, 1);
	ck_assert_int_eq(r->summary.in_alloc_restarts, 0);
	ck_assert_int_eq(r->summary.requeues, 1);
	ck_assert_int_eq(r->jobs[0].restarts, 1);
	ck_assert_str_eq(r->jobs[0].state.c_str(), "COMPLETED");
	double second_h = static_cast<double>(r->jobs[0].end_s - (5 * 3600 + 1800 + 121)) / 3600;
	ck_assert_msg(std::fabs(r->summary.standby_gpu_h - 8 * (2.0 + second_h)) < 1e-6, "standby GPU-h %.3f",
		      r->summary.standby_gpu_h);
}
END_TEST

// An NCCL watchdog timeout names no culprit (a hang): loom drains nothing,
// and the step starts again in place on the same four nodes 600 s (the
// watchdog) + 15 s after the hang; the standby is still there. Twelve such
// hangs, each after a checkpoint, are twelve restarts in place and no
// requeue: Slurm's restart count, which the restart budget (10) counts, is
// not touched.
START_TEST(hang_restarts_in_place_on_the_same_nodes)
{
	topo::Cluster c = make("gpus=64 fabric=fat nodes_per_leaf=4");
	RunConfig cfg = hourly_checkpoints();
	cfg.standby = 1;
	Job a = job(1, 0, 3, 8, 30 * 3600, true);
	std::vector<Failure> hangs;
	for (int h = 0; h < 12; h++) {
		Failure f = gpu_fault(c, cfg.failures, (2 * h + 2) * 3600 + 1800, "n00002");
		f.cause = cause_named(cfg.failures, "nccl");
		hangs.push_back(f);
	}
	auto r = simulate(c, {a}, {hangs.front()}, cfg);
	ck_assert(r.has_value());
	ck_assert_int_eq(r->summary.in_alloc_restarts, 1);
	ck_assert_int_eq(r->summary.requeues, 0);
	ck_assert_int_eq(r->summary.drains, 0);
	ck_assert_str_eq(r->jobs[0].state.c_str(), "COMPLETED");
	ck_assert_msg(std::fabs(r->summary.standby_gpu_h - 8.0 * static_cast<double>(r->jobs[0].end_s) / 3600) < 1e-6,
		      "standby GPU-h %.3f, job ended at %lld", r->summary.standby_gpu_h,
		      static_cast<long long>(r->jobs[0].end_s));
	// The job's own error (a Python exception) restarts in place too, once
	// it has made progress; striking again before a checkpoint commits, it
	// takes loom's usual path (held for its user: a requeue after
	// user_resubmit).
	Failure bug = hangs.front();
	bug.cause = cause_named(cfg.failures, "software");
	Failure again = bug;
	again.t = bug.t + 600;
	auto buggy = simulate(c, {a}, {bug, again}, cfg);
	ck_assert(buggy.has_value());
	ck_assert_int_eq(buggy->summary.in_alloc_restarts, 1);
	ck_assert_int_eq(buggy->summary.holds, 1);
	ck_assert_int_eq(buggy->summary.requeues, 1);
	auto many = simulate(c, {a}, hangs, cfg);
	ck_assert(many.has_value());
	ck_assert_int_eq(many->summary.in_alloc_restarts, 12);
	ck_assert_int_eq(many->summary.requeues, 0);
	ck_assert_int_eq(many->jobs[0].restarts, 12);
	ck_assert_str_eq(many->jobs[0].state.c_str(), "COMPLETED");
}
END_TEST

// standby=auto: a node fails once in 10 days (100 per 1,000 node-days); a
// 3-node job with a 20 h limit expects (3 + s) x 20 / 240 failures, and one
// standby covers them with p = e^-1/3 x 4/3 = 0.955. Jobs under
// standby_min_gpus and jobs without --ckpt hold none.
START_TEST(standby_auto_from_the_failure_rate)
{
	topo::Cluster c = make("gpus=64 fabric=fat nodes_per_leaf=4");
	RunConfig cfg = hourly_checkpoints();
	cfg.failures.rate_per_1000_node_days = 100;
	cfg.standby = -1;
	Job a = job(1, 0, 3, 8, 10 * 3600, true), small = job(2, 0, 1, 4, 600, true), plain = job(3, 0, 2, 8, 600);
	auto r = simulate(c, {a, small, plain}, {}, cfg); // the count only: no failure happens
	ck_assert(r.has_value());
	ck_assert_int_eq(ckpt::standby_count(3, 20 * 3600.0, 10 * 86400.0, 0.9, 64).nodes, 1);
	ck_assert_str_eq(r->jobs[0].first_nodes.c_str(), "n[00001-00004]");
	ck_assert_msg(r->jobs[1].first_nodes.find(',') == std::string::npos &&
			      r->jobs[1].first_nodes.find('[') == std::string::npos,
		      "%s", r->jobs[1].first_nodes.c_str());
	ck_assert_int_eq(r->summary.standby_gpu_h > 0, 1);
}
END_TEST

TCase *sim_standby_tests()
{
	TCase *t = tcase_create("sim_standby");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, standby_replaces_a_failed_node_without_the_queue);
	tcase_add_test(t, standby_failure_leaves_the_job_running);
	tcase_add_test(t, hang_restarts_in_place_on_the_same_nodes);
	tcase_add_test(t, standby_auto_from_the_failure_rate);
	return t;
}
