// The environment of a --ckpt job's tasks (lib/ckpt/task_env.hpp): the
// cases of tests/ckpt/task-env-cases.json, which the Python SDK runs too
// (tests/ckpt/test_sdk_python.py), read by read_task_env; and what
// task_env_vars writes reads back to the same values.
#include "lib/ckpt/task_env.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"

#include <cstdlib>
#include <json-c/json.h>
#include <map>
#include <string>

// Check defines a fail() macro: include it after the C++ library headers.
#include "tests/unit/check_main.hpp"

using namespace loom;
using namespace loom::ckpt;

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
		ck_assert_msg(got.error().str().rfind(var + "='", 0) == 0, "%s: '%s' does not begin with %s", name.c_str(),
			      got.error().str().c_str(), var.c_str());
		return;
	}
	ck_assert_msg(got.has_value(), "%s: %s", name.c_str(), got ? "" : got.error().str().c_str());
	json_object_object_foreach(r.object("expect").value(), key, want)
	{
		std::string s;
		int64_t n = field(*got, key, &s);
		if (json_object_is_type(want, json_type_string))
			ck_assert_msg(s == json_object_get_string(want), "%s: %s is '%s'", name.c_str(), key, s.c_str());
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

static Suite *make_suite()
{
	Suite *s = suite_create("ckpt_task_env");
	TCase *tc = tcase_create("task_env");
	tcase_add_test(tc, the_shared_cases);
	tcase_add_test(tc, what_spank_ckpt_writes_reads_back);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
