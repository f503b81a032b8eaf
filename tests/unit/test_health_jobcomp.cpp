// Unit tests for jobcomp/health's decisions without Slurm: a fake Slurm
// records drains and requeues. Job logs from tests/health/joblogs. The suite,
// with the worker (test_health_jobcomp_worker.cpp) and the spares
// (test_health_jobcomp_spares.cpp).
#include "lib/ckpt/options.hpp"
#include "lib/exchange/ckpt_job_env.hpp"
#include "lib/exchange/failure_stats.hpp"
#include "lib/health/jobcomp.hpp"
#include "lib/health/jobcomp_worker.hpp"
#include "lib/util/json.hpp"

#include <string>
#include <vector>

#include "tests/unit/jobcomp_fixture.hpp"

using namespace loom;
using namespace loom::health;
using namespace loom::health::testing;
using namespace loom::exchange;

START_TEST(options_fail_closed)
{
	auto o = parse_jobcomp_options("restart_budget=2 max_drains=10 drain_window=30m", "JobCompLoc");
	ck_assert(o && o->restart_budget == 2 && o->max_drains == 10 && o->drain_window == 1800);
	auto bad = parse_jobcomp_options("max_drain=10", "JobCompLoc");
	ck_assert(!bad);
	ck_assert_msg(bad.error().str().find("unknown key 'max_drain'") != std::string::npos, "%s",
		      bad.error().str().c_str());
	ck_assert(!parse_jobcomp_options("restart_budget=-1", "JobCompLoc"));
	auto rel = parse_jobcomp_options("stats_publish=shared/stats.json", "JobCompParams");
	ck_assert(!rel);
	ck_assert_msg(rel.error().str().find("stats_publish='shared/stats.json': expected an absolute path") !=
			      std::string::npos,
		      "%s", rel.error().str().c_str());
	auto commas = parse_jobcomp_options("max_drains=7,stats_publish=/shared/s.json", "JobCompParams");
	ck_assert_msg(commas.has_value(), "%s", commas ? "" : commas.error().str().c_str());
	ck_assert_int_eq(commas->max_drains, 7);
	ck_assert_sstr_eq(commas->stats_publish.c_str(), "/shared/s.json");
}
END_TEST

START_TEST(gpu_fault_drains_culprit_and_requeues_checkpointed)
{
	FakeSlurm slurm;
	JobcompOptions opt;
	DrainLimiter lim(opt.max_drains, opt.drain_window);
	FailureStats stats;
	JobRecord r = job(101, "gpu-ecc.out", {"n1", "n2", "n3", "n4"});
	r.end.checkpointed = true; // sbatch --ckpt (LOOM_CKPT=1 in the job control environment)
	r.end.requeue_allowed = true;
	JobOutcome out = handle_job(r, opt, slurm, lim, stats, 5000);
	ck_assert(out.cls.cls == FailureClass::gpu_fault);
	ck_assert_int_eq(slurm.drained.size(), 1);
	ck_assert_sstr_eq(slurm.drained[0], "n3"); // the NCCL WARN line's host
	ck_assert(slurm.nodes["n3"].reason.rfind("loom: jobcomp: gpu_fault: job 101: ", 0) == 0);
	ck_assert_int_eq(slurm.requeued.size(), 1);
	ck_assert_int_eq(slurm.requeued[0], 101);
	ck_assert_int_eq(stats.nodes["n3"].failures, 1);
	ck_assert(stats.nodes["n1"].exposure_s == 1000);
	// The same job, not checkpointed and not requeueable: drained, not requeued.
	FakeSlurm s2;
	handle_job(job(102, "gpu-ecc.out", {"n3"}), opt, s2, lim, stats, 5001);
	ck_assert_int_eq(s2.drained.size(), 1);
	ck_assert_int_eq(s2.requeued.size(), 0);
}
END_TEST

START_TEST(user_error_never_drains_nor_requeues)
{
	FakeSlurm slurm;
	JobcompOptions opt;
	DrainLimiter lim(opt.max_drains, opt.drain_window);
	FailureStats stats;
	for (const char *log : {"user-error.out", "device-assert.out", "cuda-oom.out", "no-such-file.out"}) {
		JobRecord r = job(200, log, {"n1", "n2"});
		r.end.checkpointed = r.end.requeue_allowed = true;
		JobOutcome out = handle_job(r, opt, slurm, lim, stats, 6000);
		ck_assert(!is_infrastructure(out.cls.cls));
	}
	ck_assert(slurm.drained.empty());
	ck_assert(slurm.requeued.empty());
	// A job that succeeded: nothing at all, not even a node query.
	JobOutcome ok_out = handle_job(job(201, "gpu-ecc.out", {"n1"}, 0), opt, slurm, lim, stats, 6001);
	ck_assert(ok_out.cls.cls == FailureClass::none);
	ck_assert(slurm.drained.empty());
}
END_TEST

START_TEST(drain_cap_holds_and_budget)
{
	FakeSlurm slurm;
	JobcompOptions opt;
	opt.max_drains = 2;
	opt.drain_window = 3600;
	DrainLimiter lim(opt.max_drains, opt.drain_window);
	FailureStats stats;
	// Five nodes go down at once under five jobs: two drains, three logged only.
	int capped = 0;
	for (int i = 1; i <= 5; i++) {
		std::string n = "n" + std::to_string(i);
		JobRecord r = job(300 + i, "user-error.out", {n});
		r.end.state = "NODE_FAIL";
		slurm.nodes[n] = slurm_node(n, "DOWN*", "Not responding");
		capped += static_cast<int>(handle_job(r, opt, slurm, lim, stats, 7000 + i).capped.size());
	}
	ck_assert_int_eq(slurm.drained.size(), 2);
	ck_assert_int_eq(capped, 3);
	// An hour later the window has room again.
	slurm.nodes["n9"] = slurm_node("n9", "DOWN*", "Not responding");
	JobRecord late = job(399, "user-error.out", {"n9"});
	late.end.state = "NODE_FAIL";
	handle_job(late, opt, slurm, lim, stats, 7002 + 3600);
	ck_assert_int_eq(slurm.drained.size(), 3);
	// Restart budget: the third restart of a checkpointed job is the last.
	JobRecord r = job(400, "nccl-timeout.out", {"n1", "n2"});
	r.end.checkpointed = r.end.requeue_allowed = true;
	r.end.restart_count = 2;
	ck_assert(handle_job(r, opt, slurm, lim, stats, 9000).requeued);
	r.end.restart_count = 3;
	ck_assert(!handle_job(r, opt, slurm, lim, stats, 9001).requeued);
	// Slurm requeued it already (NODE_FAIL with JobRequeue): not twice.
	r.end.restart_count = 0;
	r.already_requeued = true;
	ck_assert(!handle_job(r, opt, slurm, lim, stats, 9002).requeued);
}
END_TEST

START_TEST(ckpt_job_carries_its_budget)
{
	// What spank_ckpt sets in sbatch is what jobcomp/health reads back.
	ckpt::JobOptions o;
	o.enabled = true;
	o.max_restarts = 1;
	std::vector<std::string> env = {"SLURM_SPANK_x=y"};
	for (const auto &[k, v] : exchange::job_control_env(ckpt::job_request(o)))
		env.push_back(k + "=" + v);
	exchange::CkptRequest req = exchange::ckpt_request_from_env(env);
	ck_assert(req.enabled);
	ck_assert_int_eq(req.max_restarts, 1);
	ck_assert(!exchange::ckpt_request_from_env({"LOOM_CKPT=0", "LOOM_CKPT_MAX_RESTARTS=x9"}).enabled);
	ck_assert_int_eq(exchange::ckpt_request_from_env({"LOOM_CKPT_MAX_RESTARTS=x9"}).max_restarts, -1);
	ckpt::JobOptions off;
	ck_assert(exchange::job_control_env(ckpt::job_request(off)).empty());
	// A --ckpt job with --ckpt-max-restarts=1, jobcomp's restart_budget 3:
	// requeued once, on the job's budget, then not.
	FakeSlurm slurm;
	JobcompOptions opt;
	opt.restart_budget = 3;
	DrainLimiter lim(4, 3600);
	FailureStats stats;
	JobRecord r = job(501, "nccl-timeout.out", {"n1", "n2"});
	r.end.checkpointed = req.enabled;
	r.ckpt_max_restarts = req.max_restarts;
	r.end.requeue_allowed = true;
	JobOutcome first = handle_job(r, opt, slurm, lim, stats, 100);
	ck_assert(first.requeued);
	ck_assert_msg(first.decision.why == "requeue (restart 1 of 1) (the job's --ckpt-max-restarts)", "%s",
		      first.decision.why.c_str());
	ck_assert(slurm.drained.empty()); // a NCCL timeout names no culprit
	r.end.restart_count = 1;
	JobOutcome second = handle_job(r, opt, slurm, lim, stats, 200);
	ck_assert(!second.requeued);
	ck_assert(second.decision.why.find("restart budget spent (1 of 1)") == 0);
	// Not checkpointed: the site's budget.
	JobRecord plain = job(502, "nccl-timeout.out", {"n1", "n2"});
	plain.end.requeue_allowed = true;
	plain.end.restart_count = 1;
	JobOutcome p = handle_job(plain, opt, slurm, lim, stats, 300);
	ck_assert(p.requeued);
	ck_assert(p.decision.why.find("(restart_budget)") != std::string::npos);
	// Checkpointed, but --no-requeue: Slurm would refuse; not tried.
	r.end.restart_count = 0;
	r.end.requeue_allowed = false;
	JobOutcome nr = handle_job(r, opt, slurm, lim, stats, 400);
	ck_assert(!nr.requeued);
	ck_assert(nr.decision.why.find("may not be requeued") != std::string::npos);
	ck_assert_int_eq(slurm.requeued.size(), 2);
	// The backlog keeps the budget, and the AdminComment to merge into.
	r.admin_comment = "loom ckpt: /ckpt/alice/501: step 7, 1.0 KiB, committed 2026-12-06T10:00:00";
	auto parsed = json_parse(job_record_json(r), "t");
	ck_assert(parsed.has_value());
	auto back = job_record_from_json(parsed->get(), "t");
	ck_assert(back.has_value());
	ck_assert_int_eq(back->ckpt_max_restarts, 1);
	ck_assert_str_eq(back->admin_comment.c_str(), r.admin_comment.c_str());
}
END_TEST

START_TEST(drains_only_what_is_loom_to_drain)
{
	// The culprit of a GPU fault, in each state scontrol may report it in.
	struct Case {
		const char *state, *reason;
		bool drained;
	} cases[] = {
		{"ALLOCATED", "", true},
		{"DOWN*", "Not responding", true},              // Slurm's own: drained, kept out when slurmd returns
		{"IDLE+DRAIN", "admin: replacing DIMM", false}, // someone else's drain
		{"DOWN", "admin: PSU swap", false},             // someone else's down
		{"MIXED+DRAIN+REBOOT_REQUESTED", "loom: reboot", false},
		{"IDLE+POWERED_DOWN", "", false},
	};
	uint32_t id = 800;
	for (const auto &c : cases) {
		FakeSlurm slurm;
		slurm.nodes["n3"] = slurm_node("n3", c.state, c.reason);
		JobcompOptions opt;
		DrainLimiter lim(opt.max_drains, opt.drain_window);
		FailureStats stats;
		JobOutcome o = handle_job(job(id++, "gpu-ecc.out", {"n3"}), opt, slurm, lim, stats, 5000);
		ck_assert_msg(o.drained.empty() != c.drained, "%s (%s): drained %zu", c.state, c.reason,
			      o.drained.size());
	}
	// Node states unknown (scontrol failed): nothing is drained on a guess.
	struct Blind : FakeSlurm {
		expected<std::map<std::string, SlurmNode>> show_nodes(const std::vector<std::string> &) override
		{
			return unexpected("scontrol show node", "Unable to contact slurm controller");
		}
	} blind;
	JobcompOptions opt;
	DrainLimiter lim(opt.max_drains, opt.drain_window);
	FailureStats stats;
	JobOutcome o = handle_job(job(900, "gpu-ecc.out", {"n3"}), opt, blind, lim, stats, 5000);
	ck_assert_int_eq(o.drained.size(), 0);
	ck_assert_int_eq(blind.drained.size(), 0);
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("health_jobcomp");
	TCase *tc = tcase_create("jobcomp");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, options_fail_closed);
	tcase_add_test(tc, gpu_fault_drains_culprit_and_requeues_checkpointed);
	tcase_add_test(tc, user_error_never_drains_nor_requeues);
	tcase_add_test(tc, drain_cap_holds_and_budget);
	tcase_add_test(tc, ckpt_job_carries_its_budget);
	tcase_add_test(tc, drains_only_what_is_loom_to_drain);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, jobcomp_worker_tests());
	suite_add_tcase(s, jobcomp_spare_tests());
	return s;
}

LOOM_CHECK_MAIN(make_suite)
