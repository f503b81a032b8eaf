// loom: run a program with a deadline: the one way loom starts a process
// (scontrol from `loom health` and jobcomp/health, loom-ckpt-helper from
// spank_ckpt inside slurmstepd).
//
// NHC's lesson (nhc#159): a call to scontrol before slurmd has registered, or
// while slurmctld is busy, can hang forever. Every call here has a deadline;
// past it the child's process group is killed and the call fails. No shell
// is involved: argv is executed as is. The child is started with
// posix_spawn, so nothing but the exec runs in the child of a multi-threaded
// process (slurmctld, slurmstepd), and every descriptor it gets is moved
// above 0-2 first (slurmstepd may run with one of them closed).
#pragma once

#include "lib/util/expected.hpp"

#include <atomic>
#include <cstddef>
#include <string>
#include <sys/types.h>
#include <vector>

namespace loom {

struct RunOptions {
	int timeout_s = 10;
	// Once it reads true the child is killed within 0.1 s and the call fails
	// with "cancelled"; no command starts while it is true. (jobcomp/health:
	// slurmctld waits for its worker at reconfigure and shutdown.)
	const std::atomic<bool> *cancel = nullptr;
	size_t max_output = 64u << 10;
	// stderr with stdout (a command's error text is its answer), or to /dev/null.
	bool merge_stderr = true;
	// argv[0] looked up in PATH; false: it must be an absolute path.
	bool search_path = true;
	// The child's whole environment ("NAME=value"); empty: this process's.
	std::vector<std::string> env;
};

struct CommandResult {
	int exit_code = -1;     // -1 when killed by a signal
	int signal = 0;         // the signal that ended it, if one did
	std::string output;     // what it wrote, at most max_output bytes
	bool truncated = false; // it wrote more than max_output (the rest was read and dropped)
};

expected<CommandResult> run_command(const std::vector<std::string> &argv, const RunOptions &o);
// The usual call: scontrol and friends, output and errors together.
expected<CommandResult> run_command(const std::vector<std::string> &argv, int timeout_seconds,
				    const std::atomic<bool> *cancel = nullptr, size_t max_output = 64u << 10);

// Read fd until EOF, the deadline (then SIGKILL to pid's process group when
// group, else to pid) or cancel, then reap pid. Closes fd. A child that has
// exited with nothing left in the pipe is done even without EOF: another
// thread's fork may hold a copy of the write end until it execs.
struct ChildEnd {
	std::string output;
	bool truncated = false;
	bool timed_out = false;
	bool cancelled = false;
	int wstatus = 0;
};
ChildEnd wait_child(pid_t pid, int fd, int timeout_s, bool group, const std::atomic<bool> *cancel = nullptr,
		    size_t max_output = 64u << 10);

// "exit status 3" or "killed by signal 9".
std::string how_it_ended(int wstatus);

// "scontrol update nodename=n1 state=drain reason=..." as one line, for logs.
std::string command_line(const std::vector<std::string> &argv);

} // namespace loom
