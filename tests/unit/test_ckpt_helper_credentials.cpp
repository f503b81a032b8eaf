// Unit tests for whom loom-ckpt-helper acts as: only its caller unless
// started as root; the credentials it is given on its command line, read
// back whole; and run_as, which refuses a multi-threaded process.
#include "lib/ckpt/commit.hpp"
#include "lib/ckpt/safe_dir.hpp"
#include "lib/util/fs.hpp"

#include <atomic>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

// Check defines a fail() macro: include it after the C++ library headers.
#include "tests/unit/ckpt_helper_fixture.hpp"

using namespace loom;
using namespace loom::ckpt;
using namespace loom::ckpt::testing;

// Not root, the helper acts only as its caller: another uid (root's too) is refused.
expected<std::string> ask_as_other(const std::string &dir, uid_t asked)
{
	return run_helper(helper(), Credentials{asked, ::getgid(), {}}, {"prepare", dir, dir + "/x"});
}

START_TEST(helper_acts_only_as_a_plain_caller)
{
	std::string root = temp_dir();
	struct stat sb;
	if (::getuid() != 0) {
		auto r = ask_as_other(root, ::getuid() + 1);
		ck_assert_error_has(r, "cannot switch to uid " + std::to_string(::getuid() + 1));
		ck_assert_error_has(r, "not root: acts only as its caller");
		ck_assert_error_has(ask_as_other(root, 0), "cannot switch to uid 0");
		ck_assert_int_ne(::stat((root + "/x").c_str(), &sb), 0);
	} else {
		// As root: the helper switches to the job user for good...
		::chmod(root.c_str(), 0777);
		auto made = run_helper(helper(), Credentials{4343, 4343, {}}, {"prepare", root, root + "/alice/1"});
		ck_assert_msg(made.has_value(), "%s", made ? "" : made.error().str().c_str());
		ck_assert_int_eq(::stat((root + "/alice/1").c_str(), &sb), 0);
		ck_assert_int_eq(sb.st_uid, 4343);
		// ...and a plain user (uid 4343) who runs it asking for uid 4344 or root is refused.
		Credentials alice{4343, 4343, {}};
		for (uid_t asked : {4344u, 0u}) {
			auto r = run_as(alice, [&] { return ask_as_other(root, asked); });
			ck_assert_error_has(r, "cannot switch to uid " + std::to_string(asked));
			ck_assert_error_has(r, "running as uid 4343, not root");
		}
		ck_assert_int_ne(::stat((root + "/x").c_str(), &sb), 0);
	}
	(void)remove_tree(root);
}
END_TEST

START_TEST(helper_arguments_round_trip)
{
	Credentials c{1234, 567, {567, 20, 4242}};
	std::vector<std::string> words = {"loom-ckpt-helper"};
	for (auto &w : credential_args(c))
		words.push_back(w);
	words.insert(words.end(), {"newest", "/x"});
	std::vector<char *> argv;
	for (auto &w : words)
		argv.push_back(w.data());
	auto h = parse_helper_args(static_cast<int>(argv.size()), argv.data());
	ck_assert_msg(h.has_value(), "%s", h ? "" : h.error().str().c_str());
	ck_assert_int_eq(h->cred.uid, 1234);
	ck_assert_int_eq(h->cred.gid, 567);
	ck_assert(h->cred.groups == std::vector<gid_t>({567, 20, 4242}));
	ck_assert(h->operation == std::vector<std::string>({"newest", "/x"}));
	// A long group list (Linux allows 65536) is split over several words and read back whole.
	Credentials many{1, 1, {}};
	for (gid_t g = 100000; g < 103500; g++)
		many.groups.push_back(g);
	auto long_words = credential_args(many);
	ck_assert_int_eq(long_words.size(), 2 + 4);
	std::vector<std::string> all = {"h"};
	all.insert(all.end(), long_words.begin(), long_words.end());
	all.push_back("newest");
	std::vector<char *> long_argv;
	for (auto &w : all)
		long_argv.push_back(w.data());
	auto back = parse_helper_args(static_cast<int>(long_argv.size()), long_argv.data());
	ck_assert(back.has_value() && back->cred.groups == many.groups);
	// Executed with them as root: the helper takes them all (setgroups) and works.
	if (::getuid() == 0) {
		std::string root = temp_dir();
		::chmod(root.c_str(), 0777);
		auto made = run_helper(helper(), Credentials{4343, 4343, many.groups}, {"prepare", root, root + "/g"});
		ck_assert_msg(made.has_value(), "%s", made ? "" : made.error().str().c_str());
		(void)remove_tree(root);
	}
	for (std::vector<std::string> bad :
	     std::vector<std::vector<std::string>>{{"h", "--uid=1", "newest", "/x"},             // no gid
						   {"h", "--uid=-1", "--gid=1", "newest", "/x"}, // negative
						   {"h", "--uid=1", "--gid=1", "--groups=1,,2", "newest"},
						   {"h", "--uid=1", "--gid=1"}}) { // no operation
		std::vector<char *> v;
		for (auto &w : bad)
			v.push_back(w.data());
		ck_assert_msg(!parse_helper_args(static_cast<int>(v.size()), v.data()).has_value(), "accepted %s",
			      join(bad, " ").c_str());
	}
}
END_TEST

START_TEST(run_as_refuses_a_multi_threaded_process)
{
	std::atomic<bool> stop{false};
	std::thread t([&] {
		while (!stop)
			::usleep(1000);
	});
	auto r = run_as(me(), [] { return expected<std::string>(std::string("ran")); });
	stop = true;
	t.join();
	ck_assert_error_has(r, "multi-threaded");
}
END_TEST

TCase *ckpt_helper_credential_tests()
{
	TCase *tc = tcase_create("credentials");
	tcase_add_test(tc, helper_acts_only_as_a_plain_caller);
	tcase_add_test(tc, helper_arguments_round_trip);
	tcase_add_test(tc, run_as_refuses_a_multi_threaded_process);
	return tc;
}
