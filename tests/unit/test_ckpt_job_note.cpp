// Unit tests for what a --ckpt job shows and is told (lib/ckpt/job_note.hpp,
// is_loom_entry, decide_start with a framework's own files): the note in the
// job's AdminComment reads back to its directory and step, shares the field
// with jobcomp/health's note without erasing it, and refuses a directory it
// could not be read back from; a job whose directory holds only files loom
// did not write is not held for "no progress" that loom cannot see.
#include "lib/ckpt/job_note.hpp"
#include "lib/ckpt/layout.hpp"
#include "lib/ckpt/restart.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

// Check defines a fail() macro: include it after the C++ library headers.
#include "tests/unit/check_main.hpp"

using namespace loom;
using namespace loom::ckpt;

START_TEST(note_reads_back_its_directory_and_step)
{
	JobNote n{"/scratch/ckpt/alice/run: step 7 notes", 3138, 1610612736, 1765048433};
	auto text = format_job_note(n);
	ck_assert_msg(text.has_value(), "%s", text ? "" : text.error().str().c_str());
	ck_assert_msg(text->find("loom ckpt: /scratch/ckpt/alice/run: step 7 notes: step 3138, 1.5 GiB, committed ") ==
			      0,
		      "%s", text->c_str());
	auto back = parse_job_note("loom: restarted on spares n3 -> n4 | " + *text + " ", "job 5");
	ck_assert_msg(back.has_value(), "%s", back ? "" : back.error().str().c_str());
	ck_assert_str_eq(back->dir.c_str(), n.dir.c_str());
	ck_assert_int_eq(back->step, 3138);
	auto none = format_job_note({"/scratch/ckpt/bob", -1, 0, 0});
	ck_assert_str_eq(none.value().c_str(), "loom ckpt: /scratch/ckpt/bob: no checkpoint yet");
	auto b = parse_job_note(*none, "job 6");
	ck_assert(b.has_value() && b->dir == "/scratch/ckpt/bob" && b->step == -1);
}
END_TEST

START_TEST(note_refuses_what_it_cannot_read_back)
{
	ck_assert(!format_job_note({"/a | b", 1, 1, 1}).has_value());
	ck_assert(!format_job_note({"/a\nb", 1, 1, 1}).has_value());
	ck_assert(!format_job_note({"", 1, 1, 1}).has_value());
	auto missing = parse_job_note("loom: restarted on spares n3 -> n4", "job 9");
	ck_assert(!missing.has_value());
	ck_assert_msg(missing.error().str().find("job 9") != std::string::npos, "%s", missing.error().str().c_str());
	ck_assert_msg(missing.error().str().find("no loom ckpt note") != std::string::npos, "%s",
		      missing.error().str().c_str());
	ck_assert(!parse_job_note("loom ckpt: /x: step many", "job 9").has_value());
	ck_assert(!parse_job_note("loom ckpt: garbage", "job 9").has_value());
	ck_assert(!parse_job_note("", "job 9").has_value());
}
END_TEST

START_TEST(merge_keeps_the_other_notes)
{
	std::string health = "loom: restarted on spares n3 -> n4 (leaf l1) in reservation r";
	std::string alone = merge_job_note("", "loom ckpt: /d: no checkpoint yet");
	ck_assert_str_eq(alone.c_str(), "loom ckpt: /d: no checkpoint yet");
	std::string one = merge_job_note(health, "loom ckpt: /d: no checkpoint yet");
	ck_assert(one == health + " | loom ckpt: /d: no checkpoint yet");
	std::string two = merge_job_note(one, "loom ckpt: /d: step 5, 1 B, committed x");
	ck_assert_msg(two == health + " | loom ckpt: /d: step 5, 1 B, committed x", "%s", two.c_str());
	// Ours first, then someone's: replaced in place; a duplicate of ours goes.
	std::string mixed =
		"loom ckpt: /d: step 1, 1 B, committed x | admin text | loom ckpt: /d: step 2, 1 B, committed y";
	std::string merged = merge_job_note(mixed, "loom ckpt: /d: step 3, 1 B, committed z");
	ck_assert_str_eq(merged.c_str(), "loom ckpt: /d: step 3, 1 B, committed z | admin text");
}
END_TEST

START_TEST(sizes_as_a_person_reads_them)
{
	const std::pair<uint64_t, const char *> cases[] = {
		{0, "0 B"}, {1023, "1023 B"}, {1536, "1.5 KiB"}, {100ull << 20, "100 MiB"}, {3ull << 40, "3.0 TiB"}};
	for (const auto &[bytes, want] : cases) {
		std::string got = human_bytes(bytes);
		ck_assert_str_eq(got.c_str(), want);
	}
}
END_TEST

START_TEST(loom_entries_are_told_from_a_programs_own)
{
	for (const char *mine : {"step-000000000100", "step-000000000100.run-j1_r0_s0.2", "latest", "latest.tmp.123",
				 ".staging", ".trash", ".loom-request", ".loom-starts.json"})
		ck_assert_msg(is_loom_entry(mine), "%s", mine);
	for (const char *theirs : {"checkpoint-500", "last.ckpt", "epoch=0-step=100.ckpt", "latest-model", "steps"})
		ck_assert_msg(!is_loom_entry(theirs), "%s", theirs);
}
END_TEST

START_TEST(no_progress_hold_needs_progress_loom_can_see)
{
	// Restarts 0 and 1 found no loom checkpoint; this is restart 2.
	std::vector<StartRecord> before = {{0, -1, 100, "7", false}, {1, -1, 200, "7", false}};
	ck_assert(decide_start(2, 10, -1, before).verdict == StartVerdict::hold_no_progress);
	// The directory holds a framework's own files: loom cannot judge.
	ck_assert(decide_start(2, 10, -1, before, true).verdict == StartVerdict::run);
	// The budget still stops it.
	ck_assert(decide_start(11, 10, -1, before, true).verdict == StartVerdict::hold_budget);
	// Loom saw a checkpoint once: its own evidence counts, foreign files or not.
	std::vector<StartRecord> seen = {{0, -1, 100, "7", false}, {1, 40, 200, "7", false}};
	ck_assert(decide_start(2, 10, 40, seen, true).verdict == StartVerdict::hold_no_progress);
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("ckpt_job_note");
	TCase *tc = tcase_create("job_note");
	tcase_add_test(tc, note_reads_back_its_directory_and_step);
	tcase_add_test(tc, note_refuses_what_it_cannot_read_back);
	tcase_add_test(tc, merge_keeps_the_other_notes);
	tcase_add_test(tc, sizes_as_a_person_reads_them);
	tcase_add_test(tc, loom_entries_are_told_from_a_programs_own);
	tcase_add_test(tc, no_progress_hold_needs_progress_loom_can_see);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
