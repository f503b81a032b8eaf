// lib/exchange's formats that have no test of their own elsewhere:
// - the environment of a --ckpt job's tasks (ckpt_task_env.hpp): the cases
//   of tests/ckpt/task-env-cases.json, which the Python SDK runs too
//   (tests/ckpt/test_sdk_python.py), read by read_task_env; and what
//   task_env_vars writes reads back to the same values;
// - what a --ckpt job carries to slurmctld (ckpt_job_env.hpp);
// - the suspect flag file (suspect_flag.hpp);
// - select/topo's note in a job's SystemComment (job_note.hpp).
#include "lib/exchange/ckpt_job_env.hpp"
#include "lib/exchange/ckpt_task_env.hpp"
#include "lib/exchange/job_note.hpp"
#include "lib/exchange/suspect_flag.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <json-c/json.h>
#include <map>
#include <string>
#include <vector>

// Check defines a fail() macro: include it after the C++ library headers.
#include "tests/unit/check_main.hpp"

using namespace loom;
using namespace loom::exchange;

namespace {

int64_t field(const TaskEnv &e, const std::string &k, std::string *s)
{
	if (k == "dir" || k == "latest") {
		*s = k == "dir" ? e.dir : e.latest;
		return 0;
	}
	if (k == "signal")
		return e.signal;
	if (k == "interval_s")
		return e.interval_s;
	if (k == "keep")
		return e.keep;
	if (k == "restart_count")
		return e.restart_count;
	ck_abort_msg("task-env-cases.json: unknown field %s", k.c_str());
	return 0;
}

void run_case(json_object *c)
{
	ObjectReader r(c, "case");
	std::string name = r.str("name").value();
	std::map<std::string, std::string> env;
	json_object_object_foreach(r.object("env").value(), k, v) env[k] = json_object_get_string(v);
	auto got = read_task_env([&](const char *n) { return env.count(n) ? env[n] : std::string(); });
	if (r.has("error")) {
		std::string var = r.str("error").value();
		ck_assert_msg(!got.has_value(), "%s: read, expected an error naming %s", name.c_str(), var.c_str());
		ck_assert_msg(got.error().str().rfind(var + "='", 0) == 0, "%s: '%s' does not begin with %s",
			      name.c_str(), got.error().str().c_str(), var.c_str());
		return;
	}
	ck_assert_msg(got.has_value(), "%s: %s", name.c_str(), got ? "" : got.error().str().c_str());
	json_object_object_foreach(r.object("expect").value(), key, want)
	{
		std::string s;
		int64_t n = field(*got, key, &s);
		if (json_object_is_type(want, json_type_string))
			ck_assert_msg(s == json_object_get_string(want), "%s: %s is '%s'", name.c_str(), key,
				      s.c_str());
		else
			ck_assert_msg(n == json_object_get_int64(want), "%s: %s is %lld", name.c_str(), key,
				      static_cast<long long>(n));
	}
}

} // namespace

START_TEST(the_shared_cases)
{
	const char *src = std::getenv("LOOM_SRCDIR");
	ck_assert_msg(src && *src, "LOOM_SRCDIR is not set (make check sets it)");
	std::string path = std::string(src) + "/tests/ckpt/task-env-cases.json";
	auto text = read_file(path, 1 << 20);
	ck_assert_msg(text.has_value(), "%s", text ? "" : text.error().str().c_str());
	auto doc = json_parse(*text, path);
	ck_assert_msg(doc.has_value(), "%s", doc ? "" : doc.error().str().c_str());
	json_object *cases = ObjectReader(doc->get(), "$").array("cases").value();
	ck_assert_int_ge(static_cast<long>(json_object_array_length(cases)), 20);
	for (size_t i = 0; i < json_object_array_length(cases); i++)
		run_case(json_object_array_get_idx(cases, i));
}
END_TEST

START_TEST(what_spank_ckpt_writes_reads_back)
{
	TaskEnv e{"/ckpt/alice/42", "/ckpt/alice/42/step-000000000007", 0, 600, 4, 2};
	std::map<std::string, std::string> env;
	for (const auto &[k, v] : task_env_vars(e, "USR1"))
		env[k] = v;
	ck_assert_int_eq(static_cast<long>(env.size()), 6);
	auto got = read_task_env([&](const char *n) { return env.count(n) ? env[n] : std::string(); });
	ck_assert_msg(got.has_value(), "%s", got ? "" : got.error().str().c_str());
	ck_assert(got->dir == e.dir && got->latest == e.latest && got->signal == 10 && got->interval_s == 600 &&
		  got->keep == 4 && got->restart_count == 2);
}
END_TEST

START_TEST(checkpoint_signals_by_name_or_number)
{
	ck_assert_int_eq(*parse_signal("USR2"), SIGUSR2);
	ck_assert_int_eq(*parse_signal("SIGUSR1"), SIGUSR1);
	ck_assert_int_eq(*parse_signal("40"), 40);
	ck_assert(!parse_signal("KILL") && !parse_signal("SIGSTOP") && !parse_signal("9"));
	ck_assert(!parse_signal("USR3") && !parse_signal("") && !parse_signal("0"));
	ck_assert_sstr_eq(signal_name(SIGUSR2), "USR2");
	ck_assert_sstr_eq(signal_name(40), "40");
}
END_TEST

START_TEST(a_ckpt_job_carries_its_request)
{
	std::vector<std::string> env = {"SLURM_SPANK_x=y"};
	for (const auto &[k, v] : job_control_env({true, 2}))
		env.push_back(k + "=" + v);
	CkptRequest r = ckpt_request_from_env(env);
	ck_assert(r.enabled && r.max_restarts == 2);
	ck_assert(job_control_env({false, 2}).empty());
	ck_assert(!ckpt_request_from_env({"LOOM_CKPT=0"}).enabled);
	ck_assert_int_eq(ckpt_request_from_env({"LOOM_CKPT=1", "LOOM_CKPT_MAX_RESTARTS=1x"}).max_restarts, -1);
	ck_assert_int_eq(ckpt_request_from_env({"LOOM_CKPT=1"}).max_restarts, -1);
}
END_TEST

START_TEST(suspect_flag_carries_the_prediction)
{
	std::string t = suspect_flag_text({"loom: predict: ib0 symbol errors\nrising", 29.2});
	ck_assert_sstr_eq(t.c_str(), "loom: predict: ib0 symbol errors rising\neta_s=30\n");
	SuspectFlag f = parse_suspect_flag(t);
	ck_assert_sstr_eq(f.reason.c_str(), "loom: predict: ib0 symbol errors rising");
	ck_assert(f.eta_s == 30);
	// A flag from before predictions, or written by hand: no eta.
	ck_assert(parse_suspect_flag("loom: gpu_ecc: 3 DBE\n").eta_s == 0);
	ck_assert(parse_suspect_flag("bad\neta_s=soon\n").eta_s == 0);
	ck_assert(parse_suspect_flag("").reason.empty());
	ck_assert_sstr_eq(suspect_flag_text({"x", 0}).c_str(), "x\n");
}
END_TEST

// loom's note in a SystemComment: written next to what slurmctld wrote,
// replaced (not repeated) on a requeue, read back field by field.
START_TEST(job_note_in_a_system_comment)
{
	JobNote n{"h100", "value", 28.8};
	ck_assert_sstr_eq(format_job_note(n), "loom: class=h100 tier=value price_per_h=28.80");
	ck_assert_sstr_eq(put_job_note("", n), "loom: class=h100 tier=value price_per_h=28.80");
	std::string c = put_job_note("burst buffer stage-in failed", n);
	ck_assert_sstr_eq(c, "burst buffer stage-in failed; loom: class=h100 tier=value price_per_h=28.80");
	JobNote m{"b200", "", -1};
	ck_assert_sstr_eq(put_job_note(c, m), "burst buffer stage-in failed; loom: class=b200");
	ck_assert_sstr_eq(put_job_note("loom: class=a100; other", m), "other; loom: class=b200");
	auto back = find_job_note(c);
	ck_assert(back.has_value());
	ck_assert_sstr_eq(back->gpu_class, "h100");
	ck_assert_sstr_eq(back->tier, "value");
	ck_assert(std::abs(back->price_per_h - 28.8) < 1e-9);
	auto bare = find_job_note("loom: class=b200");
	ck_assert(bare.has_value() && bare->price_per_h < 0 && bare->tier.empty());
	ck_assert(!find_job_note("nothing of ours").has_value());
	ck_assert(!find_job_note("xloom: class=h100").has_value());
	ck_assert(!find_job_note("loom: class=h100 price_per_h=cheap").has_value());
	ck_assert(!find_job_note("loom: colour=blue").has_value());
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("exchange");
	TCase *tc = tcase_create("formats");
	tcase_add_test(tc, the_shared_cases);
	tcase_add_test(tc, what_spank_ckpt_writes_reads_back);
	tcase_add_test(tc, checkpoint_signals_by_name_or_number);
	tcase_add_test(tc, a_ckpt_job_carries_its_request);
	tcase_add_test(tc, suspect_flag_carries_the_prediction);
	tcase_add_test(tc, job_note_in_a_system_comment);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
