// Unit tests for lib/util: config parsing, durations and sizes, JSON reading,
// files, host lists, running commands.
#include "lib/util/admin_comment.hpp"
#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/gres.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/json.hpp"
#include "lib/util/log.hpp"
#include "lib/util/subprocess.hpp"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdint>
#include <csignal>
#include <json-c/json.h>
#include <string>
#include <sys/stat.h>

#include <unistd.h>
#include <vector>

// Check defines a fail() macro: include it after the C++ library headers.
#include "tests/unit/check_main.hpp"

using namespace loom;

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
	ck_assert_msg(st.error().str().find("between 1 and 100") != std::string::npos, "%s",
		      st.error().str().c_str());

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
	} good[] = {{"90", 90},	     {"90s", 90},	 {"15min", 900}, {"15m", 900},
		    {"2h", 7200},    {"1d", 86400},	 {"1h30m", 5400}, {"01:30:00", 5400},
		    {"10:00", 600}};
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

START_TEST(files_atomic_write_and_read)
{
	char tmpl[] = "/tmp/loom-test-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	std::string p = path_join(tmpl, "state.json");
	ck_assert(write_file_atomic(p, "one\n").has_value());
	ck_assert(write_file_atomic(p, "two\n").has_value());
	auto r = read_file(p);
	ck_assert(r.has_value());
	ck_assert_sstr_eq(*r, "two\n");
	auto big = read_file(p, 2);
	ck_assert(!big);
	auto lines = split_lines("a\r\nb\n\nc");
	ck_assert_int_eq(lines.size(), 4);
	ck_assert_sstr_eq(lines[0], "a");
	ck_assert_sstr_eq(std::string(trim("  x y \n")), "x y");
	unlink(p.c_str());
	rmdir(tmpl);
}
END_TEST

// A temporary file already under the writer's name (planted in /tmp) is
// refused when the write is exclusive: neither it nor the target is touched.
START_TEST(files_atomic_write_exclusive)
{
	char tmpl[] = "/tmp/loom-test-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	std::string p = path_join(tmpl, "hosts");
	std::string tmp = p + ".tmp." + std::to_string(getpid());
	ck_assert(write_file_atomic(tmp, "planted\n").has_value());
	auto st = write_file_atomic(p, "n1\n", AtomicWrite{.exclusive = true, .durable = false});
	ck_assert(!st);
	ck_assert_msg(st.error().str().find(tmp + ": cannot create: ") == 0, "%s", st.error().str().c_str());
	ck_assert(access(p.c_str(), F_OK) != 0);
	ck_assert_sstr_eq(*read_file(tmp), "planted\n");
	// Not exclusive, the one left there is reused.
	ck_assert(write_file_atomic(p, "n1\n").has_value());
	ck_assert(access(tmp.c_str(), F_OK) != 0);
	// Exclusive once the name is free, without fsync, in the mode asked for.
	ck_assert(write_file_atomic(p, "n2\nn3\n", AtomicWrite{.mode = 0600, .exclusive = true, .durable = false})
			  .has_value());
	ck_assert_sstr_eq(*read_file(p), "n2\nn3\n");
	struct stat sb;
	ck_assert(stat(p.c_str(), &sb) == 0);
	ck_assert_int_eq(sb.st_mode & 0777, 0600);
	ck_assert(access(tmp.c_str(), F_OK) != 0);
	unlink(p.c_str());
	rmdir(tmpl);
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

START_TEST(hostlists)
{
	auto h = hostlist_expand("gpu[08-10,12],login1,r[1-2]n[1-2]");
	ck_assert(h.has_value());
	ck_assert_int_eq(h->size(), 9);
	ck_assert_sstr_eq((*h)[0], "gpu08");
	ck_assert_sstr_eq((*h)[3], "gpu12");
	ck_assert_sstr_eq((*h)[6], "r1n2");
	ck_assert_sstr_eq(hostlist_compress(*hostlist_expand("n[01-04],n07,x")), "n[01-04,07],x");
	// Mixed padding folds differently but names the same nodes.
	auto mixed = *hostlist_expand("n[01-04],n07,x,n[1-10]");
	auto back = hostlist_expand(hostlist_compress(mixed));
	ck_assert(back.has_value());
	std::sort(mixed.begin(), mixed.end());
	std::sort(back->begin(), back->end());
	ck_assert(mixed == *back);
	ck_assert(!hostlist_expand("n[1-"));
	ck_assert(!hostlist_expand("n[3-1]"));
	ck_assert(!hostlist_expand("n[1-99999999]"));
	ck_assert(!hostlist_expand("a,,b"));
	// The forms SLURM_JOB_NODELIST takes (spank_ckpt reads it with this
	// expander): several bracket groups in a name, a suffix after the range,
	// a padded lower bound.
	auto job = hostlist_expand("rack[1-2]-gpu[01-02],n[7]x");
	ck_assert(job.has_value());
	std::vector<std::string> want = {"rack1-gpu01", "rack1-gpu02", "rack2-gpu01", "rack2-gpu02", "n7x"};
	ck_assert(*job == want);
	ck_assert(!hostlist_expand("n[1-999999999]", 1000));
	auto err = hostlist_expand("n[1-3", 1000);
	ck_assert(!err);
	ck_assert_msg(err.error().str().find("n[1-3") != std::string::npos, "%s", err.error().str().c_str());
	// Counting checks the same syntax and builds nothing: a range of a
	// trillion names is counted, not expanded.
	ck_assert_int_eq(*hostlist_count("gpu[08-10,12],login1,r[1-2]n[1-2]"), 9);
	ck_assert_int_eq(*hostlist_count("n[0-999999999999]"), 1000000000000ULL);
	ck_assert_int_eq(*hostlist_count("a[0-999999999999999999]b[0-999999999999999999]"), SIZE_MAX);
	ck_assert(!hostlist_count("n[1-"));
	ck_assert(!hostlist_count("a,,b"));
	// A file's budget: each expression fits on its own, not all together.
	HostlistBudget budget(10, "nodes");
	ck_assert_int_eq(budget.expand("a[1-6]")->size(), 6);
	ck_assert_int_eq(budget.expand("")->size(), 0);
	auto over = budget.expand("b[1-5]");
	ck_assert(!over);
	ck_assert_sstr_eq(over.error().str(), "the file names more than 10 nodes in all (one file describes at most 10)");
	ck_assert_int_eq(budget.expand("b[1-4]")->size(), 4);
}
END_TEST

START_TEST(subprocess_ends_and_descriptors)
{
	// A command whose background child keeps the pipe open is done when it
	// exits (scontrol-like tools may leave a helper behind).
	auto t0 = std::chrono::steady_clock::now();
	auto r = run_command({"sh", "-c", "echo answer; sleep 5 & exit 4"}, 20);
	ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
	ck_assert_int_eq(r->exit_code, 4);
	ck_assert_sstr_eq(r->output, "answer\n");
	ck_assert(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(3));
	// Killed by a signal: no exit code, the signal named.
	auto k = run_command({"sh", "-c", "kill -TERM $$"}, 5);
	ck_assert(k.has_value());
	ck_assert_int_eq(k->exit_code, -1);
	ck_assert_int_eq(k->signal, SIGTERM);
	// Run from a process whose stdin and stdout are closed (slurmstepd can
	// be one): the child still gets its output pipe on 1 and /dev/null on 0.
	int saved0 = dup(0), saved1 = dup(1);
	close(0);
	close(1);
	auto c = run_command({"sh", "-c", "echo out; read x; echo rc=$?"}, 5);
	dup2(saved0, 0);
	dup2(saved1, 1);
	close(saved0);
	close(saved1);
	ck_assert_msg(c.has_value(), "%s", c ? "" : c.error().str().c_str());
	ck_assert_sstr_eq(c->output, "out\nrc=1\n");
	// An absolute path is required where asked, the environment is the one given.
	RunOptions o;
	o.search_path = false;
	ck_assert(!run_command({"sh", "-c", "true"}, o));
	o.env = {"ONLY=this"};
	auto e = run_command({"/usr/bin/env"}, o);
	ck_assert(e.has_value());
	ck_assert_sstr_eq(e->output, "ONLY=this\n");
	// Output over the cap is read and dropped, and said.
	auto big = run_command({"sh", "-c", "head -c 100000 /dev/zero"}, 5, nullptr, 1000);
	ck_assert(big.has_value() && big->truncated && big->output.size() == 1000);
}
END_TEST

START_TEST(make_dirs_like_mkdir_p)
{
	char tmpl[] = "/tmp/loom-dirs-XXXXXX";
	ck_assert(mkdtemp(tmpl) != nullptr);
	std::string base = tmpl;
	ck_assert(make_dirs(base + "/a/b/c", 0700).has_value());
	struct stat st;
	ck_assert(stat((base + "/a/b/c").c_str(), &st) == 0 && S_ISDIR(st.st_mode));
	ck_assert_int_eq(st.st_mode & 0777, 0700);
	ck_assert(make_dirs(base + "/a/b/c/").has_value()); // exists already: fine
	// A file in the way is named, not taken for a directory.
	ck_assert(write_file_atomic(base + "/a/file", "x").has_value());
	auto bad = make_dirs(base + "/a/file/d");
	ck_assert(!bad);
	ck_assert_msg(bad.error().str().find(base + "/a/file: exists and is not a directory") != std::string::npos, "%s",
		      bad.error().str().c_str());
	ck_assert(!make_dirs(""));
	std::string cmd = "rm -rf " + base;
	ck_assert_int_eq(system(cmd.c_str()), 0);
}
END_TEST

START_TEST(gres_gpu_request_forms)
{
	struct Case {
		const char *tres;
		bool gpus;
		const char *type;
	} cases[] = {
		{"gres/gpu:h100=8", true, "h100"},  {"gres:gpu:h100:8", true, "h100"}, {"gres/gpu:h100:8", true, "h100"},
		{"gres:gpu:8", true, ""},           {"gres/gpu=8", true, ""},          {"gres/gpu", true, ""},
		{"gres/nic:1,gres/gpu:a100:2", true, "a100"}, {"", false, ""},          {"gres/nic:1", false, ""},
		{"gres/mygpu:2", false, ""},        {"gres/gpumem=40G", false, ""},    {"gres/gpumem=40G,gres/gpu:2", true, ""},
		{"gres/gpu_x:1", false, ""},        {"gpu:h100:8", true, "h100"},
	};
	for (const Case &k : cases) {
		GresGpu g = gres_gpu(k.tres);
		ck_assert_msg(g.gpus == k.gpus, "%s", k.tres);
		ck_assert_msg(g.type == k.type, "%s: type '%s'", k.tres, g.type.c_str());
	}
	// A node's Gres= as scontrol shows it (tests/data/health/scontrol/).
	ck_assert_int_eq(gres_gpu_count("gpu:8"), 8);
	ck_assert_int_eq(gres_gpu_count("gpu:h100:8(S:0-1)"), 8);
	ck_assert_int_eq(gres_gpu_count("gpu:h100:4(S:0),gpu:a100:4(S:1),nic:2"), 8);
	ck_assert_int_eq(gres_gpu_count("gpu"), 1);
	ck_assert_int_eq(gres_gpu_count("(null)"), -1);
	ck_assert_int_eq(gres_gpu_count(""), -1);
	ck_assert_int_eq(gres_gpu_count("nic:2"), -1);
	ck_assert_int_eq(gres_gpu_count("gpu:h100"), -1);   // no count: none we can read
	ck_assert_int_eq(gres_gpu_count("gpumem:80G"), -1);
}
END_TEST

START_TEST(admin_comment_segments_have_one_owner_each)
{
	// Each writer replaces its own segment and keeps the others', an
	// admin's own text included; spaces around " | " are not part of one.
	std::string ckpt = "loom ckpt: /ckpt/a/1: step 3, 1.0 KiB, committed 2026-12-06T10:00:00";
	std::string both = loom::admin_comment_replace("ticket 42 | " + ckpt, loom::admin_prefix_health,
						       "loom: restarted on spares n1 -> n2");
	std::string want = "ticket 42 | " + ckpt + " | loom: restarted on spares n1 -> n2";
	ck_assert_str_eq(both.c_str(), want.c_str());
	std::string again = loom::admin_comment_replace(both, loom::admin_prefix_health, "loom: moved off n2");
	want = "ticket 42 | " + ckpt + " | loom: moved off n2";
	ck_assert_str_eq(again.c_str(), want.c_str());
	std::string newer = loom::admin_comment_replace(again, loom::admin_prefix_ckpt, "loom ckpt: /ckpt/a/1: no checkpoint yet");
	ck_assert_str_eq(newer.c_str(), "ticket 42 | loom ckpt: /ckpt/a/1: no checkpoint yet | loom: moved off n2");
	std::string alone = loom::admin_comment_replace("", loom::admin_prefix_health, "loom: x");
	ck_assert_str_eq(alone.c_str(), "loom: x");
	auto segs = loom::admin_comment_segments("  a |  | loom: b | ");
	ck_assert_int_eq(segs.size(), 2);
	ck_assert(segs[0] == "a" && segs[1] == "loom: b");
	// "loom ckpt: " is not a "loom: " segment, nor the reverse.
	std::string apart = loom::admin_comment_replace(ckpt, loom::admin_prefix_health, "loom: y");
	want = ckpt + " | loom: y";
	ck_assert_str_eq(apart.c_str(), want.c_str());
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
	tcase_add_test(tc, files_atomic_write_and_read);
	tcase_add_test(tc, files_atomic_write_exclusive);
	tcase_add_test(tc, log_sink_routes_and_filters);
	tcase_add_test(tc, hostlists);
	tcase_add_test(tc, gres_gpu_request_forms);
	tcase_add_test(tc, make_dirs_like_mkdir_p);
	tcase_add_test(tc, subprocess_ends_and_descriptors);
	tcase_add_test(tc, admin_comment_segments_have_one_owner_each);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
