// Unit tests for the request file (lib/ckpt/request.hpp, protocol 7.5):
// write_request numbers requests 1, 2, 3... atomically; read_request and
// parse_request accept exactly {"seq", "reason", "time"} and refuse anything
// else with an error naming the file and the field; a symlink, a FIFO (without
// blocking), a directory and an oversized file are refused unread.
#include "lib/ckpt/agree.hpp"  // RequestWatch
#include "lib/ckpt/commit.hpp" // remove_tree
#include "lib/ckpt/coordinator.hpp"
#include "lib/ckpt/request.hpp"
#include "lib/util/fs.hpp"

#include <cerrno>
#include <cstdint>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <vector>

// Check defines a fail() macro: include it after the C++ library headers.
#include "tests/unit/check_main.hpp"

using namespace loom;
using namespace loom::ckpt;

namespace {

std::string temp_dir()
{
	char tmpl[] = "/tmp/loom-test-request-XXXXXX";
	char *d = ::mkdtemp(tmpl);
	ck_assert_ptr_nonnull(d);
	return d;
}

template <typename T>
void ck_assert_error_has(const expected<T> &r, const std::string &text)
{
	ck_assert_msg(!r.has_value(), "succeeded where an error with '%s' was expected", text.c_str());
	ck_assert_msg(r.error().str().find(text) != std::string::npos, "'%s' lacks '%s'", r.error().str().c_str(),
		      text.c_str());
}

void put(const std::string &path, const std::string &text)
{
	auto st = write_file_atomic(path, text, 0644);
	ck_assert_msg(st.has_value(), "%s", st ? "" : st.error().str().c_str());
}

} // namespace

START_TEST(write_numbers_requests_from_one)
{
	::umask(022);
	std::string dir = temp_dir();
	std::string file = dir + "/.loom-request";
	ck_assert_sstr_eq(request_name, ".loom-request");
	auto first = write_request(dir, "time_limit", 1700000000.5);
	ck_assert_msg(first.has_value(), "%s", first ? "" : first.error().str().c_str());
	ck_assert_int_eq(*first, 1);
	auto r = read_request(dir);
	ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
	ck_assert_int_eq(r->seq, 1);
	ck_assert_sstr_eq(r->reason, "time_limit");
	ck_assert(r->time == 1700000000.5);
	// One line of JSON, 0644, no temporary file left beside it.
	auto text = read_file(file);
	ck_assert(text.has_value());
	ck_assert_msg(text->find('\n') == text->size() - 1, "%s", text->c_str());
	struct stat sb;
	ck_assert_int_eq(::stat(file.c_str(), &sb), 0);
	ck_assert_int_eq(sb.st_mode & 0777, 0644);
	ck_assert(list_dir(dir).empty()); // only dot files: .loom-request
	ck_assert_int_eq(::access((file + ".tmp." + std::to_string(::getpid())).c_str(), F_OK), -1);
	// Each request is one more than the one before, whatever its reason.
	ck_assert_int_eq(*write_request(dir, "interval", 1700000100), 2);
	ck_assert_int_eq(*write_request(dir, "suspect", 1700000200), 3);
	r = read_request(dir);
	ck_assert(r.has_value() && r->seq == 3 && r->reason == "suspect" && r->time == 1700000200);
	// It counts on from what another writer left.
	put(file, "{\"seq\": 41, \"reason\": \"interval\", \"time\": 5}");
	ck_assert_int_eq(*write_request(dir, "interval", 1700000300), 42);
	(void)remove_tree(dir);
}
END_TEST

START_TEST(parse_refuses_all_but_the_three_fields)
{
	const std::string ok = R"({"seq": 7, "reason": "interval", "time": 1700000000})";
	auto good = parse_request(ok, "req");
	ck_assert_msg(good.has_value(), "%s", good ? "" : good.error().str().c_str());
	ck_assert_int_eq(good->seq, 7);
	// A reason the coordinator does not write is still a request.
	ck_assert(parse_request(R"({"seq": 1, "reason": "manual", "time": 0.25})", "req").has_value());
	ck_assert(parse_request(R"({"seq": 9007199254740991, "reason": "x", "time": 0})", "req").has_value());
	std::vector<std::pair<std::string, std::string>> bad = {
		{R"({"seq": 0, "reason": "interval", "time": 1})", "req: $.seq: 0 is out of range"},
		{R"({"seq": -3, "reason": "interval", "time": 1})", "req: $.seq: -3 is out of range"},
		{R"({"seq": 1.5, "reason": "interval", "time": 1})", "req: $.seq: expected an integer, found double"},
		{R"({"seq": "2", "reason": "interval", "time": 1})", "req: $.seq: expected an integer, found string"},
		{R"({"seq": 9007199254740992, "reason": "x", "time": 1})",
		 "req: $.seq: 9007199254740992 is out of range"},
		{R"({"seq": 99999999999999999999, "reason": "x", "time": 1})", "req: $.seq: "},
		{R"({"reason": "interval", "time": 1})", "req: $: missing required field 'seq'"},
		{R"({"seq": 1, "time": 1})", "req: $: missing required field 'reason'"},
		{R"({"seq": 1, "reason": 5, "time": 1})", "req: $.reason: expected a string, found int"},
		{R"({"seq": 1, "reason": "interval"})", "req: $: missing required field 'time'"},
		{R"({"seq": 1, "reason": "interval", "time": "now"})", "req: $.time: expected a number, found string"},
		{R"({"seq": 1, "reason": "interval", "time": -1})", "req: $.time: expected a unix time"},
		{R"({"seq": 1, "reason": "interval", "time": 1e300})", "req: $.time: expected a unix time"},
		{R"({"seq": 1, "reason": "interval", "time": 1, "step": 3})", "req: $.step: unknown field"},
		{R"([{"seq": 1, "reason": "interval", "time": 1}])", "req: $: expected an object"},
		{R"({"seq": 1, "reason": "interval", "time": 1} {})", "req:1:45: invalid JSON"},
		{R"({"seq": 1, "reason": "interval", "time": 1)", "req:1:"},
		{"", "unexpected end of input"},
		{R"({"seq": 1, "reason": [[[[[["deep"]]]]]], "time": 1})", "req:1:"},
	};
	for (const auto &[text, want] : bad)
		ck_assert_error_has(parse_request(text, "req"), want);
}
END_TEST

START_TEST(read_refuses_what_is_not_a_small_file)
{
	std::string dir = temp_dir();
	std::string file = dir + "/.loom-request";
	const std::string ok = "{\"seq\": 1, \"reason\": \"interval\", \"time\": 1}\n";
	// None yet: ENOENT, naming the file.
	int e = -1;
	auto none = read_request(dir, &e);
	ck_assert_error_has(none, file + ": cannot read: No such file");
	ck_assert_int_eq(e, ENOENT);
	// A symlink, even to a good request, is refused.
	put(dir + "/elsewhere", ok);
	ck_assert_int_eq(::symlink((dir + "/elsewhere").c_str(), file.c_str()), 0);
	ck_assert_error_has(read_request(dir, &e), file + ": is a symlink, not a file: refused");
	ck_assert_int_ne(e, ENOENT);
	ck_assert_int_eq(::unlink(file.c_str()), 0);
	// A FIFO with no writer: refused at once, never waited on (Check's timeout would fail a hang).
	ck_assert_int_eq(::mkfifo(file.c_str(), 0644), 0);
	ck_assert_error_has(read_request(dir), file + ": is a FIFO, not a file: refused");
	ck_assert_int_eq(::unlink(file.c_str()), 0);
	ck_assert_int_eq(::mkdir(file.c_str(), 0755), 0);
	ck_assert_error_has(read_request(dir), file + ": is a directory, not a file: refused");
	ck_assert_int_eq(::rmdir(file.c_str()), 0);
	// 4096 bytes are read; one more is refused unread, whatever it holds.
	std::string padded = ok.substr(0, ok.size() - 1) + std::string(request_max_bytes - ok.size() + 1, ' ');
	ck_assert_int_eq(padded.size(), request_max_bytes);
	put(file, padded);
	ck_assert(read_request(dir).has_value());
	put(file, padded + " ");
	ck_assert_error_has(read_request(dir), file + ": larger than 4096 bytes: refused");
	// A bad object names the file and the field.
	put(file, "{\"seq\": 0, \"reason\": \"interval\", \"time\": 1}");
	ck_assert_error_has(read_request(dir), file + ": $.seq: 0 is out of range");
	(void)remove_tree(dir);
}
END_TEST

START_TEST(write_refuses_to_renumber)
{
	std::string dir = temp_dir();
	std::string file = dir + "/.loom-request";
	const std::string broken = "{\"seq\": \"seven\"}";
	put(file, broken);
	auto r = write_request(dir, "interval", 1700000000);
	ck_assert_error_has(r, file + ": $.seq: expected an integer");
	ck_assert_error_has(r, "the next request cannot be numbered");
	ck_assert_sstr_eq(*read_file(file), broken); // left as it was
	// A symlink is not followed to number from, nor written through.
	ck_assert_int_eq(::unlink(file.c_str()), 0);
	put(dir + "/target", "{\"seq\": 9, \"reason\": \"interval\", \"time\": 1}");
	ck_assert_int_eq(::symlink((dir + "/target").c_str(), file.c_str()), 0);
	ck_assert_error_has(write_request(dir, "interval", 1700000000), file + ": is a symlink");
	ck_assert_sstr_eq(*read_file(dir + "/target"), "{\"seq\": 9, \"reason\": \"interval\", \"time\": 1}");
	ck_assert_int_eq(::unlink(file.c_str()), 0);
	// The last seq cannot grow.
	put(file, "{\"seq\": 9007199254740991, \"reason\": \"interval\", \"time\": 1}");
	ck_assert_error_has(write_request(dir, "interval", 1700000000), "seq 9007199254740991 cannot grow");
	ck_assert_int_eq(::unlink(file.c_str()), 0);
	// Reasons are ask names; a time is a unix time.
	ck_assert_error_has(write_request(dir, "", 1), file + ": reason '': expected a lower-case word");
	ck_assert_error_has(write_request(dir, "Time Limit", 1), "reason 'Time Limit'");
	ck_assert_error_has(write_request(dir, std::string(33, 'a'), 1), "1 to 32 bytes");
	ck_assert_error_has(write_request(dir, "interval", -5), file + ": time -5");
	ck_assert_int_eq(::access(file.c_str(), F_OK), -1);
	// A directory that is not there: the error names the file it tried.
	ck_assert_error_has(write_request(dir + "/gone", "interval", 1), dir + "/gone/.loom-request");
	(void)remove_tree(dir);
}
END_TEST

START_TEST(reasons_are_the_asks)
{
	ck_assert_str_eq(request_reason(Ask::interval), "interval");
	ck_assert_str_eq(request_reason(Ask::time_limit), "time_limit");
	ck_assert_str_eq(request_reason(Ask::suspect), "suspect");
	// Each is a reason write_request takes.
	std::string dir = temp_dir();
	for (Ask a : {Ask::interval, Ask::time_limit, Ask::suspect})
		ck_assert_msg(write_request(dir, request_reason(a), 1).has_value(), "%s", request_reason(a));
	ck_assert_int_eq(read_request(dir)->seq, 3);
	(void)remove_tree(dir);
}
END_TEST

START_TEST(format_is_read_back)
{
	Request q{123456789012, "suspect", 1712345678.25};
	std::string text = format_request(q);
	ck_assert_msg(text.find("\"seq\":123456789012") != std::string::npos, "%s", text.c_str());
	auto back = parse_request(text, "formatted");
	ck_assert_msg(back.has_value(), "%s", back ? "" : back.error().str().c_str());
	ck_assert(back->seq == q.seq && back->reason == q.reason && back->time == q.time);
	// A whole-second time is still a number the reader takes.
	auto whole = parse_request(format_request(Request{1, "interval", 1700000000}), "formatted");
	ck_assert(whole.has_value() && whole->time == 1700000000);
}
END_TEST

// spank_ckpt writes the request, then signals: the save the signal starts
// serves that request although the watch has not read the file yet, so the
// file does not ask for a second save a period later.
START_TEST(a_save_serves_the_request_that_came_with_the_signal)
{
	std::string dir = temp_dir();
	double now = 100;
	RequestWatch w(
		dir, 1.0, [&now] { return now; }, [](const std::string &) {});
	ck_assert(!w.pending());
	ck_assert_int_eq(*write_request(dir, "time_limit", 1700000000), 1);
	now += 0.2;
	ck_assert(!w.pending()); // the period has not come: the file is not read
	w.served();              // the signal's save
	for (int i = 0; i < 3; i++) {
		now += 1;
		ck_assert_msg(!w.pending(), "request 1 asks again %d s after the save that served it", i + 1);
	}
	ck_assert_int_eq(*write_request(dir, "interval", 1700000005), 2);
	now += 1;
	ck_assert(w.pending()); // a later request still asks
	(void)remove_tree(dir);
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("ckpt_request");
	TCase *tc = tcase_create("request");
	tcase_add_test(tc, write_numbers_requests_from_one);
	tcase_add_test(tc, parse_refuses_all_but_the_three_fields);
	tcase_add_test(tc, read_refuses_what_is_not_a_small_file);
	tcase_add_test(tc, write_refuses_to_renumber);
	tcase_add_test(tc, reasons_are_the_asks);
	tcase_add_test(tc, format_is_read_back);
	tcase_add_test(tc, a_save_serves_the_request_that_came_with_the_signal);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
