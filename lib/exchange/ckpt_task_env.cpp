#include "lib/exchange/ckpt_task_env.hpp"

#include "lib/util/config.hpp"

#include <csignal>

namespace loom::exchange {
namespace {

struct SignalName {
	const char *name;
	int number;
};
constexpr SignalName signal_names[] = {{"HUP", SIGHUP},   {"INT", SIGINT},     {"QUIT", SIGQUIT}, {"USR1", SIGUSR1},
				       {"USR2", SIGUSR2}, {"ALRM", SIGALRM},   {"TERM", SIGTERM}, {"CONT", SIGCONT},
				       {"URG", SIGURG},   {"WINCH", SIGWINCH}, {"PWR", SIGPWR},   {"KILL", SIGKILL},
				       {"STOP", SIGSTOP}};

// An integer in [lo, hi], or 'fallback' when empty.
expected<int64_t> integer(const char *name, const std::string &v, int64_t lo, int64_t hi, int64_t fallback)
{
	if (v.empty())
		return fallback;
	auto n = parse_int(v, lo, hi);
	if (!n)
		return unexpected(std::string(name) + "='" + v + "'", n.error().message);
	return *n;
}

} // namespace

expected<int> parse_signal(std::string_view text)
{
	std::string_view s = text;
	if (s.substr(0, 3) == "SIG")
		s.remove_prefix(3);
	int sig = 0;
	for (const auto &n : signal_names)
		if (s == n.name)
			sig = n.number;
	if (sig == 0) {
		auto num = parse_int(s, 1, SIGRTMAX);
		if (!num)
			return unexpected("expected a signal name such as USR2 or a number");
		sig = static_cast<int>(*num);
	}
	if (sig == SIGKILL || sig == SIGSTOP)
		return unexpected("KILL and STOP cannot be caught: a checkpoint signal must be");
	return sig;
}

std::string signal_name(int sig)
{
	for (const auto &n : signal_names)
		if (n.number == sig)
			return n.name;
	return std::to_string(sig);
}

std::vector<std::pair<std::string, std::string>> task_env_vars(const TaskEnv &e, const std::string &signal)
{
	return {{"LOOM_CKPT_DIR", e.dir},
		{"LOOM_CKPT_LATEST", e.latest},
		{"LOOM_CKPT_SIGNAL", signal},
		{"LOOM_CKPT_INTERVAL", std::to_string(e.interval_s)},
		{"LOOM_CKPT_KEEP", std::to_string(e.keep)},
		{"LOOM_RESTART_COUNT", std::to_string(e.restart_count)}};
}

expected<TaskEnv> read_task_env(const std::function<std::string(const char *)> &get)
{
	TaskEnv e;
	e.dir = get("LOOM_CKPT_DIR");
	e.latest = get("LOOM_CKPT_LATEST");
	if (std::string s = get("LOOM_CKPT_SIGNAL"); !s.empty()) {
		auto sig = parse_signal(s);
		if (!sig)
			return unexpected("LOOM_CKPT_SIGNAL='" + s + "'", sig.error().message);
		e.signal = *sig;
	}
	auto interval = integer("LOOM_CKPT_INTERVAL", get("LOOM_CKPT_INTERVAL"), 0, INT64_MAX, 0);
	auto keep = integer("LOOM_CKPT_KEEP", get("LOOM_CKPT_KEEP"), 1, task_env_max_keep, task_env_default_keep);
	auto restarts = integer("LOOM_RESTART_COUNT", get("LOOM_RESTART_COUNT"), 0, INT64_MAX, 0);
	for (const auto *r : {&interval, &keep, &restarts})
		if (!*r)
			return unexpected(r->error());
	e.interval_s = *interval;
	e.keep = static_cast<int>(*keep);
	e.restart_count = *restarts;
	return e;
}

} // namespace loom::exchange
