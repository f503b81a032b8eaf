// Unit tests for lib/util's files and commands: atomic writes (exclusive
// ones refusing a planted temporary), directories made like mkdir -p, and
// commands run with their ends, signals, descriptors and output cap.
#include "lib/util/fs.hpp"
#include "lib/util/subprocess.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

// Check defines a fail() macro: include it after the C++ library headers.
#include "tests/unit/check_main.hpp"

using namespace loom;

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
	ck_assert_msg(bad.error().str().find(base + "/a/file: exists and is not a directory") != std::string::npos,
		      "%s", bad.error().str().c_str());
	ck_assert(!make_dirs(""));
	std::string cmd = "rm -rf " + base;
	ck_assert_int_eq(system(cmd.c_str()), 0);
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

TCase *util_file_tests()
{
	TCase *tc = tcase_create("files");
	tcase_add_test(tc, files_atomic_write_and_read);
	tcase_add_test(tc, files_atomic_write_exclusive);
	tcase_add_test(tc, make_dirs_like_mkdir_p);
	tcase_add_test(tc, subprocess_ends_and_descriptors);
	return tc;
}
