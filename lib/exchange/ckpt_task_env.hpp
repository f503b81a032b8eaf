// loom exchange: the environment spank_ckpt gives each task of a --ckpt job, and
// the one reading of it (spank_ckpt(8), TASK ENVIRONMENT).
//
//   LOOM_CKPT_DIR       the checkpoint directory (unset or empty: no checkpoints)
//   LOOM_CKPT_LATEST    the newest complete checkpoint when the job started (may be empty)
//   LOOM_CKPT_SIGNAL    the checkpoint signal: a name (USR2, SIGUSR2) or number (unset: none)
//   LOOM_CKPT_INTERVAL  seconds between checkpoints, an integer >= 0 (unset: 0, only on request)
//   LOOM_CKPT_KEEP      complete checkpoints kept, 1 to 1000 (unset: 3)
//   LOOM_RESTART_COUNT  how often the job was requeued, >= 0 (unset: 0)
//
// spank_ckpt writes them (task_env_vars); the C++ SDK reads them here, the
// Python SDK with the same rules (loom_ckpt/launch.py), and both run the
// cases of tests/ckpt/task-env-cases.json. A value that does not read
// is an error naming the variable and the value, never a silent default.
#pragma once

#include "lib/util/expected.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace loom::exchange {

inline constexpr int task_env_default_keep = 3;
inline constexpr int task_env_max_keep = 1000;

struct TaskEnv {
	std::string dir, latest;
	int signal = 0;
	int64_t interval_s = 0;
	int keep = task_env_default_keep;
	int64_t restart_count = 0;
};

// The variables, in the order above (what spank_ckpt exports).
std::vector<std::pair<std::string, std::string>> task_env_vars(const TaskEnv &e, const std::string &signal);
// 'get' returns a variable's value, empty when unset. On a value that does
// not read: the first such variable, "LOOM_CKPT_KEEP='0': ...".
expected<TaskEnv> read_task_env(const std::function<std::string(const char *)> &get);

// The checkpoint signal as LOOM_CKPT_SIGNAL, --ckpt-signal and plugstack.conf's
// signal= name it: "USR2", "SIGUSR2" or a number -> its number; KILL and STOP
// are refused (a checkpoint signal must be caught).
expected<int> parse_signal(std::string_view text);
// The name without "SIG" ("USR2"), or the number for one without a name.
std::string signal_name(int sig);

} // namespace loom::exchange
