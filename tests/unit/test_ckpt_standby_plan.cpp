// loom ckpt: the standbys' layout, a replacement, the verdict file
// (lib/ckpt/standby_plan.hpp).
#include "lib/ckpt/standby_plan.hpp"

#include <map>

#include "tests/unit/check_main.hpp"

using namespace loom::ckpt;

namespace {

std::vector<std::string> names(std::initializer_list<const char *> v) { return {v.begin(), v.end()}; }

std::string from_map(const char *name, void *ctx)
{
	auto &m = *static_cast<std::map<std::string, std::string> *>(ctx);
	auto it = m.find(name);
	return it == m.end() ? "" : it->second;
}

std::string value(const std::vector<std::pair<std::string, std::string>> &env, const std::string &k)
{
	for (const auto &[name, v] : env)
		if (name == k)
			return v;
	return "(unset)";
}

} // namespace

// Five nodes, one standby: the last in Slurm's order; none left active is refused.
START_TEST(standbys_are_the_tail)
{
	auto l = split_standbys(names({"n1", "n2", "n3", "n4", "n5"}), 1);
	ck_assert(l.has_value());
	ck_assert(l->active == names({"n1", "n2", "n3", "n4"}));
	ck_assert(l->standby == names({"n5"}));
	auto none = split_standbys(names({"n1", "n2"}), 2);
	ck_assert(!none.has_value());
	ck_assert_msg(none.error().str().find("JobSubmitPlugins=loom") != std::string::npos, "%s",
		      none.error().str().c_str());
}
END_TEST

// The active count job_submit/loom recorded: 4 of 5, 4 of 4 (a requeued
// job that lost its standby), never 4 of 3.
START_TEST(active_count_gives_the_standbys)
{
	auto five = split_active(names({"n1", "n2", "n3", "n4", "n5"}), 4);
	ck_assert(five.has_value() && five->standby == names({"n5"}));
	auto four = split_active(names({"n1", "n2", "n3", "n4"}), 4);
	ck_assert(four.has_value() && four->standby.empty() && four->active.size() == 4);
	auto three = split_active(names({"n1", "n2", "n3"}), 4);
	ck_assert(!three.has_value());
	ck_assert_msg(three.error().str().find("LOOM_CKPT_ACTIVE") != std::string::npos, "%s",
		      three.error().str().c_str());
}
END_TEST

// n3 fails: released from the job, n5 joins, the active nodes stay first;
// then the batch host n1 fails: it stays in the job, excluded; no standby is
// left for a third.
START_TEST(replacements_keep_the_active_nodes_first)
{
	auto l = split_standbys(names({"n1", "n2", "n3", "n4", "n5", "n6"}), 2);
	auto r = replace_node(*l, "n3", "n1");
	ck_assert(r.done && r.release);
	ck_assert_sstr_eq(r.taken, "n5");
	ck_assert(r.after.job == names({"n1", "n2", "n4", "n5", "n6"}));
	ck_assert(r.after.active == names({"n1", "n2", "n4", "n5"}));
	ck_assert(r.after.standby == names({"n6"}));
	auto b = replace_node(r.after, "n1", "n1");
	ck_assert(b.done && !b.release);
	ck_assert(b.after.job == names({"n1", "n2", "n4", "n5", "n6"}));
	ck_assert(b.after.active == names({"n2", "n4", "n5", "n6"}));
	ck_assert(b.after.exclude == names({"n1"}));
	auto none = replace_node(b.after, "n2", "n1");
	ck_assert(!none.done);
	ck_assert_sstr_eq(none.why, "no standby left for n2");
	ck_assert(!replace_node(b.after, "n3", "n1").done); // not active
}
END_TEST

START_TEST(per_node_counts)
{
	auto c = expand_counts("2(x3),1");
	ck_assert(c.has_value());
	ck_assert(*c == names({"2", "2", "2", "1"}));
	ck_assert_sstr_eq(compress_counts(*c), "2(x3),1");
	ck_assert_sstr_eq(compress_counts(names({"8"})), "8");
	ck_assert(!expand_counts("2(x3").has_value());
	ck_assert(!expand_counts("two").has_value());
	ck_assert(!expand_counts("").has_value());
}
END_TEST

// sbatch -N4 --ntasks-per-node=2 --ckpt-standby=1: 5 nodes, 10 tasks in
// Slurm's view; the script sees 4 nodes and 8 tasks.
START_TEST(batch_environment_counts_the_active_nodes)
{
	std::map<std::string, std::string> env = {{"SLURM_TASKS_PER_NODE", "2(x5)"}, {"SLURM_NTASKS_PER_NODE", "2"}};
	auto l = split_standbys(names({"n1", "n2", "n3", "n4", "n5"}), 1);
	auto e = active_env(*l, from_map, &env);
	ck_assert_sstr_eq(value(e, "SLURM_JOB_NUM_NODES"), "4");
	ck_assert_sstr_eq(value(e, "SLURM_NNODES"), "4");
	ck_assert_sstr_eq(value(e, "SLURM_TASKS_PER_NODE"), "2(x4)");
	ck_assert_sstr_eq(value(e, "SLURM_NTASKS"), "8");
	ck_assert_sstr_eq(value(e, standby_nodes_env), "n5");
	// -n given, no per-node count: the task count is the user's.
	std::map<std::string, std::string> bare = {{"SLURM_TASKS_PER_NODE", "garbage"}};
	auto b = active_env(*l, from_map, &bare);
	ck_assert_sstr_eq(value(b, "SLURM_NTASKS"), "(unset)");
	ck_assert_sstr_eq(value(b, "SLURM_TASKS_PER_NODE"), "(unset)");
}
END_TEST

START_TEST(verdict_round_trip_and_bad_files)
{
	auto l = split_standbys(names({"n1", "n2", "n3", "n4", "n5"}), 1);
	auto r = replace_node(*l, "n3", "n1");
	StepVerdict v{7, true, 1, r.after, "16(x4)", "gpu_fault on n3"};
	auto back = parse_verdict(format_verdict(v), "verdict.7");
	ck_assert_msg(back.has_value(), "%s", back ? "" : back.error().str().c_str());
	ck_assert(back->relaunch && back->step == 7 && back->generation == 1);
	ck_assert(back->layout.job == r.after.job && back->layout.active == r.after.active);
	auto env = relaunch_env(*back);
	ck_assert_sstr_eq(value(env, "SLURM_JOB_NODELIST"), "n[1-2,4-5]");
	ck_assert_sstr_eq(value(env, "SLURM_JOB_NUM_NODES"), "4");
	ck_assert_sstr_eq(value(env, "SLURM_JOB_CPUS_PER_NODE"), "16(x4)");
	ck_assert_sstr_eq(value(env, "LOOM_CKPT_GENERATION"), "1");
	ck_assert_sstr_eq(relaunch_exclude(*back), "");
	// Torn, unknown and empty-active files are errors naming the file.
	auto torn = parse_verdict(format_verdict(v).substr(0, 20), "verdict.7");
	ck_assert(!torn.has_value());
	ck_assert(torn.error().str().find("verdict.7") != std::string::npos);
	ck_assert(!parse_verdict(R"({"step":1,"relaunch":true,"generation":0,"job":"n1","active":"","standby":"",)"
				 R"("exclude":"","cpus_per_node":"","why":""})",
				 "v")
			   .has_value());
	ck_assert(!parse_verdict(R"({"step":1,"relaunch":false,"generation":0,"job":"n1","active":"n1","standby":"",)"
				 R"("exclude":"","cpus_per_node":"","why":"","extra":1})",
				 "v")
			   .has_value());
}
END_TEST

// job_submit/loom's plan: -N4 --ntasks-per-node=2 --ckpt-standby=1 asks
// for 5 nodes and 10 tasks; no -N, a range, or too many are refused naming
// the option; auto follows the time limit.
START_TEST(submit_plan)
{
	SubmitCounts c{4, 4, 8, 2};
	auto p = plan_submit(c, "1", 3600, 30 * 86400.0, 0.9, 8);
	ck_assert(p.has_value());
	ck_assert_int_eq(p->standbys, 1);
	ck_assert_int_eq(p->after.min_nodes, 5);
	ck_assert_int_eq(p->after.max_nodes, 5);
	ck_assert_int_eq(p->after.num_tasks, 10);
	SubmitCounts bare{4, 0, 0, 0}; // -N4 only: no task count to grow
	auto b = plan_submit(bare, "2", 0, 86400, 0.9, 8);
	ck_assert(b.has_value() && b->after.min_nodes == 6 && b->after.num_tasks == 0 && b->after.max_nodes == 0);
	auto none = plan_submit(SubmitCounts{0, 0, 8, 0}, "1", 0, 86400, 0.9, 8);
	ck_assert(!none.has_value());
	ck_assert_msg(none.error().str().find("--ckpt-standby=1") != std::string::npos, "%s",
		      none.error().str().c_str());
	ck_assert(!plan_submit(SubmitCounts{4, 8, 0, 0}, "1", 0, 86400, 0.9, 8).has_value());
	ck_assert(!plan_submit(c, "9", 0, 86400, 0.9, 8).has_value());
	ck_assert(!plan_submit(c, "one", 0, 86400, 0.9, 8).has_value());
	// auto: 4 nodes a day at a 1-day node MTBF expect ~5 failures; with no
	// time limit the most allowed; over a minute at 30 days, none.
	auto day = plan_submit(c, "auto", 86400, 86400, 0.9, 16);
	ck_assert(day.has_value() && day->standbys >= 5 && day->standbys <= 16);
	ck_assert_int_eq(plan_submit(c, "auto", 0, 86400, 0.9, 3)->standbys, 3);
	ck_assert_int_eq(plan_submit(c, "auto", 60, 30 * 86400.0, 0.9, 8)->standbys, 0);
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("ckpt_standby_plan");
	TCase *tc = tcase_create("plan");
	tcase_add_test(tc, standbys_are_the_tail);
	tcase_add_test(tc, active_count_gives_the_standbys);
	tcase_add_test(tc, replacements_keep_the_active_nodes_first);
	tcase_add_test(tc, per_node_counts);
	tcase_add_test(tc, batch_environment_counts_the_active_nodes);
	tcase_add_test(tc, verdict_round_trip_and_bad_files);
	tcase_add_test(tc, submit_plan);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
