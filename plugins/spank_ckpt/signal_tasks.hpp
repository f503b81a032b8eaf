// spank_ckpt: delivering the checkpoint signal inside the batch step.
//
// The coordinator first writes the request file (lib/ckpt/request.hpp) that
// every rank reads, then signals the batch script and the processes below it
// that catch the checkpoint signal (its bit is set in SigCgt of
// /proc/PID/status): the training program that installed the SDK's handler.
// Never srun, although it catches the signal: srun forwards it to every task
// of its step on every node, and a `bash -c` wrapper or a torchrun agent that
// does not handle it dies of it, and the training with it. Ranks started by
// srun see the request file instead. The batch shell and helpers that do not
// handle the signal (sleep, tee) are left alone, so a checkpoint request
// never kills anything. A script that runs `exec python3 train.py` is itself
// the training program.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace loom::spank_ckpt {

// 'root' and its descendants that catch 'sig'.
std::vector<pid_t> catching_descendants(pid_t root, int sig, const std::string &proc = "/proc");
// Whether 'pid' is srun: its comm, or the base name of its executable, is "srun".
bool is_srun(pid_t pid, const std::string &proc = "/proc");

struct Catchers {
	std::vector<pid_t> signal; // catch 'sig': to be signalled
	std::vector<pid_t> srun;   // catch it too, but are srun: never signalled
};
// catching_descendants() split into those two.
Catchers checkpoint_targets(pid_t root, int sig, const std::string &proc = "/proc");

struct Signalled {
	int sent = 0;         // processes signalled
	int srun_skipped = 0; // srun processes that catch it, left alone
};
// Signal checkpoint_targets(root, sig).signal.
Signalled signal_catchers(pid_t root, int sig);

} // namespace loom::spank_ckpt
