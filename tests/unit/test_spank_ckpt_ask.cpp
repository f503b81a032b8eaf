// Unit tests for how spank_ckpt asks a job to checkpoint (protocol 7.5): the
// helper's `request` command writes <dir>/.loom-request as the caller; the
// processes of the batch step that catch the signal are found in /proc (a
// fake one here), srun among them set apart (by comm or executable) and never
// signalled; real processes: the catcher gets the signal, a process named
// srun and the shell above them do not; the coordinator's log says so, and
// "no process handles" is no warning once the request file is written.
#include "lib/ckpt/commit.hpp" // remove_tree
#include "lib/ckpt/request.hpp"
#include "lib/util/fs.hpp"
#include "plugins/spank_ckpt/job.hpp"
#include "plugins/spank_ckpt/signal_tasks.hpp"

#include <climits>
#include <csignal>
#include <cstdlib>
#include <poll.h>
#include <string>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

// Check defines a fail() macro: include it after the C++ library headers.
#include "tests/unit/check_main.hpp"

using namespace loom;
using namespace loom::ckpt;
using namespace loom::spank_ckpt;

namespace {

std::string temp_dir()
{
	char tmpl[] = "/tmp/loom-test-ask-XXXXXX";
	char *d = ::mkdtemp(tmpl);
	ck_assert_ptr_nonnull(d);
	return d;
}

// The helper this build made (make check exports LOOM_BUILDDIR).
std::string helper()
{
	const char *b = std::getenv("LOOM_BUILDDIR");
	std::string dir = b && *b ? b : ".";
	if (dir[0] != '/') {
		char cwd[PATH_MAX];
		ck_assert_ptr_nonnull(::getcwd(cwd, sizeof cwd));
		dir = std::string(cwd) + "/" + dir;
	}
	std::string p = dir + "/plugins/spank_ckpt/loom-ckpt-helper";
	ck_assert_msg(::access(p.c_str(), X_OK) == 0, "%s is not built", p.c_str());
	return p;
}

Credentials me()
{
	Credentials c{::getuid(), ::getgid(), {}};
	if (::getuid() == 0)
		c.groups = {0};
	return c;
}

template <typename T>
void ck_assert_error_has(const expected<T> &r, const std::string &text)
{
	ck_assert_msg(!r.has_value(), "succeeded where an error with '%s' was expected", text.c_str());
	ck_assert_msg(r.error().str().find(text) != std::string::npos, "'%s' lacks '%s'", r.error().str().c_str(),
		      text.c_str());
}

bool has(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

} // namespace

START_TEST(helper_writes_the_request_as_its_caller)
{
	std::string dir = temp_dir();
	auto one = run_helper(helper(), me(), {"request", dir, "time_limit"});
	ck_assert_msg(one.has_value(), "%s", one ? "" : one.error().str().c_str());
	ck_assert_sstr_eq(*one, "1");
	ck_assert_sstr_eq(*run_helper(helper(), me(), {"request", dir, "interval"}), "2");
	auto r = read_request(dir);
	ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
	ck_assert_int_eq(r->seq, 2);
	ck_assert_sstr_eq(r->reason, "interval");
	struct stat sb;
	ck_assert_int_eq(::stat((dir + "/.loom-request").c_str(), &sb), 0);
	ck_assert_int_eq(sb.st_uid, ::getuid());
	// Errors name the file, the path or the usage.
	ck_assert(write_file_atomic(dir + "/.loom-request", "{\"seq\": true}", 0644).has_value());
	ck_assert_error_has(run_helper(helper(), me(), {"request", dir, "suspect"}), dir + "/.loom-request: $.seq");
	ck_assert_error_has(run_helper(helper(), me(), {"request", dir + "/../x", "suspect"}), "'..' is not allowed");
	ck_assert_error_has(run_helper(helper(), me(), {"request", dir, "Bad Reason"}), "reason 'Bad Reason'");
	ck_assert_error_has(run_helper(helper(), me(), {"request", dir}), "request: takes 2 argument(s)");
	(void)remove_tree(dir);
}
END_TEST

// A /proc of status (PPid, SigCgt), comm and exe for each process.
void fake_process(const std::string &proc, pid_t pid, pid_t ppid, const char *sigcgt, const char *comm, const char *exe)
{
	std::string d = proc + "/" + std::to_string(pid);
	ck_assert_int_eq(::mkdir(d.c_str(), 0755), 0);
	std::string status =
		std::string("Name:\t") + comm + "\nPPid:\t" + std::to_string(ppid) + "\nSigCgt:\t" + sigcgt + "\n";
	ck_assert(write_file_atomic(d + "/status", status, 0644).has_value());
	ck_assert(write_file_atomic(d + "/comm", std::string(comm) + "\n", 0644).has_value());
	ck_assert_int_eq(::symlink(exe, (d + "/exe").c_str()), 0);
}

START_TEST(catchers_below_the_batch_script_but_srun)
{
	std::string proc = temp_dir();
	const char *usr2 = "0000000000000800", *usr1 = "0000000000000200", *none = "0000000000000000";
	fake_process(proc, 100, 1, none, "bash", "/usr/bin/bash");                       // the batch script
	fake_process(proc, 101, 100, usr2, "python3", "/usr/bin/python3.11");            // the program
	fake_process(proc, 102, 100, usr2, "srun", "/usr/bin/srun");                     // srun
	fake_process(proc, 103, 100, usr2, "launcher", "/opt/slurm/bin/srun (deleted)"); // srun renamed
	fake_process(proc, 104, 100, none, "sleep", "/usr/bin/sleep");
	fake_process(proc, 105, 100, usr2, "srunx", "/usr/local/bin/srunx");  // not srun
	fake_process(proc, 106, 100, usr1, "python3", "/usr/bin/python3.11"); // another signal
	fake_process(proc, 50, 101, usr2, "python3", "/usr/bin/python3.11");  // pid wrapped
	fake_process(proc, 200, 1, usr2, "srun", "/usr/bin/srun");            // another job's
	auto all = catching_descendants(100, SIGUSR2, proc);
	ck_assert(all == std::vector<pid_t>({50, 101, 102, 103, 105}));
	ck_assert(is_srun(102, proc) && is_srun(103, proc) && is_srun(200, proc));
	ck_assert(!is_srun(101, proc) && !is_srun(105, proc) && !is_srun(999, proc));
	auto c = checkpoint_targets(100, SIGUSR2, proc);
	ck_assert(c.signal == std::vector<pid_t>({50, 101, 105}));
	ck_assert(c.srun == std::vector<pid_t>({102, 103}));
	auto u1 = checkpoint_targets(100, SIGUSR1, proc);
	ck_assert(u1.signal == std::vector<pid_t>({106}) && u1.srun.empty());
	(void)remove_tree(proc);
}
END_TEST

// A batch step of real processes, in a process group of its own: the root
// (does not catch the signal: it dies of it), a catcher and a catcher named
// srun. A catcher that gets SIGUSR2 writes its tag to 'told'.
struct Step {
	pid_t root = -1;
	int told = -1;
};

int told_fd = -1;
char told_tag = '?';
extern "C" void on_usr2(int) { (void)!::write(told_fd, &told_tag, 1); }

void catcher(int ready, const char *name, char tag)
{
	told_tag = tag;
	if (name)
		::prctl(PR_SET_NAME, name, 0, 0, 0);
	struct sigaction sa = {};
	sa.sa_handler = on_usr2;
	::sigaction(SIGUSR2, &sa, nullptr);
	(void)!::write(ready, "r", 1);
	for (;;)
		::pause();
}

Step start_step()
{
	int ready[2], told[2];
	ck_assert_int_eq(::pipe(ready), 0);
	ck_assert_int_eq(::pipe(told), 0);
	pid_t root = ::fork();
	ck_assert_int_ge(root, 0);
	if (root == 0) {
		::setpgid(0, 0);
		::signal(SIGUSR2, SIG_DFL);
		told_fd = told[1];
		if (::fork() == 0)
			catcher(ready[1], nullptr, 'P');
		if (::fork() == 0)
			catcher(ready[1], "srun", 'S');
		for (;;)
			::pause();
	}
	::setpgid(root, root);
	char buf[2];
	for (size_t got = 0; got < 2;) {
		ssize_t n = ::read(ready[0], buf, 2 - got);
		ck_assert_int_gt(n, 0);
		got += static_cast<size_t>(n);
	}
	::close(ready[0]), ::close(ready[1]), ::close(told[1]);
	return Step{root, told[0]};
}

// The tags written within 'ms'.
std::string told_within(const Step &s, int ms)
{
	std::string tags;
	struct pollfd p = {s.told, POLLIN, 0};
	while (::poll(&p, 1, ms) > 0) {
		char c;
		if (::read(s.told, &c, 1) != 1)
			break;
		tags += c;
		ms = 300; // then a little longer, for one that should not come
	}
	return tags;
}

bool alive(pid_t root) { return ::waitpid(root, nullptr, WNOHANG) == 0; }

void stop_step(const Step &s)
{
	::kill(-s.root, SIGKILL);
	::waitpid(s.root, nullptr, 0);
	::close(s.told);
}

START_TEST(srun_and_the_shell_are_never_signalled)
{
	Step s = start_step();
	Signalled sent = signal_catchers(s.root, SIGUSR2);
	ck_assert_int_eq(sent.sent, 1);
	ck_assert_int_eq(sent.srun_skipped, 1);
	ck_assert_sstr_eq(told_within(s, 5000), "P");
	ck_assert_msg(alive(s.root), "the batch script died of SIGUSR2");
	stop_step(s);
}
END_TEST

START_TEST(ask_writes_the_request_then_signals)
{
	std::string dir = temp_dir();
	Step s = start_step();
	auto o = ask_checkpoint(helper(), me(), dir, Ask::time_limit, s.root, SIGUSR2);
	ck_assert_msg(o.seq == 1, "seq %lld: %s", static_cast<long long>(o.seq), o.request_error.c_str());
	ck_assert_int_eq(o.signalled.sent, 1);
	ck_assert_int_eq(o.signalled.srun_skipped, 1);
	ck_assert_sstr_eq(told_within(s, 5000), "P");
	auto r = read_request(dir);
	ck_assert(r.has_value() && r->seq == 1 && r->reason == "time_limit");
	// No helper: the request is not written, the error says why, the signal still goes.
	auto lost = ask_checkpoint(dir + "/no-helper", me(), dir, Ask::interval, s.root, SIGUSR2);
	ck_assert_int_eq(lost.seq, 0);
	ck_assert_msg(has(lost.request_error, dir + "/no-helper: cannot execute"), "%s", lost.request_error.c_str());
	ck_assert_int_eq(lost.signalled.sent, 1);
	ck_assert_sstr_eq(told_within(s, 5000), "P");
	ck_assert(alive(s.root));
	stop_step(s);
	(void)remove_tree(dir);
}
END_TEST

START_TEST(log_says_what_reached_the_program)
{
	const std::string no_handler = "no process of the batch step handles SIGUSR2";
	// Only srun catches it, the request is written: the request reaches the ranks, no warning.
	AskOutcome only_srun{7, "", Signalled{0, 1}};
	auto lines = ask_log(42, Ask::time_limit, "ends in 100 s", SIGUSR2, "/ck/d", only_srun);
	ck_assert_int_eq(lines.size(), 1);
	ck_assert(!lines[0].warning);
	ck_assert_msg(has(lines[0].text, "job 42: asked for a checkpoint (time limit: ends in 100 s): request 7 in "
					 "/ck/d/.loom-request, SIGUSR2 to 0 process(es); srun not signalled (1: "),
		      "%s", lines[0].text.c_str());
	ck_assert(!has(lines[0].text, no_handler));
	// The request not written and only srun catches it: nothing reached the program.
	AskOutcome nothing{0, "/ck/d/.loom-request: is a FIFO, not a file: refused", Signalled{0, 1}};
	lines = ask_log(42, Ask::interval, "due", SIGUSR2, "/ck/d", nothing);
	ck_assert_int_eq(lines.size(), 2);
	ck_assert(lines[0].warning && lines[1].warning);
	ck_assert_msg(has(lines[0].text, "job 42: cannot write the checkpoint request (interval: due) to "
					 "/ck/d/.loom-request: /ck/d/.loom-request: is a FIFO"),
		      "%s", lines[0].text.c_str());
	ck_assert_msg(has(lines[1].text, no_handler) && has(lines[1].text, "srun not signalled"), "%s",
		      lines[1].text.c_str());
	// Not written, but a catcher was signalled: a warning for the file, the count for the signal.
	AskOutcome signalled{0, "helper timed out", Signalled{2, 0}};
	lines = ask_log(42, Ask::suspect, "flag", SIGUSR1, "/ck/d", signalled);
	ck_assert_int_eq(lines.size(), 2);
	ck_assert(lines[0].warning && !lines[1].warning);
	ck_assert_msg(has(lines[1].text, "asked for a checkpoint (node suspect: flag): SIGUSR1 to 2 process(es)"), "%s",
		      lines[1].text.c_str());
	ck_assert(!has(lines[1].text, "srun"));
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("spank_ckpt_ask");
	TCase *tc = tcase_create("ask");
	tcase_add_test(tc, helper_writes_the_request_as_its_caller);
	tcase_add_test(tc, catchers_below_the_batch_script_but_srun);
	tcase_add_test(tc, srun_and_the_shell_are_never_signalled);
	tcase_add_test(tc, ask_writes_the_request_then_signals);
	tcase_add_test(tc, log_says_what_reached_the_program);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
