// Unit tests for lib/util: config parsing, durations and sizes, JSON reading,
// the log sink. The suite, with files and commands (test_util_files.cpp) and
// Slurm's text forms (test_util_slurm_text.cpp).
#include "lib/util/config.hpp"
#include "lib/util/json.hpp"
#include "lib/util/log.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

// Check defines a fail() macro: include it after the C++ library headers.
#include "tests/unit/check_main.hpp"

using namespace loom;

// Files, directories and commands run (test_util_files.cpp).
TCase *util_file_tests();
// Host lists, GRES requests, AdminComment segments (test_util_slurm_text.cpp).
TCase *util_slurm_text_tests();

namespace {

struct Opts {
	std::string dir = "/tmp";
	int64_t keep = 3;
	int64_t interval = 600;
	bool enabled = false;
	std::string mode = "auto";
	std::vector<std::string> roots;

	ConfigSchema schema()
	{
		ConfigSchema s;
		s.string("dir", &dir)
			.integer("keep", &keep, 1, 100)
			.duration("interval", &interval, 60, 86400)
			.boolean("enabled", &enabled)
			.choice("mode", &mode, {"auto", "fixed"})
			.list("roots", &roots);
		return s;
	}
};

} // namespace

START_TEST(config_args_ok)
{
	Opts o;
	const char *argv[] = {"dir=/scratch/%u", "keep=5", "interval=15min", "enabled=yes", "roots=/a,/b"};
	status st = o.schema().parse_args(5, const_cast<char *const *>(argv), "plugstack.conf:1");
	ck_assert_msg(st.has_value(), "%s", st ? "" : st.error().str().c_str());
	ck_assert_sstr_eq(o.dir, "/scratch/%u");
	ck_assert_int_eq(o.keep, 5);
	ck_assert_int_eq(o.interval, 900);
	ck_assert(o.enabled);
	ck_assert_int_eq(o.roots.size(), 2);
	ck_assert_sstr_eq(o.roots[1], "/b");
}
END_TEST

START_TEST(config_unknown_key_names_key_and_place)
{
	Opts o;
	const char *argv[] = {"keep=5", "intervall=10m"};
	status st = o.schema().parse_args(2, const_cast<char *const *>(argv), "plugstack.conf:4");
	ck_assert(!st);
	std::string msg = st.error().str();
	ck_assert_msg(msg.find("plugstack.conf:4 argument 2") != std::string::npos, "%s", msg.c_str());
	ck_assert_msg(msg.find("unknown key 'intervall'") != std::string::npos, "%s", msg.c_str());
}
END_TEST

START_TEST(config_bad_value_names_key_and_value)
{
	Opts o;
	status st = o.schema().parse_words("keep=lots", "SelectTypeParameters");
	ck_assert(!st);
	std::string msg = st.error().str();
	ck_assert_msg(msg.find("key 'keep': bad value 'lots'") != std::string::npos, "%s", msg.c_str());

	st = o.schema().parse_words("keep=101", "x");
	ck_assert(!st);
	ck_assert_msg(st.error().str().find("between 1 and 100") != std::string::npos, "%s", st.error().str().c_str());

	st = o.schema().parse_words("mode=fast", "x");
	ck_assert(!st);
	ck_assert(st.error().str().find("expected one of: auto, fixed") != std::string::npos);

	st = o.schema().parse_words("interval=10", "x"); // 10 s is below the 60 s floor
	ck_assert(!st);
	st = o.schema().parse_words("enabled", "x");
	ck_assert(!st);
	ck_assert(st.error().str().find("expected key=value") != std::string::npos);
	st = o.schema().parse_words("roots=/a,,/b", "x");
	ck_assert(!st);
}
END_TEST

START_TEST(config_file_lines_and_duplicates)
{
	Opts o;
	status st = o.schema().parse_text("# comment\n\ndir=/x keep=2\n  interval=1h # trailing\n", "loom.conf");
	ck_assert_msg(st.has_value(), "%s", st ? "" : st.error().str().c_str());
	ck_assert_int_eq(o.interval, 3600);
	Opts o2;
	st = o2.schema().parse_text("keep=2\nkeep=3\n", "loom.conf");
	ck_assert(!st);
	std::string msg = st.error().str();
	ck_assert_msg(msg.find("loom.conf:2") != std::string::npos && msg.find("given twice") != std::string::npos,
		      "%s", msg.c_str());
	st = o2.schema().parse_file("/nonexistent/loom.conf");
	ck_assert(!st);
	ck_assert(st.error().str().find("/nonexistent/loom.conf") != std::string::npos);
}
END_TEST

START_TEST(durations_and_sizes)
{
	struct {
		const char *in;
		int64_t out;
	} good[] = {{"90", 90},    {"90s", 90},     {"15min", 900},     {"15m", 900},  {"2h", 7200},
		    {"1d", 86400}, {"1h30m", 5400}, {"01:30:00", 5400}, {"10:00", 600}};
	for (auto &g : good) {
		auto r = parse_duration(g.in);
		ck_assert_msg(r.has_value(), "%s", g.in);
		ck_assert_int_eq(*r, g.out);
	}
	for (const char *bad : {"", "h", "10x", "1:2:3:4", "-5", "10 m", "1:99"})
		ck_assert_msg(!parse_duration(bad), "accepted '%s'", bad);
	ck_assert_sstr_eq(format_duration(5400), "1h30m");
	ck_assert_int_eq(*parse_size("4k"), 4096);
	ck_assert_int_eq(*parse_size("1GiB"), 1ull << 30);
	ck_assert_int_eq(*parse_size("2G"), 2ull << 30);
	ck_assert(!parse_size("12Q"));
	ck_assert(!parse_size("99999999999T"));
}
END_TEST

START_TEST(json_strict_reader)
{
	auto j = json_parse(R"({"version": 1, "name": "c1", "nodes": [1,2], "extra": true})", "t.json");
	ck_assert(j.has_value());
	ObjectReader r(j->get(), "$");
	ck_assert_int_eq(*r.integer("version", 1, 1), 1);
	ck_assert_sstr_eq(*r.str("name"), "c1");
	ck_assert(r.array("nodes").has_value());
	ck_assert_int_eq(*r.integer_or("gpus", 8), 8);
	status st = r.finish();
	ck_assert(!st);
	ck_assert_sstr_eq(st.error().str(), "$.extra: unknown field");

	ObjectReader r2(j->get(), "$");
	auto bad = r2.str("version");
	ck_assert(!bad);
	ck_assert_sstr_eq(bad.error().str(), "$.version: expected a string, found int");
	auto missing = r2.integer("nope");
	ck_assert(!missing);
	ck_assert(missing.error().str().find("missing required field 'nope'") != std::string::npos);
	auto range = r2.integer("version", 2, 3);
	ck_assert(!range);
}
END_TEST

START_TEST(json_parse_errors_have_line_and_column)
{
	auto t = json_parse("{\n  \"a\": 1,\n  \"b\": [1, 2\n", "trunc.json");
	ck_assert(!t);
	ck_assert_msg(t.error().str().find("trunc.json:") == 0, "%s", t.error().str().c_str());
	ck_assert(t.error().str().find("truncated") != std::string::npos);
	auto g = json_parse("{\"a\": 1} xyz", "g.json");
	ck_assert(!g);
	ck_assert_msg(g.error().str().find("g.json:1:") == 0, "%s", g.error().str().c_str());
	auto e = json_parse("", "empty.json");
	ck_assert(!e);
	auto bad = json_parse("{\"a\": tru}", "b.json");
	ck_assert(!bad);
	ck_assert_msg(bad.error().str().find("b.json:1:") == 0, "%s", bad.error().str().c_str());
	// Deep nesting is refused, not a stack overflow.
	std::string deep(100000, '[');
	auto d = json_parse(deep, "deep.json");
	ck_assert(!d);
}
END_TEST

START_TEST(json_build_and_dump)
{
	Json o = Json::object();
	o.set("version", Json::integer(1)).set("name", Json::string("a/b"));
	Json arr = Json::array();
	arr.push(Json::boolean(true));
	o.set("list", std::move(arr));
	std::string s = o.dump(false);
	ck_assert_sstr_eq(s, "{\"version\":1,\"name\":\"a/b\",\"list\":[true]}\n");
	Json copy = o;
	ck_assert_ptr_eq(copy.get(), o.get());
	// Numbers as a person would write them, and read back the same.
	Json n = Json::object();
	n.set("ms", Json::number(0.002172)).set("gbps", Json::number(400)).set("t", Json::number(1796159131.25));
	ck_assert_sstr_eq(n.dump(false), "{\"ms\":0.002172,\"gbps\":400.0,\"t\":1796159131.25}\n");
	auto back = json_parse(n.dump(false), "t");
	ck_assert(back.has_value());
	ObjectReader r(back->get(), "$");
	ck_assert(*r.number("ms") == 0.002172 && *r.number("gbps") == 400 && *r.number("t") == 1796159131.25);
}
END_TEST

namespace {
std::vector<std::pair<LogLevel, std::string>> g_logged;
void capture(LogLevel l, const char *m) { g_logged.emplace_back(l, m); }
} // namespace

START_TEST(log_sink_routes_and_filters)
{
	g_logged.clear();
	log_set_sink(capture);
	log_set_level(LogLevel::info);
	log_info("placed job %d on %s", 42, "n[1-4]");
	log_debug("not shown");
	log_error("bad %s", "thing");
	log_set_sink(nullptr);
	ck_assert_int_eq(g_logged.size(), 2);
	ck_assert_sstr_eq(g_logged[0].second, "placed job 42 on n[1-4]");
	ck_assert(g_logged[1].first == LogLevel::error);
	std::string longmsg(2000, 'x');
	ck_assert_int_eq(strprintf("%s", longmsg.c_str()).size(), 2000);
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, config_args_ok);
	tcase_add_test(tc, config_unknown_key_names_key_and_place);
	tcase_add_test(tc, config_bad_value_names_key_and_value);
	tcase_add_test(tc, config_file_lines_and_duplicates);
	tcase_add_test(tc, durations_and_sizes);
	tcase_add_test(tc, json_strict_reader);
	tcase_add_test(tc, json_parse_errors_have_line_and_column);
	tcase_add_test(tc, json_build_and_dump);
	tcase_add_test(tc, log_sink_routes_and_filters);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, util_file_tests());
	suite_add_tcase(s, util_slurm_text_tests());
	return s;
}

LOOM_CHECK_MAIN(make_suite)
