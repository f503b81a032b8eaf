// Unit tests for the one decision of every rank (lib/ckpt/agree.hpp,
// protocol 7.5): the stamp file is read and written strictly; rank 0 stamps a
// step a few steps (and seconds) ahead, every rank says yes exactly there,
// once per seq, a rank past it says so once and does not save; stamps there
// at the start do not count; the file is re-read only when it changed. The
// suite, with the all-reduce hook and the request file
// (test_ckpt_agree_group.cpp).
// (tests/unit/test_ckpt_agree_python.cpp: the Python SDK reads and writes the
// same stamps.)
#include "lib/ckpt/agree.hpp"
#include "lib/ckpt/layout.hpp"
#include "lib/util/fs.hpp"

#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

// Check defines a fail() macro: include it after the C++ library headers.
#include "tests/unit/ckpt_agree_fixture.hpp"

using namespace loom;
using namespace loom::ckpt;
using namespace loom::ckpt::testing;

namespace {

template <typename T>
void ck_assert_error_has(const expected<T> &r, const std::string &text)
{
	ck_assert_msg(!r.has_value(), "succeeded where an error with '%s' was expected", text.c_str());
	ck_assert_msg(r.error().str().find(text) != std::string::npos, "'%s' lacks '%s'", r.error().str().c_str(),
		      text.c_str());
}

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
	suite_add_tcase(s, tc);
	suite_add_tcase(s, ckpt_agree_group_tests());
	return s;
}

LOOM_CHECK_MAIN(make_suite)
