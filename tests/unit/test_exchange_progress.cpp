// loom exchange: progress reports (lib/exchange/progress_report.hpp), the
// cases of tests/ckpt/progress-cases.json, which the Python SDK runs too.
#include "lib/exchange/progress_report.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"

#include <cmath>
#include <json-c/json.h>

#include "tests/unit/check_main.hpp"

using namespace loom;
using namespace loom::exchange;

namespace {

void expect_field(const std::string &name, const ProgressReport &r, const char *key, json_object *want)
{
	std::string k = key;
	if (k == "node") {
		ck_assert_msg(r.node == json_object_get_string(want), "%s: node is '%s'", name.c_str(), r.node.c_str());
		return;
	}
	double got = k == "rank"     ? r.rank
		     : k == "world"  ? r.world
		     : k == "step"   ? static_cast<double>(r.step)
		     : k == "time"   ? r.time
		     : k == "step_s" ? r.step_s
		     : k == "beat"   ? r.beat
				     : NAN;
	ck_assert_msg(!std::isnan(got), "%s: unknown field %s", name.c_str(), key);
	ck_assert_msg(std::fabs(got - json_object_get_double(want)) < 1e-6, "%s: %s is %f", name.c_str(), key, got);
}

} // namespace

START_TEST(the_shared_cases)
{
	std::string path = loom::test::srcdir() + "/tests/ckpt/progress-cases.json";
	auto doc = json_parse_file(path, 1 << 20);
	ck_assert_msg(doc.has_value(), "%s", doc ? "" : doc.error().str().c_str());
	json_object *cases = ObjectReader(doc->get(), "$").array("cases").value();
	ck_assert_int_ge(static_cast<long>(json_object_array_length(cases)), 10);
	for (size_t i = 0; i < json_object_array_length(cases); i++) {
		ObjectReader c(json_object_array_get_idx(cases, i), "case");
		std::string name = c.str("name").value();
		auto got = parse_progress(c.str("text").value(), "rank.3");
		if (c.has("error")) {
			std::string word = c.str("error").value();
			ck_assert_msg(!got.has_value(), "%s: read, expected an error", name.c_str());
			ck_assert_msg(got.error().str().find(word) != std::string::npos &&
					      got.error().str().find("rank.3") != std::string::npos,
				      "%s: '%s' names neither %s nor the file", name.c_str(), got.error().str().c_str(),
				      word.c_str());
			continue;
		}
		ck_assert_msg(got.has_value(), "%s: %s", name.c_str(), got ? "" : got.error().str().c_str());
		json_object_object_foreach(c.object("expect").value(), key, want) expect_field(name, *got, key, want);
	}
}
END_TEST

START_TEST(what_is_written_reads_back)
{
	ProgressReport r{5, 16, "gpu-b07", 31337, 1765098000.5, 1.25, 1765098001.75};
	auto back = parse_progress(format_progress(r), "x");
	ck_assert(back.has_value());
	ck_assert(back->rank == 5 && back->world == 16 && back->node == "gpu-b07" && back->step == 31337);
	ck_assert(std::fabs(back->time - r.time) < 1e-3 && std::fabs(back->beat - r.beat) < 1e-3);
	ck_assert_sstr_eq(progress_file_name(12), "rank.12");
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("exchange_progress");
	TCase *tc = tcase_create("progress");
	tcase_add_test(tc, the_shared_cases);
	tcase_add_test(tc, what_is_written_reads_back);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
