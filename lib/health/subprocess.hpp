// loom health: run a helper command (scontrol) with a time limit.
//
// NHC's lesson (nhc#159): a health check that calls scontrol before slurmd
// has registered, or while slurmctld is busy, can hang forever. Every call
// here has a deadline; past it the child is killed and the call fails.
// No shell is involved: argv goes to execvp as is.
#pragma once

#include "lib/util/expected.hpp"

#include <atomic>
#include <string>
#include <vector>

namespace loom::health {

struct CommandResult {
	int exit_code = -1; // -1 when killed by a signal
	std::string output; // stdout and stderr together, at most max_output bytes
	bool truncated = false; // the command wrote more than max_output (the rest was read and dropped)
};

// 'cancel' (optional): once it reads true the child is killed within 0.1 s
// and the call fails with "cancelled"; no command starts while it is true.
// (jobcomp/health: slurmctld waits for its worker at reconfigure and
// shutdown, and cannot answer the worker's scontrol meanwhile.)
expected<CommandResult> run_command(const std::vector<std::string> &argv, int timeout_seconds,
				    const std::atomic<bool> *cancel = nullptr, size_t max_output = 64u << 10);

// "scontrol update nodename=n1 state=drain reason=..." as one line, for logs.
std::string command_line(const std::vector<std::string> &argv);

} // namespace loom::health
