// Unit tests for the one decision of every rank (lib/ckpt/agree.hpp,
// protocol 7.5): the stamp file is read and written strictly; rank 0 stamps a
// step a few steps (and seconds) ahead, every rank says yes exactly there,
// once per seq, a rank past it says so once and does not save; stamps there
// at the start do not count; the file is re-read only when it changed. The
// all-reduce hook runs on calls counted alike, twice each time. The request
// file is read at most once per period, a bad one told once.
// (tests/unit/test_ckpt_agree_python.cpp: the Python SDK reads and writes the
// same stamps.)
#include "lib/ckpt/agree.hpp"
#include "lib/ckpt/commit.hpp" // remove_tree
#include "lib/ckpt/layout.hpp"
#include "lib/ckpt/request.hpp"
#include "lib/util/fs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fcntl.h>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

// Check defines a fail() macro: include it after the C++ library headers.
#include "tests/unit/check_main.hpp"

using namespace loom;
using namespace loom::ckpt;

namespace {

// A new directory, removed when the test's process exits.
std::string temp_dir()
{
	static std::vector<std::string> made;
	char tmpl[] = "/tmp/loom-test-agree-XXXXXX";
	char *d = ::mkdtemp(tmpl);
	ck_assert_ptr_nonnull(d);
	if (made.empty())
		std::atexit([] {
			for (const auto &m : made)
				(void)loom::ckpt::remove_tree(m);
		});
	made.push_back(d);
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

// A clock the test moves, and the lines said.
struct Fake {
	std::shared_ptr<double> now = std::make_shared<double>(100.0);
	std::shared_ptr<std::vector<std::string>> said = std::make_shared<std::vector<std::string>>();
	Clock clock() const
	{
		auto t = now;
		return [t] { return *t; };
	}
	Say say() const
	{
		auto s = said;
		return [s](const std::string &line) { s->push_back(line); };
	}
};

Stamp stamp_in(const std::string &path)
{
	auto s = read_stamp(path);
	ck_assert_msg(s.has_value(), "%s", s ? "" : s.error().str().c_str());
	ck_assert_msg(s->has_value(), "%s: no stamp", path.c_str());
	return **s;
}

// Calls decide(false, step) from 'from' to 'to'; the steps that said yes.
std::vector<int64_t> yes_steps(StampAgreement &a, int64_t from, int64_t to)
{
	std::vector<int64_t> yes;
	for (int64_t s = from; s <= to; s++)
		if (a.decide(false, s))
			yes.push_back(s);
	return yes;
}

} // namespace

START_TEST(stamp_text_is_strict)
{
	ck_assert_sstr_eq(format_stamp({14, 1}), "{\"step\": 14, \"seq\": 1}\n");
	auto s = parse_stamp("{\"seq\":3,\"step\":0}", "f");
	ck_assert(s.has_value());
	ck_assert_int_eq(s->step, 0);
	ck_assert_int_eq(s->seq, 3);
	ck_assert_error_has(parse_stamp("{\"step\": 1, \"seq\": 1, \"x\": 2}", "f"), "f: $.x");
	ck_assert_error_has(parse_stamp("{\"step\": 1}", "f"), "f: $: missing required field 'seq'");
	ck_assert_error_has(parse_stamp("{\"step\": -1, \"seq\": 1}", "f"), "f: $.step");
	ck_assert_error_has(parse_stamp("{\"step\": 1, \"seq\": 0}", "f"), "f: $.seq");
	ck_assert_error_has(parse_stamp("{\"step\": 1.5, \"seq\": 1}", "f"), "f: $.step");
	ck_assert_error_has(parse_stamp("{\"step\": \"1\", \"seq\": 1}", "f"), "f: $.step");
	ck_assert_error_has(parse_stamp("{\"step\": true, \"seq\": 1}", "f"), "f: $.step");
	ck_assert_error_has(parse_stamp("{\"step\": 1, \"seq\": 9007199254740992}", "f"), "f: $.seq");
	ck_assert_error_has(parse_stamp("{\"step\": 1000000000000, \"seq\": 1}", "f"), "f: $.step");
	ck_assert_error_has(parse_stamp("[1, 1]", "f"), "f");
	ck_assert_error_has(parse_stamp("{\"step\": 1, ", "f"), "f");
}
END_TEST

START_TEST(stamp_file_is_a_small_regular_file)
{
	::umask(022);
	std::string dir = temp_dir(), path = stamp_path(dir, "j1_r0_s0");
	ck_assert_sstr_eq(path, dir + "/.loom-save-at.j1_r0_s0");
	auto none = read_stamp(path);
	ck_assert(none.has_value() && !none->has_value());
	put(dir + "/elsewhere", format_stamp({3, 1}));
	ck_assert_int_eq(::symlink((dir + "/elsewhere").c_str(), path.c_str()), 0);
	ck_assert_error_has(read_stamp(path), path + ": is a symlink, not a file: refused");
	ck_assert_int_eq(::unlink(path.c_str()), 0);
	ck_assert_int_eq(::mkfifo(path.c_str(), 0644), 0); // refused, never waited on
	ck_assert_error_has(read_stamp(path), path + ": is a FIFO");
	ck_assert_int_eq(::unlink(path.c_str()), 0);
	ck_assert_int_eq(::mkdir(path.c_str(), 0755), 0);
	ck_assert_error_has(read_stamp(path), path + ": is a directory");
	ck_assert_int_eq(::rmdir(path.c_str()), 0);
	put(path, "{\"step\": 1, \"seq\": 1}" + std::string(4096, ' '));
	ck_assert_error_has(read_stamp(path), path + ": larger than 4096 bytes");
	put(path, "{\"step\": 1, \"seq\": 1}" + std::string(4000, ' '));
	ck_assert_int_eq(stamp_in(path).step, 1);
}
END_TEST

START_TEST(write_makes_the_directory_and_a_0644_file)
{
	::umask(022);
	std::string dir = temp_dir() + "/ckpt", path = stamp_path(dir, "r");
	ck_assert(write_stamp(path, {7, 2}).has_value());
	struct stat st;
	ck_assert_int_eq(::stat(dir.c_str(), &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0700);
	ck_assert_int_eq(::stat(path.c_str(), &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0644);
	ck_assert_sstr_eq(*read_file(path), "{\"step\": 7, \"seq\": 2}\n");
	ck_assert_int_eq(static_cast<long>(list_dir(dir).size()), 0); // only the dot file, no .tmp
	ck_assert(!write_stamp(path, {-1, 1}).has_value());
	ck_assert(!write_stamp(path, {1, 0}).has_value());
}
END_TEST

START_TEST(rank0_stamps_ahead_and_every_rank_saves_there)
{
	Fake f;
	std::string dir = temp_dir();
	StampAgreement r0(dir, "run", 0, 2.0, f.clock(), f.say());
	StampAgreement r1(dir, "run", 1, 2.0, f.clock(), f.say());
	// Steps of 0.5 s: the lead is ceil(2.0 / 0.5) = 4 steps.
	for (int64_t s = 1; s <= 9; s++, *f.now += 0.5) {
		ck_assert(!r0.decide(false, s));
		ck_assert(!r1.decide(false, s));
	}
	ck_assert(!r0.decide(true, 10));
	Stamp st = stamp_in(r0.path());
	ck_assert_int_eq(st.step, 14);
	ck_assert_int_eq(st.seq, 1);
	// Still wishing: no second stamp while this one is pending.
	ck_assert(!r0.decide(true, 11));
	ck_assert_int_eq(stamp_in(r0.path()).seq, 1);
	ck_assert(!r0.decide(false, 12) && !r0.decide(false, 13));
	ck_assert(r0.decide(true, 14));
	ck_assert(!r0.decide(false, 15));
	ck_assert(yes_steps(r1, 10, 20) == std::vector<int64_t>{14});
	ck_assert(f.said->empty());
	// The next wish is the next seq; with slow steps the lead is 2 steps.
	*f.now += 100;
	ck_assert(!r0.decide(true, 16));
	st = stamp_in(r0.path());
	ck_assert_int_eq(st.step, 18);
	ck_assert_int_eq(st.seq, 2);
	ck_assert(yes_steps(r1, 17, 19) == std::vector<int64_t>{18});
}
END_TEST

START_TEST(first_stamp_leads_two_steps)
{
	Fake f;
	std::string dir = temp_dir();
	StampAgreement r0(dir, "run", 0, 2.0, f.clock(), f.say());
	ck_assert(!r0.decide(true, 0)); // no step time yet
	ck_assert_int_eq(stamp_in(r0.path()).step, 2);
	ck_assert(yes_steps(r0, 1, 3) == std::vector<int64_t>{2});
}
END_TEST

START_TEST(a_rank_past_the_stamp_says_so_once)
{
	Fake f;
	std::string dir = temp_dir();
	StampAgreement r2(dir, "run", 2, 2.0, f.clock(), f.say());
	ck_assert(write_stamp(r2.path(), {14, 1}).has_value());
	ck_assert(!r2.decide(true, 20));
	ck_assert_int_eq(static_cast<long>(f.said->size()), 1);
	ck_assert_sstr_eq(f.said->at(0), "rank 2 is at step 20, past the stamped step 14: it does not save it, "
					 "and that checkpoint will not commit");
	ck_assert(yes_steps(r2, 21, 30).empty());
	ck_assert_int_eq(static_cast<long>(f.said->size()), 1);
	ck_assert_int_eq(r2.done(), 1);
}
END_TEST

START_TEST(stamps_made_before_do_not_count)
{
	Fake f;
	std::string dir = temp_dir();
	ck_assert(write_stamp(stamp_path(dir, "run"), {5, 3}).has_value());
	StampAgreement r1(dir, "run", 1, 2.0, f.clock(), f.say());
	StampAgreement r0(dir, "run", 0, 2.0, f.clock(), f.say());
	ck_assert_int_eq(r1.done(), 3);
	ck_assert(yes_steps(r1, 4, 6).empty());
	ck_assert(!r0.decide(true, 6));
	Stamp st = stamp_in(r0.path());
	ck_assert_int_eq(st.seq, 4);
	ck_assert_int_eq(st.step, 8);
	ck_assert(yes_steps(r1, 7, 9) == std::vector<int64_t>{8});
	// Another launch's stamp is another file.
	StampAgreement other(dir, "run2", 1, 2.0, f.clock(), f.say());
	ck_assert_int_eq(other.done(), 0);
	ck_assert(yes_steps(other, 7, 9).empty());
}
END_TEST

START_TEST(the_file_is_read_again_only_when_it_changed)
{
	Fake f;
	std::string dir = temp_dir(), path = stamp_path(dir, "run");
	StampAgreement r1(dir, "run", 1, 2.0, f.clock(), f.say());
	ck_assert(write_stamp(path, {30, 1}).has_value());
	ck_assert(!r1.decide(false, 9));
	ck_assert_int_eq(r1.stamp().step, 30);
	// The same inode, size and mtime, other bytes: not read again.
	struct stat before;
	ck_assert_int_eq(::stat(path.c_str(), &before), 0);
	int fd = ::open(path.c_str(), O_WRONLY);
	ck_assert_int_ge(fd, 0);
	std::string text = format_stamp({10, 1});
	ck_assert_int_eq(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
	struct timespec times[2] = {before.st_atim, before.st_mtim};
	ck_assert_int_eq(::futimens(fd, times), 0);
	::close(fd);
	ck_assert(!r1.decide(false, 10));
	ck_assert_int_eq(r1.stamp().step, 30);
	// A new mtime: read again.
	struct timespec later[2] = {before.st_atim, {before.st_mtim.tv_sec + 1, before.st_mtim.tv_nsec}};
	ck_assert_int_eq(::utimensat(AT_FDCWD, path.c_str(), later, 0), 0);
	ck_assert(r1.decide(false, 10));
	ck_assert_int_eq(r1.stamp().step, 10);
}
END_TEST

START_TEST(a_bad_stamp_is_told_once_and_ignored)
{
	Fake f;
	std::string dir = temp_dir(), path = stamp_path(dir, "run");
	StampAgreement r1(dir, "run", 1, 2.0, f.clock(), f.say());
	put(path, "{\"step\": 3}");
	ck_assert(yes_steps(r1, 1, 2).empty());
	put(path, "{\"step\": 4, \"seq\": \"1\"}");
	ck_assert(yes_steps(r1, 3, 5).empty());
	ck_assert_int_eq(static_cast<long>(f.said->size()), 1);
	ck_assert_msg(f.said->at(0) == "ignoring the stamped step: " + path + ": $: missing required field 'seq'", "%s",
		      f.said->at(0).c_str());
	put(path, format_stamp({7, 1}));
	ck_assert(yes_steps(r1, 6, 8) == std::vector<int64_t>{7});
	ck_assert(!r1.decide(false, -1));
	ck_assert_int_eq(static_cast<long>(f.said->size()), 1);
}
END_TEST

START_TEST(step_time_is_an_average_of_the_intervals)
{
	Fake f;
	StepTimer t(f.clock());
	ck_assert(t.tick() == 0); // no interval yet
	*f.now += 1;
	ck_assert(t.tick() == 1); // the first as it is
	*f.now += 2;
	ck_assert_msg(std::abs(t.tick() - 1.2) < 1e-9, "%g", t.seconds()); // 0.8 * 1 + 0.2 * 2
	*f.now += 0.2;
	ck_assert_msg(std::abs(t.tick() - 1.0) < 1e-9, "%g", t.seconds());
}
END_TEST

START_TEST(group_calls_the_hook_on_calls_counted_alike)
{
	Fake f;
	std::vector<int64_t> got;
	int64_t peer_wish = 0, peer_us = 0; // another rank's values
	bool wish_next = true;
	GroupAgreement g([&](int64_t v) {
		got.push_back(v);
		bool is_wish = wish_next;
		wish_next = !wish_next;
		return std::max(v, is_wish ? peer_wish : peer_us);
	}, 1.0, f.clock());
	// Call 1 agrees (no step time yet): the next is call 2.
	ck_assert(!g.decide(false));
	ck_assert(got == (std::vector<int64_t>{0, 0}));
	ck_assert_int_eq(g.next_call(), 2);
	// Call 2: this rank's steps take 0.125 s, the slowest 0.25 s: every 4 calls.
	peer_us = 250000;
	*f.now += 0.125;
	ck_assert(g.decide(true));
	ck_assert(got == (std::vector<int64_t>{0, 0, 1, 125000}));
	ck_assert_int_eq(g.next_call(), 6);
	for (int i = 3; i < 6; i++) {
		*f.now += 0.125;
		ck_assert(!g.decide(true));
	}
	ck_assert_int_eq(static_cast<long>(got.size()), 4);
	// Call 6: another rank's wish is the answer.
	peer_wish = 1;
	*f.now += 0.125;
	ck_assert(g.decide(false));
	ck_assert_int_eq(static_cast<long>(got.size()), 6);
	ck_assert_int_eq(got[4], 0);
	ck_assert_int_ge(got[5], 125000); // the average of 0.125 s steps, in whole microseconds
	ck_assert_int_le(got[5], 125001);
	ck_assert_int_eq(g.next_call(), 10);
}
END_TEST

START_TEST(requests_are_read_at_most_once_per_period)
{
	Fake f;
	std::string dir = temp_dir();
	ck_assert_int_eq(*write_request(dir, "interval", 1700000000), 1);
	RequestWatch w(dir, 1.0, f.clock(), f.say()); // seq 1 is older than this program
	ck_assert(!w.pending());
	ck_assert_int_eq(*write_request(dir, "time_limit", 1700000001), 2);
	*f.now += 0.5;
	ck_assert(!w.pending()); // not read yet
	*f.now += 0.5;
	ck_assert(w.pending());
	ck_assert(w.pending());
	// A request once read stays until a save serves it, file or not.
	ck_assert_int_eq(::rename((dir + "/.loom-request").c_str(), (dir + "/kept").c_str()), 0);
	*f.now += 1;
	ck_assert(w.pending());
	ck_assert_int_eq(::rename((dir + "/kept").c_str(), (dir + "/.loom-request").c_str()), 0);
	w.served();
	ck_assert(!w.pending());
	*f.now += 5;
	ck_assert(!w.pending());
	put(dir + "/.loom-request", "{\"seq\": 3}");
	*f.now += 1;
	ck_assert(!w.pending());
	*f.now += 1;
	ck_assert(!w.pending());
	ck_assert_int_eq(static_cast<long>(f.said->size()), 1);
	ck_assert_msg(f.said->at(0).find("ignoring the checkpoint request file: " + dir + "/.loom-request: ") == 0,
		      "%s", f.said->at(0).c_str());
	put(dir + "/.loom-request", format_request({3, "suspect", 1700000002}));
	*f.now += 1;
	ck_assert(w.pending());
	ck_assert_int_eq(w.latest(), 3);
	ck_assert_int_eq(static_cast<long>(f.said->size()), 1);
	RequestWatch none(temp_dir() + "/absent", 1.0, f.clock(), f.say());
	*f.now += 1;
	ck_assert(!none.pending());
	ck_assert_int_eq(static_cast<long>(f.said->size()), 1);
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("ckpt_agree");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, stamp_text_is_strict);
	tcase_add_test(tc, stamp_file_is_a_small_regular_file);
	tcase_add_test(tc, write_makes_the_directory_and_a_0644_file);
	tcase_add_test(tc, rank0_stamps_ahead_and_every_rank_saves_there);
	tcase_add_test(tc, first_stamp_leads_two_steps);
	tcase_add_test(tc, a_rank_past_the_stamp_says_so_once);
	tcase_add_test(tc, stamps_made_before_do_not_count);
	tcase_add_test(tc, the_file_is_read_again_only_when_it_changed);
	tcase_add_test(tc, a_bad_stamp_is_told_once_and_ignored);
	tcase_add_test(tc, step_time_is_an_average_of_the_intervals);
	tcase_add_test(tc, group_calls_the_hook_on_calls_counted_alike);
	tcase_add_test(tc, requests_are_read_at_most_once_per_period);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
