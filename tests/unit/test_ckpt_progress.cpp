// loom ckpt: hangs and stragglers from the ranks' progress (lib/ckpt/progress.hpp).
#include "lib/ckpt/progress.hpp"

#include <string>
#include <vector>

#include "tests/unit/check_main.hpp"

using namespace loom::ckpt;

namespace {

// Four ranks on two nodes, each at 'step', completed at 'done' after
// 'step_s' seconds, their heartbeats at 'beat'.
std::vector<RankProgress> job(int64_t step, double done, double step_s, double beat)
{
	std::vector<RankProgress> v;
	for (int r = 0; r < 4; r++)
		v.push_back({r, r < 2 ? "n1" : "n2", step, done, step_s, beat});
	return v;
}

// A job stepping every 'step_s' seconds from t=0 to 'until', judged at each step.
void run_steps(ProgressJudge &j, double step_s, double until)
{
	int64_t s = 0;
	for (double t = step_s; t <= until; t += step_s)
		(void)j.judge(job(s++, t, step_s, t), t);
}

} // namespace

// A job that steps every second: the hang limit is the floor, 60 s (10 x 1 s
// is less). 59 s after the last step it is running, 61 s after a hang.
START_TEST(hang_after_the_floor_for_fast_steps)
{
	ProgressJudge j;
	run_steps(j, 1, 100);
	ProgressVerdict v = j.judge(job(99, 100, 1, 159), 159);
	ck_assert_str_eq(progress_name(v.state), "running");
	ck_assert_double_eq_tol(v.limit_s, 60, 1e-9);
	v = j.judge(job(99, 100, 1, 161), 161);
	ck_assert_str_eq(progress_name(v.state), "hang");
	ck_assert_double_eq_tol(v.idle_s, 61, 1e-9);
	ck_assert(v.culprits.empty()); // every rank alive at the same step: a stuck collective
	ck_assert_msg(v.why.find("no step for 61 s") == 0, "why: %s", v.why.c_str());
}
END_TEST

// Steps of 30 s: the limit is 10 x 30 s = 300 s, not the floor.
START_TEST(hang_after_k_step_times_for_slow_steps)
{
	ProgressJudge j;
	run_steps(j, 30, 900);
	ck_assert_str_eq(progress_name(j.judge(job(29, 900, 30, 1190), 1190).state), "running");
	ProgressVerdict v = j.judge(job(29, 900, 30, 1210), 1210);
	ck_assert_str_eq(progress_name(v.state), "hang");
	ck_assert_double_eq_tol(v.limit_s, 300, 1e-9);
}
END_TEST

// Rank 2 stopped (SIGSTOP): its heartbeat is 70 s old, the others' fresh;
// the others wait in the collective at the same step. Rank 2 is named.
START_TEST(hang_names_the_rank_whose_heartbeat_stopped)
{
	ProgressJudge j;
	run_steps(j, 1, 100);
	auto ranks = job(99, 100, 1, 170);
	ranks[2].beat = 100;
	ProgressVerdict v = j.judge(ranks, 170);
	ck_assert_str_eq(progress_name(v.state), "hang");
	ck_assert_int_eq(static_cast<int>(v.culprits.size()), 1);
	ck_assert_int_eq(v.culprits[0], 2);
	ck_assert_msg(v.why.find("stopped: rank 2") != std::string::npos, "why: %s", v.why.c_str());
	// Every rank alive, rank 3 a step behind the others: rank 3 is named.
	auto behind = job(99, 100, 1, 170);
	behind[3].step = 98;
	v = j.judge(behind, 170);
	ck_assert_int_eq(static_cast<int>(v.culprits.size()), 1);
	ck_assert_int_eq(v.culprits[0], 3);
}
END_TEST

// Loading is not a hang; no report at all is unknown, never running.
START_TEST(no_judgement_before_the_first_step)
{
	ProgressJudge j;
	ck_assert_str_eq(progress_name(j.judge({}, 1000).state), "unknown");
	ProgressVerdict v = j.judge(job(-1, 0, 0, 1000), 5000);
	ck_assert_str_eq(progress_name(v.state), "starting");
}
END_TEST

// Rank 1's steps take 1.8 s against its peers' 1 s: after 5 such new steps
// it is a straggler, not after 4; the same report judged again adds nothing,
// and a step at the normal pace clears it.
START_TEST(straggler_after_consecutive_slow_steps)
{
	ProgressJudge j;
	double t = 0;
	ProgressVerdict v;
	for (int s = 0; s < 5; s++) {
		t += 1.8;
		auto ranks = job(s, t, 1, t);
		ranks[1].step_s = 1.8;
		v = j.judge(ranks, t);
		ck_assert_int_eq(static_cast<int>(v.stragglers.size()), s == 4 ? 1 : 0);
		if (s == 3) // the same report again: not a new slow step
			ck_assert_int_eq(static_cast<int>(j.judge(ranks, t).stragglers.size()), 0);
	}
	ck_assert_int_eq(v.stragglers[0], 1);
	t += 1;
	v = j.judge(job(5, t, 1, t), t);
	ck_assert(v.stragglers.empty());
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("ckpt_progress");
	TCase *tc = tcase_create("progress");
	tcase_add_test(tc, hang_after_the_floor_for_fast_steps);
	tcase_add_test(tc, hang_after_k_step_times_for_slow_steps);
	tcase_add_test(tc, hang_names_the_rank_whose_heartbeat_stopped);
	tcase_add_test(tc, no_judgement_before_the_first_step);
	tcase_add_test(tc, straggler_after_consecutive_slow_steps);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
