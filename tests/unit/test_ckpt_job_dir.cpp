// Unit tests for a job's checkpoint directory: made below the root without
// following symlinks or taking another user's directory, and the record of
// its starts that decides the restart budget and progress.
#include "lib/ckpt/commit.hpp"
#include "lib/ckpt/layout.hpp"
#include "lib/ckpt/restart.hpp"
#include "lib/ckpt/safe_dir.hpp"
#include "lib/util/fs.hpp"

#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

// Check defines a fail() macro: include it after the C++ library headers.
#include "tests/unit/ckpt_protocol_fixture.hpp"

using namespace loom;
using namespace loom::ckpt;

START_TEST(safe_dir_refuses_symlinks_and_foreign_dirs)
{
	std::string root = temp_dir();
	ck_assert(make_checkpoint_dir(root, root + "/alice/42").has_value());
	struct stat sb;
	ck_assert_int_eq(::stat((root + "/alice/42").c_str(), &sb), 0);
	ck_assert_int_eq(sb.st_mode & 0777, 0700);
	// A symlink planted below the root is refused, not followed.
	std::string outside = temp_dir();
	ck_assert_int_eq(::symlink(outside.c_str(), (root + "/evil").c_str()), 0);
	auto st = make_checkpoint_dir(root, root + "/evil/43");
	ck_assert(!st.has_value());
	ck_assert_msg(st.error().str().find("symlink") != std::string::npos, "%s", st.error().str().c_str());
	ck_assert_int_ne(::stat((outside + "/43").c_str(), &sb), 0);
	ck_assert(!make_checkpoint_dir(root, "/etc/x").has_value());
	// A directory that belongs to someone else is refused (as a user).
	if (::geteuid() == 0) {
		ck_assert_int_eq(::mkdir((root + "/bob").c_str(), 0777), 0);
		ck_assert_int_eq(::chown((root + "/bob").c_str(), 4242, 4242), 0);
		::chmod(root.c_str(), 0777);
		Credentials alice{4343, 4343, {}};
		auto r = run_as(alice, [&]() -> expected<std::string> {
			auto s2 = make_checkpoint_dir(root, root + "/bob/44");
			if (!s2)
				return unexpected(s2.error());
			return std::string("made");
		});
		ck_assert(!r.has_value());
		ck_assert_msg(r.error().str().find("belongs to uid 4242") != std::string::npos, "%s",
			      r.error().str().c_str());
		auto made = run_as(alice, [&]() -> expected<std::string> {
			auto s2 = make_checkpoint_dir(root, root + "/alice2/1");
			if (!s2)
				return unexpected(s2.error());
			return std::to_string(::geteuid());
		});
		ck_assert_msg(made.has_value(), "%s", made ? "" : made.error().str().c_str());
		ck_assert_sstr_eq(*made, "4343");
		ck_assert_int_eq(::stat((root + "/alice2/1").c_str(), &sb), 0);
		ck_assert_int_eq(sb.st_uid, 4343);
	}
	(void)remove_tree(root);
	(void)remove_tree(outside);
}
END_TEST

START_TEST(restart_budget_and_progress)
{
	std::vector<StartRecord> none;
	ck_assert(decide_start(0, 3, -1, none).verdict == StartVerdict::run);
	ck_assert(decide_start(1, 3, -1, {{0, -1, 1, "9"}}).verdict == StartVerdict::run);
	auto d = decide_start(4, 3, 500, {{3, 400, 1, "9"}});
	ck_assert(d.verdict == StartVerdict::hold_budget);
	ck_assert_msg(d.reason.find("--ckpt-max-restarts=3") != std::string::npos, "%s", d.reason.c_str());
	// Restart 2 after restart 1 found step 400 and nothing newer was written.
	d = decide_start(2, 10, 400, {{0, -1, 1, "9"}, {1, 400, 2, "9"}});
	ck_assert(d.verdict == StartVerdict::hold_no_progress);
	ck_assert_msg(d.reason.find("since restart 1") != std::string::npos, "%s", d.reason.c_str());
	ck_assert(decide_start(2, 10, 500, {{0, -1, 1, "9"}, {1, 400, 2, "9"}}).verdict == StartVerdict::run);
	// Held at restart 2, released (the hold's requeue counted restart 3): it runs.
	std::vector<StartRecord> held = {{0, -1, 1, "9"}, {1, 400, 2, "9"}, {2, 400, 3, "9", true}};
	ck_assert(decide_start(3, 10, 400, held).verdict == StartVerdict::run);
	// Released without a restart counted (same count as the held start): it runs.
	ck_assert(decide_start(2, 10, 400, held).verdict == StartVerdict::run);
	// The released run failed again without a checkpoint: held again, naming that run.
	held.push_back({3, 400, 4, "9"});
	d = decide_start(4, 10, 400, held);
	ck_assert(d.verdict == StartVerdict::hold_no_progress);
	ck_assert_msg(d.reason.find("since restart 3") != std::string::npos, "%s", d.reason.c_str());
	// Released after the budget was used up: one more run; failing again, held again.
	ck_assert(decide_start(5, 3, 500, {{4, 500, 1, "9", true}}).verdict == StartVerdict::run);
	ck_assert(decide_start(6, 3, 600, {{4, 500, 1, "9", true}, {5, 500, 2, "9"}}).verdict ==
		  StartVerdict::hold_budget);

	std::string dir = temp_dir();
	ck_assert(record_start(dir, {0, -1, 1, "9"}).has_value());
	ck_assert(record_start(dir, {1, 400, 2, "9"}).has_value());
	auto again = record_start(dir, {1, 400, 3, "9"});
	ck_assert_int_eq(again->size(), 2);
	auto text = read_file(dir + "/" + starts_name);
	auto parsed = parse_starts(*text, "starts");
	ck_assert_int_eq(parsed->size(), 2);
	ck_assert_int_eq((*parsed)[1].newest_step, 400);
	ck_assert(!(*parsed)[1].held);
	ck_assert(text->find("held") == std::string::npos); // written only when true
	auto with_hold = record_start(dir, {2, 400, 4, "9", true});
	ck_assert_int_eq(with_hold->size(), 3);
	auto reread = parse_starts(*read_file(dir + "/" + starts_name), "starts");
	ck_assert(reread.has_value() && (*reread)[2].held && !(*reread)[1].held);
	ck_assert(
		!parse_starts(
			 R"({"format":"loom-starts/1","starts":[{"restart_count":1,"newest_step":1,"time":1,"held":"yes"}]})",
			 "s")
			 .has_value());
	// Another job reusing the directory starts a fresh record.
	ck_assert_int_eq(record_start(dir, {0, 400, 5, "10"})->size(), 1);
	(void)remove_tree(dir);
}
END_TEST

TCase *ckpt_job_dir_tests()
{
	TCase *tc = tcase_create("job_dir");
	tcase_add_test(tc, safe_dir_refuses_symlinks_and_foreign_dirs);
	tcase_add_test(tc, restart_budget_and_progress);
	return tc;
}
