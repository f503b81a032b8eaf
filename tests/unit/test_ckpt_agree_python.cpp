// The stamp file of protocol 7.5 between the two SDKs: lib/ckpt/agree.hpp
// reads what sdk/python/loom_ckpt/agree.py's StampAgreement writes, and
// Python reads what C++ writes, byte for byte the same file, and each side's
// ranks decide on the other's stamp. Runs python3 (a build dependency of
// the tests) with PYTHONPATH=$LOOM_SRCDIR/sdk/python: without it the test
// fails, it does not skip.
#include "lib/ckpt/agree.hpp"
#include "lib/ckpt/commit.hpp" // remove_tree
#include "lib/util/fs.hpp"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
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
	char tmpl[] = "/tmp/loom-test-agree-py-XXXXXX";
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

struct Fake {
	std::shared_ptr<double> now = std::make_shared<double>(10.0);
	Clock clock() const
	{
		auto t = now;
		return [t] { return *t; };
	}
};

Say quiet()
{
	return [](const std::string &line) { ck_abort_msg("unexpected message: %s", line.c_str()); };
}

// python3 -c CODE ARGS... with the Python SDK on its path; fails the test
// (naming the code's first line and the status) unless it exits 0.
void python(const std::string &code, const std::vector<std::string> &args)
{
	std::string sdk = loom::test::srcdir() + "/sdk/python";
	struct stat st;
	ck_assert_msg(::stat((sdk + "/loom_ckpt/agree.py").c_str(), &st) == 0,
		      "%s/loom_ckpt/agree.py: not there (is LOOM_SRCDIR the source tree?)", sdk.c_str());
	std::vector<std::string> argv{"python3", "-c", code};
	argv.insert(argv.end(), args.begin(), args.end());
	pid_t pid = ::fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		std::vector<char *> a;
		for (auto &s : argv)
			a.push_back(s.data());
		a.push_back(nullptr);
		::setenv("PYTHONPATH", sdk.c_str(), 1);
		::execvp("python3", a.data());
		std::fprintf(stderr, "test_ckpt_agree_python: cannot run python3 (a build dependency of the tests)\n");
		::_exit(127);
	}
	int status = 0;
	ck_assert_int_eq(::waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "python3 -c '%s...': %s %d",
		      code.substr(0, code.find('\n')).c_str(), WIFEXITED(status) ? "exit status" : "killed by signal",
		      WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

// The C++ rank's stamp, after ranks moving on.
Stamp stamp_in(const std::string &path)
{
	auto s = read_stamp(path);
	ck_assert_msg(s.has_value(), "%s", s ? "" : s.error().str().c_str());
	ck_assert_msg(s->has_value(), "%s: no stamp", path.c_str());
	return **s;
}

void move(const std::string &from, const std::string &to)
{
	ck_assert_msg(::rename(from.c_str(), to.c_str()) == 0, "cannot move %s to %s", from.c_str(), to.c_str());
}

} // namespace

// Python's rank 0 stamps (steps of 0.5 s, lead 2 s: step 10 + 4); the C++
// rank, made before the stamp existed, saves at 14 only.
START_TEST(cpp_reads_a_python_stamp)
{
	Fake f;
	::umask(022);
	std::string here = temp_dir(), there = temp_dir(), run = "j77_r0_s3";
	StampAgreement r1(here, run, 1, 2.0, f.clock(), quiet());
	python("import sys\n"
	       "from loom_ckpt.agree import StampAgreement\n"
	       "a = StampAgreement(sys.argv[1], sys.argv[2], 0, lead_seconds=2.0)\n"
	       "assert a.decide(True, 10, 0.5) is False\n",
	       {there, run});
	std::string written = stamp_path(there, run);
	auto text = read_file(written);
	ck_assert(text.has_value());
	ck_assert_sstr_eq(*text, format_stamp({14, 1})); // the same bytes C++ writes
	struct stat st;
	ck_assert_int_eq(::stat(written.c_str(), &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0644);
	Stamp s = stamp_in(written);
	ck_assert_int_eq(s.step, 14);
	ck_assert_int_eq(s.seq, 1);
	move(written, stamp_path(here, run));
	std::vector<int64_t> yes;
	for (int64_t step = 11; step <= 16; step++)
		if (r1.decide(false, step))
			yes.push_back(step);
	ck_assert(yes == std::vector<int64_t>{14});
}
END_TEST

// C++'s rank 0 stamps; Python's rank 1 (made before the stamp existed) saves
// at its step only, and Python's rank 0, made with that stamp there, takes
// it as done and stamps seq 2, which C++ reads.
START_TEST(python_reads_a_cpp_stamp)
{
	Fake f;
	std::string here = temp_dir(), there = temp_dir(), run = "j78_r1_s0";
	StampAgreement r0(here, run, 0, 2.0, f.clock(), quiet());
	ck_assert(!r0.decide(false, 9));
	*f.now += 0.5;
	ck_assert(!r0.decide(true, 10));
	ck_assert_int_eq(stamp_in(r0.path()).step, 14);
	for (int64_t step = 11; step <= 14; step++)
		ck_assert(r0.decide(false, step) == (step == 14));
	python("import json, os, sys\n"
	       "from loom_ckpt.agree import StampAgreement\n"
	       "src, dst, run = sys.argv[1:]\n"
	       "r1 = StampAgreement(dst, run, 1)\n"
	       "os.replace(os.path.join(src, '.loom-save-at.' + run), os.path.join(dst, '.loom-save-at.' + run))\n"
	       "assert [s for s in range(11, 17) if r1.decide(False, s, 0.5)] == [14], r1.stamp\n"
	       "assert r1.stamp == {'step': 14, 'seq': 1}, r1.stamp\n"
	       "r0 = StampAgreement(dst, run, 0, lead_seconds=2.0)\n"
	       "assert r0.done == 1\n"
	       "assert r0.decide(True, 20, 0.25) is False\n"
	       "assert json.load(open(os.path.join(dst, '.loom-save-at.' + run))) == {'step': 28, 'seq': 2}\n",
	       {here, there, run});
	Stamp s = stamp_in(stamp_path(there, run));
	ck_assert_int_eq(s.step, 28);
	ck_assert_int_eq(s.seq, 2);
	// The C++ rank 0, done with seq 1, saves at seq 2's step.
	move(stamp_path(there, run), r0.path());
	ck_assert(!r0.decide(false, 27));
	ck_assert(r0.decide(false, 28));
}
END_TEST

// Python refuses what C++ refuses: seq 0.
START_TEST(python_refuses_a_stamp_cpp_refuses)
{
	std::string dir = temp_dir(), run = "r";
	auto st = write_file_atomic(stamp_path(dir, run), "{\"step\": 1, \"seq\": 0}\n", 0644);
	ck_assert(st.has_value());
	ck_assert(!read_stamp(stamp_path(dir, run)).has_value());
	python("import sys\n"
	       "from loom_ckpt.agree import StampAgreement\n"
	       "from loom_ckpt.protocol import CheckpointError\n"
	       "try:\n"
	       "    StampAgreement(sys.argv[1], sys.argv[2], 1)\n"
	       "except CheckpointError as e:\n"
	       "    assert 'seq' in str(e), e\n"
	       "else:\n"
	       "    raise SystemExit('seq 0 was accepted')\n",
	       {dir, run});
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("ckpt_agree_python");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, cpp_reads_a_python_stamp);
	tcase_add_test(tc, python_reads_a_cpp_stamp);
	tcase_add_test(tc, python_refuses_a_stamp_cpp_refuses);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
