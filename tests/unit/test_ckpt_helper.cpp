// Unit tests for loom-ckpt-helper and run_helper: the helper, executed as the
// test's user, prepares a checkpoint directory, refuses a symlink and '..',
// reads the newest checkpoint, records a batch start; prepare_job() reaches
// the user's directory only by executing it (a missing helper is an error
// naming its path). The suite, with whom the helper acts as
// (test_ckpt_helper_credentials.cpp).
#include "lib/ckpt/commit.hpp"
#include "lib/ckpt/layout.hpp"
#include "lib/ckpt/options.hpp"
#include "lib/ckpt/safe_dir.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"
#include "plugins/spank_ckpt/job.hpp"

#include <chrono>
#include <climits>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

// Check defines a fail() macro: include it after the C++ library headers.
#include "tests/unit/ckpt_helper_fixture.hpp"

using namespace loom;
using namespace loom::ckpt;
using namespace loom::ckpt::testing;

namespace {

std::string commit_one(const std::string &dir, int64_t step, const std::string &content)
{
	auto st = Staging::begin(dir, step);
	ck_assert_msg(st.has_value(), "%s", st ? "" : st.error().str().c_str());
	ck_assert(st->write_file("model.bin", content).has_value());
	auto p = st->commit(Manifest{});
	ck_assert_msg(p.has_value(), "%s", p ? "" : p.error().str().c_str());
	return *p;
}

} // namespace

START_TEST(helper_prepares_directory_as_self)
{
	std::string root = temp_dir();
	std::string dir = root + "/alice/42";
	auto r = run_helper(helper(), me(), {"prepare", root, dir});
	ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
	ck_assert_sstr_eq(*r, "{}"); // no checkpoint yet
	struct stat sb;
	ck_assert_int_eq(::stat(dir.c_str(), &sb), 0);
	ck_assert_int_eq(sb.st_mode & 0777, 0700);
	ck_assert_int_eq(sb.st_uid, ::getuid());
	// Again: an existing directory of the user's is fine.
	ck_assert(run_helper(helper(), me(), {"prepare", root, dir}).has_value());
	(void)remove_tree(root);
}
END_TEST

START_TEST(helper_refuses_symlink_component)
{
	std::string root = temp_dir(), outside = temp_dir();
	ck_assert_int_eq(::symlink(outside.c_str(), (root + "/evil").c_str()), 0);
	auto r = run_helper(helper(), me(), {"prepare", root, root + "/evil/43"});
	ck_assert_error_has(r, root + "/evil: is a symlink or not a directory: refused");
	struct stat sb;
	ck_assert_int_ne(::stat((outside + "/43").c_str(), &sb), 0);
	(void)remove_tree(root);
	(void)remove_tree(outside);
}
END_TEST

START_TEST(helper_refuses_dot_dot)
{
	std::string root = temp_dir();
	ck_assert_int_eq(::mkdir((root + "/a").c_str(), 0755), 0);
	std::string escape = "loom-helper-escape-" + std::to_string(::getpid());
	auto r = run_helper(helper(), me(), {"prepare", root, root + "/a/../../" + escape});
	ck_assert_error_has(r, "'..' is not allowed in the path");
	ck_assert_error_has(r, root + "/a/../../" + escape);
	struct stat sb;
	ck_assert_int_ne(::stat(("/tmp/" + escape).c_str(), &sb), 0);
	// make_checkpoint_dir itself refuses it too, not only the helper.
	auto st = make_checkpoint_dir(root, root + "/a/../b");
	ck_assert(!st.has_value());
	ck_assert_int_ne(::stat((root + "/b").c_str(), &sb), 0);
	// And a directory outside the root.
	auto out = run_helper(helper(), me(), {"prepare", root, "/etc/loom-not-here"});
	ck_assert_error_has(out, "is not below " + root);
	(void)remove_tree(root);
}
END_TEST

START_TEST(helper_reads_newest_checkpoint)
{
	std::string dir = temp_dir();
	commit_one(dir, 100, "one hundred");
	std::string newest = commit_one(dir, 200, std::string(3000, 'y'));
	auto r = run_helper(helper(), me(), {"newest", dir});
	ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
	auto doc = json_parse(*r, "answer");
	ck_assert(doc.has_value());
	ObjectReader o(doc->get(), "$");
	ck_assert_int_eq(*o.integer("step", 0, INT64_MAX), 200);
	ck_assert_sstr_eq(*o.str("path"), newest);
	ck_assert(*o.number_or("created", 0) > 0);
	// A torn newest one (a file of the wrong size) falls back to the one before.
	ck_assert_int_eq(::truncate((newest + "/model.bin").c_str(), 10), 0);
	r = run_helper(helper(), me(), {"newest", dir});
	ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
	ck_assert_msg(r->find("\"step\":100") != std::string::npos, "%s", r->c_str());
	// A directory that does not exist is an error naming it.
	auto gone = run_helper(helper(), me(), {"newest", dir + "/none"});
	ck_assert_error_has(gone, dir + "/none");
	(void)remove_tree(dir);
}
END_TEST

START_TEST(helper_start_records_the_batch_start)
{
	std::string root = temp_dir();
	std::string dir = root + "/job/7";
	auto r = run_helper(helper(), me(), {"start", root, dir, "0", "3", "7"});
	ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
	auto doc = json_parse(*r, "answer");
	ck_assert(doc.has_value());
	ObjectReader o(doc->get(), "$");
	ck_assert_int_eq(*o.integer("verdict", 0, 2), static_cast<int64_t>(StartVerdict::run));
	ck_assert(read_file(dir + "/" + starts_name).has_value());
	// Over the budget: held, and the hold is recorded.
	r = run_helper(helper(), me(), {"start", root, dir, "4", "3", "7"});
	ck_assert(r.has_value());
	ck_assert_msg(r->find("--ckpt-max-restarts=3") != std::string::npos, "%s", r->c_str());
	auto starts = parse_starts(*read_file(dir + "/" + starts_name), "starts");
	ck_assert(starts.has_value() && starts->size() == 2 && (*starts)[1].held);
	// A bad number is a usage error naming it.
	auto bad = run_helper(helper(), me(), {"start", root, dir, "x", "3", "7"});
	ck_assert_error_has(bad, "RESTART_COUNT 'x'");
	auto unknown = run_helper(helper(), me(), {"chown", root});
	ck_assert_error_has(unknown, "chown: unknown operation");
	(void)remove_tree(root);
}
END_TEST

START_TEST(helper_failures_name_the_program)
{
	auto missing = run_helper("/nonexistent/loom-ckpt-helper", me(), {"newest", "/tmp"});
	ck_assert_error_has(missing,
			    "/nonexistent/loom-ckpt-helper: cannot execute the checkpoint helper: No such file");
	ck_assert_error_has(run_helper("loom-ckpt-helper", me(), {"newest", "/tmp"}), "must be an absolute path");
	auto silent = run_helper("/bin/true", me(), {});
	ck_assert_error_has(silent, "/bin/true: ended without an answer (exit status 0)");
	// One that hangs is killed at the deadline.
	std::string dir = temp_dir();
	std::string script = dir + "/hang";
	ck_assert(write_file_atomic(script, "#!/bin/sh\nexec sleep 30\n", 0755).has_value());
	auto hung = run_helper(script, me(), {}, 1);
	ck_assert_error_has(hung, script + ": timed out after 1 s");
	// An answer counts once the helper has exited, even while another process
	// (here its own background child) keeps the pipe open.
	std::string lingering = dir + "/linger";
	ck_assert(write_file_atomic(lingering, "#!/bin/sh\nprintf Olater\nsleep 6 &\nexit 0\n", 0755).has_value());
	auto t0 = std::chrono::steady_clock::now();
	auto r = run_helper(lingering, me(), {}, 20);
	ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
	ck_assert_sstr_eq(*r, "later");
	ck_assert(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(4));
	(void)remove_tree(dir);
}
END_TEST

// prepare_job(): what the plugin calls in slurmstepd. It reaches the
// directory only through the helper.
spank_ckpt::JobFacts facts_for_me(uint32_t job)
{
	spank_ckpt::JobFacts f;
	f.job_id = job;
	f.batch_step = true;
	f.cred = me();
	f.user = "tester";
	f.node = "n1";
	f.nodelist = "n1";
	return f;
}

START_TEST(prepare_job_executes_the_helper)
{
	std::string root = temp_dir();
	char *no_args[] = {nullptr};
	auto site = SiteConfig::from_args(0, no_args, "test");
	ck_assert(site.has_value());
	site->roots = {root};
	JobOptions opts;
	ck_assert(apply_option(opts, *site, "ckpt-dir", (root + "/%u/%j").c_str()).has_value());
	ck_assert(finalize(opts, *site).has_value());
	// The helper path is the plugin's way to the directory: missing, the job's setup fails naming it.
	site->helper = root + "/no-such-helper";
	auto missing = spank_ckpt::prepare_job(*site, opts, facts_for_me(9));
	ck_assert_error_has(missing, root + "/no-such-helper: cannot execute the checkpoint helper");
	struct stat sb;
	ck_assert_int_ne(::stat((root + "/tester").c_str(), &sb), 0);
	// With the helper: directory, newest checkpoint, start recorded.
	site->helper = helper();
	ck_assert(make_checkpoint_dir(root, root + "/tester/9").has_value());
	std::string newest = commit_one(root + "/tester/9", 300, "three hundred");
	auto s = spank_ckpt::prepare_job(*site, opts, facts_for_me(9));
	ck_assert_msg(s.has_value(), "%s", s ? "" : s.error().str().c_str());
	ck_assert_sstr_eq(s->dir, root + "/tester/9");
	ck_assert_sstr_eq(s->env.at("LOOM_CKPT_LATEST"), newest);
	ck_assert_int_eq(s->newest_step, 300);
	ck_assert(s->decision.verdict == StartVerdict::run);
	ck_assert(read_file(root + "/tester/9/" + starts_name).has_value());
	// A symlink where the directory would go: refused through the helper, naming the path.
	std::string outside = temp_dir();
	ck_assert_int_eq(::symlink(outside.c_str(), (root + "/tester/10").c_str()), 0);
	auto link = spank_ckpt::prepare_job(*site, opts, facts_for_me(10));
	ck_assert_error_has(link, root + "/tester/10: is a symlink or not a directory: refused");
	(void)remove_tree(root);
	(void)remove_tree(outside);
}
END_TEST

START_TEST(site_helper_argument)
{
	const char *good[] = {"helper=/opt/loom/libexec/loom-ckpt-helper"};
	auto s = SiteConfig::from_args(1, const_cast<char *const *>(good), "plugstack.conf");
	ck_assert(s.has_value());
	ck_assert_sstr_eq(s->helper, "/opt/loom/libexec/loom-ckpt-helper");
	const char *relative[] = {"helper=loom-ckpt-helper"};
	auto bad = SiteConfig::from_args(1, const_cast<char *const *>(relative), "plugstack.conf");
	ck_assert(!bad.has_value());
	ck_assert_msg(bad.error().str().find("plugstack.conf: helper=loom-ckpt-helper: must be an absolute path") !=
			      std::string::npos,
		      "%s", bad.error().str().c_str());
	// The default is where the build installs it.
	ck_assert_msg(std::string(LOOM_CKPT_HELPER).find("/loom/loom-ckpt-helper") != std::string::npos, "%s",
		      LOOM_CKPT_HELPER);
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("ckpt_helper");
	TCase *tc = tcase_create("helper");
	tcase_add_test(tc, helper_prepares_directory_as_self);
	tcase_add_test(tc, helper_refuses_symlink_component);
	tcase_add_test(tc, helper_refuses_dot_dot);
	tcase_add_test(tc, helper_reads_newest_checkpoint);
	tcase_add_test(tc, helper_start_records_the_batch_start);
	tcase_add_test(tc, helper_failures_name_the_program);
	tcase_add_test(tc, prepare_job_executes_the_helper);
	tcase_add_test(tc, site_helper_argument);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, ckpt_helper_credential_tests());
	return s;
}

LOOM_CHECK_MAIN(make_suite)
