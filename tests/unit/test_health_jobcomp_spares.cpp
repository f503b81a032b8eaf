// Unit tests for jobcomp/health's spares: a failed node's job restarted on
// its leaf's spare in a reservation of its own, the normal requeue when no
// spare serves, and a job moved off a suspect node.
#include "lib/exchange/failure_stats.hpp"
#include "lib/health/jobcomp.hpp"
#include "lib/health/jobcomp_worker.hpp"
#include "lib/util/fs.hpp"

#include <string>
#include <vector>

#include "tests/unit/jobcomp_fixture.hpp"

using namespace loom;
using namespace loom::health;
using namespace loom::health::testing;
using namespace loom::exchange;

namespace {

// select/topo's pool file for n[1-4] (leaf1, spare n4) and n[5-8] (leaf2, spare n8).
std::string write_pool(const std::string &dir)
{
	std::string path = dir + "/loom-spares.json";
	std::string text =
		"{\"format\": \"loom-spares/1\", \"written\": 1764800000, \"lend_max_s\": 1800, \"domains\": ["
		"{\"kind\": \"leaf\", \"name\": \"leaf1\", \"nodes\": \"n[1-4]\", \"want\": 1, \"spares\": \"n4\"},"
		"{\"kind\": \"leaf\", \"name\": \"leaf2\", \"nodes\": \"n[5-8]\", \"want\": 1, \"spares\": \"n8\"}]}\n";
	ck_assert(write_file_atomic(path, text));
	return path;
}

} // namespace

START_TEST(infrastructure_failure_restarts_on_a_spare_of_its_leaf)
{
	std::string dir = temp_dir();
	JobcompOptions opt;
	opt.spare_file = write_pool(dir);
	DrainLimiter lim(opt.max_drains, opt.drain_window);
	FailureStats stats;
	FakeSlurm slurm;
	slurm.nodes["n4"] = slurm_node("n4", "IDLE");
	slurm.nodes["n8"] = slurm_node("n8", "IDLE");
	// gpu-ecc.out blames n3 (leaf1): leaf1's spare n4 takes its place, the
	// job keeps n1 and n2, in a reservation of its own, requeued held, moved
	// into it and released; no plain requeue.
	JobRecord r = job(101, "gpu-ecc.out", {"n1", "n2", "n3"});
	r.end.checkpointed = r.end.requeue_allowed = true;
	r.time_limit_s = 3600;
	// spank_ckpt's note and an older restart note: the first is kept, the second replaced.
	r.admin_comment = "loom: restarted on spares n9 -> n8 (leaf leaf2) in reservation loom_spare_101_0 | "
			  "loom ckpt: /ckpt/alice/101: step 7, 1.0 KiB, committed 2026-12-06T10:00:00";
	JobOutcome out = handle_job(r, opt, slurm, lim, stats, 5000);
	ck_assert(slurm.drained == std::vector<std::string>{"n3"});
	ck_assert_int_eq(slurm.requeued.size(), 0);
	ck_assert(out.requeued);
	ck_assert_sstr_eq(out.reservation.c_str(), "loom_spare_101_1");
	ck_assert_int_eq(slurm.calls.size(), 4);
	ck_assert_sstr_eq(slurm.calls[0].c_str(), "create loom_spare_101_1 n1,n2,n4 alice 4200");
	ck_assert_sstr_eq(slurm.calls[1].c_str(), "requeuehold 101");
	ck_assert_sstr_eq(slurm.calls[2].c_str(),
			  "update 101 ReservationName=loom_spare_101_1 AdminComment=loom: restarted on spares n3 -> n4 "
			  "(leaf leaf1) in reservation loom_spare_101_1 | "
			  "loom ckpt: /ckpt/alice/101: step 7, 1.0 KiB, committed 2026-12-06T10:00:00");
	ck_assert_sstr_eq(slurm.calls[3].c_str(), "release 101");
	// Slurm requeued it itself (a node set DOWN under a --requeue job): moved
	// into the reservation, neither requeued again nor held.
	FakeSlurm s2;
	s2.nodes["n4"] = slurm_node("n4", "IDLE");
	JobRecord down = job(102, "user-error.out", {"n2", "n3"});
	down.end.state = "NODE_FAIL";
	down.end.requeue_allowed = true;
	down.already_requeued = true;
	s2.nodes["n3"] = slurm_node("n3", "DOWN*", "Not responding");
	out = handle_job(down, opt, s2, lim, stats, 5001);
	ck_assert_int_eq(s2.requeued.size(), 0);
	ck_assert_int_eq(s2.calls.size(), 2);
	ck_assert_sstr_eq(s2.calls[0].c_str(), "create loom_spare_102_1 n2,n4 alice 0");
	ck_assert(s2.calls[1].rfind("update 102 ReservationName=loom_spare_102_1 ", 0) == 0);
	rm(dir);
}
END_TEST

START_TEST(without_a_spare_for_every_culprit_the_job_takes_the_normal_requeue)
{
	std::string dir = temp_dir();
	JobcompOptions opt;
	opt.spare_file = write_pool(dir);
	DrainLimiter lim(opt.max_drains, opt.drain_window);
	FailureStats stats;
	// Two nodes of leaf1 down together, one spare in leaf1: none is used.
	FakeSlurm slurm;
	slurm.nodes["n4"] = slurm_node("n4", "IDLE");
	slurm.nodes["n2"] = slurm_node("n2", "DOWN*", "Not responding");
	slurm.nodes["n3"] = slurm_node("n3", "DOWN*", "Not responding");
	JobRecord r = job(103, "user-error.out", {"n1", "n2", "n3"});
	r.end.state = "NODE_FAIL";
	r.end.requeue_allowed = true;
	JobOutcome out = handle_job(r, opt, slurm, lim, stats, 5000);
	ck_assert_int_eq(out.decision.drain.size(), 2);
	ck_assert(slurm.calls.empty());
	ck_assert(slurm.requeued == std::vector<uint32_t>{103});
	ck_assert_msg(out.no_spares == "no usable spare left in leaf leaf1 for n3", "%s", out.no_spares.c_str());
	// Slurm refuses the reservation: the normal requeue, nothing left behind.
	FakeSlurm s2;
	s2.nodes["n4"] = slurm_node("n4", "IDLE");
	s2.refuse_reservation = true;
	JobRecord one = job(104, "gpu-ecc.out", {"n1", "n3"});
	one.end.checkpointed = one.end.requeue_allowed = true;
	out = handle_job(one, opt, s2, lim, stats, 5001);
	ck_assert(s2.requeued == std::vector<uint32_t>{104});
	ck_assert(out.no_spares.rfind("reservation refused: ", 0) == 0);
	// spares=no, or no pool published: the normal requeue, silently.
	FakeSlurm s3;
	opt.spares = false;
	handle_job(one, opt, s3, lim, stats, 5002);
	ck_assert(s3.calls.empty() && s3.requeued.size() == 1);
	opt.spares = true;
	opt.spare_file = dir + "/none.json";
	out = handle_job(one, opt, s3, lim, stats, 5003);
	ck_assert(s3.calls.empty() && s3.requeued.size() == 2 && out.no_spares.empty());
	// A user's own error never gets a spare.
	opt.spare_file = dir + "/loom-spares.json";
	FakeSlurm s4;
	s4.nodes["n4"] = slurm_node("n4", "IDLE");
	JobRecord user = job(105, "user-error.out", {"n1", "n3"});
	user.end.checkpointed = user.end.requeue_allowed = true;
	handle_job(user, opt, s4, lim, stats, 5004);
	ck_assert(s4.calls.empty() && s4.requeued.empty());
	auto bad = parse_jobcomp_options("spare_file=spares.json", "JobCompParams");
	ck_assert(!bad &&
		  bad.error().str().find("spare_file='spares.json': expected an absolute path") != std::string::npos);
	rm(dir);
}
END_TEST

START_TEST(a_job_moved_off_a_suspect_node_gets_a_spare)
{
	std::string dir = temp_dir();
	JobcompOptions opt;
	opt.spare_file = write_pool(dir);
	DrainLimiter lim(opt.max_drains, opt.drain_window);
	FailureStats stats;
	FakeSlurm slurm;
	slurm.nodes["n4"] = slurm_node("n4", "IDLE");
	auto suspect = parse_show_node("NodeName=n1 Arch=x86_64\n   State=IDLE ThreadsPerCore=1\n"
				       "   Extra=loom:suspect:predict:ib0 symbol_error reaches 100 in about 1 min\n",
				       "n1");
	ck_assert(suspect.has_value() && !suspect->suspect_mark().empty());
	slurm.nodes["n1"] = *suspect;
	// Slurm reports the requeue spank_ckpt made (state PENDING): the suspect
	// n1 is replaced by leaf1's spare, the job is not requeued again.
	JobRecord r = job(301, "user-error.out", {"n1"}, 0);
	r.end.state = "PENDING";
	r.end.checkpointed = r.end.requeue_allowed = true;
	r.already_requeued = true;
	JobOutcome out = handle_job(r, opt, slurm, lim, stats, 5000);
	ck_assert(out.migrated && slurm.drained.empty() && slurm.requeued.empty());
	ck_assert_int_eq(slurm.calls.size(), 2);
	ck_assert_sstr_eq(slurm.calls[0].c_str(), "create loom_spare_301_1 n4 alice 0");
	ck_assert_sstr_eq(slurm.calls[1].c_str(),
			  "update 301 ReservationName=loom_spare_301_1 AdminComment=loom: moved off suspect node(s) to "
			  "spares n1 -> n4 (leaf leaf1) in reservation loom_spare_301_1");
	// No spare left: the suspect node is excluded for the job instead.
	FakeSlurm s2;
	s2.nodes["n1"] = *suspect;
	s2.nodes["n4"] = slurm_node("n4", "IDLE+DRAIN", "maintenance");
	out = handle_job(r, opt, s2, lim, stats, 5001);
	ck_assert_int_eq(s2.calls.size(), 1);
	ck_assert_msg(s2.calls[0].rfind(
			      "update 301 ExcNodeList=n1 AdminComment=loom: moved off suspect node(s) n1 (no spares: ",
			      0) == 0,
		      "%s", s2.calls[0].c_str());
	// A job that names its nodes (-w) keeps them: no spare, no exclusion.
	FakeSlurm s5;
	s5.nodes["n1"] = *suspect;
	s5.nodes["n4"] = slurm_node("n4", "IDLE");
	JobRecord pinned = r;
	pinned.pinned = true;
	handle_job(pinned, opt, s5, lim, stats, 5004);
	ck_assert(s5.calls.empty());
	// Not a move: a job that is not --ckpt, or loom's own requeue of a failure (a node drained by loom).
	FakeSlurm s3;
	s3.nodes["n1"] = *suspect;
	s3.nodes["n4"] = slurm_node("n4", "IDLE");
	JobRecord plain = r;
	plain.end.checkpointed = false;
	handle_job(plain, opt, s3, lim, stats, 5002);
	ck_assert(s3.calls.empty());
	JobRecord ours = job(302, "user-error.out", {"n1", "n2"}, 0);
	ours.end.state = "PENDING";
	ours.end.checkpointed = true;
	ours.already_requeued = true;
	s3.nodes["n2"] = slurm_node("n2", "IDLE+DRAIN", "loom: jobcomp: gpu_fault: job 302: ...");
	handle_job(ours, opt, s3, lim, stats, 5003);
	ck_assert(s3.calls.empty());
	rm(dir);
}
END_TEST

TCase *jobcomp_spare_tests()
{
	TCase *tc = tcase_create("spares");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, infrastructure_failure_restarts_on_a_spare_of_its_leaf);
	tcase_add_test(tc, without_a_spare_for_every_culprit_the_job_takes_the_normal_requeue);
	tcase_add_test(tc, a_job_moved_off_a_suspect_node_gets_a_spare);
	return tc;
}
