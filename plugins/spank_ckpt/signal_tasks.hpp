// spank_ckpt: delivering the checkpoint signal inside the batch step.
//
// The coordinator signals the batch script and the processes below it that catch
// the checkpoint signal (its bit is set in SigCgt of /proc/PID/status): the
// training program that installed the SDK's handler, and srun, which
// forwards the signal to every task of its step on every node. The batch
// shell and helpers that do not handle the signal (sleep, tee) are left
// alone, so a checkpoint request never kills anything. A script that runs
// `exec python3 train.py` is itself the training program.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace loom::spank_ckpt {

// 'root' and its descendants that catch 'sig'.
std::vector<pid_t> catching_descendants(pid_t root, int sig, const std::string &proc = "/proc");
// Signal them; returns how many were signalled.
int signal_catchers(pid_t root, int sig);

} // namespace loom::spank_ckpt
