#include "lib/health/subprocess.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace loom::health {

std::string command_line(const std::vector<std::string> &argv)
{
	std::string s;
	for (const auto &a : argv) {
		if (!s.empty())
			s += ' ';
		bool quote = a.find_first_of(" \t\"'") != std::string::npos || a.empty();
		s += quote ? "\"" + a + "\"" : a;
	}
	return s;
}

expected<CommandResult> run_command(const std::vector<std::string> &argv, int timeout_seconds,
				    const std::atomic<bool> *cancel, size_t max_output)
{
	if (argv.empty())
		return unexpected("run_command", "empty command");
	auto cancelled = [cancel] { return cancel && cancel->load(std::memory_order_acquire); };
	if (cancelled())
		return unexpected(command_line(argv), "cancelled");
	int fds[2];
	if (::pipe2(fds, O_CLOEXEC) != 0)
		return unexpected(argv[0], std::string("pipe: ") + std::strerror(errno));
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawnattr_t attr;
	posix_spawnattr_init(&attr);
	// Own process group, so that a timeout kills helpers the command started.
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&attr, 0);
	std::vector<char *> args;
	for (const auto &a : argv)
		args.push_back(const_cast<char *>(a.c_str()));
	args.push_back(nullptr);
	pid_t pid = -1;
	int rc = ::posix_spawnp(&pid, args[0], &fa, &attr, args.data(), environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	::close(fds[1]);
	if (rc != 0) {
		::close(fds[0]);
		return unexpected(argv[0], std::string("cannot run: ") + std::strerror(rc));
	}
	CommandResult res;
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
	bool timed_out = false, stopped = false;
	char buf[4096];
	while (true) {
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
		if (left.count() <= 0) {
			timed_out = true;
			break;
		}
		if (cancelled()) {
			stopped = true;
			break;
		}
		struct pollfd p = {fds[0], POLLIN, 0};
		int slice = cancel ? static_cast<int>(std::min<int64_t>(left.count(), 100)) : static_cast<int>(left.count());
		int n = ::poll(&p, 1, slice);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && cancel && left.count() > 100)
			continue; // a slice, not the deadline
		if (n <= 0) {
			timed_out = n == 0;
			break;
		}
		ssize_t r = ::read(fds[0], buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break; // EOF: the child closed its output
		size_t room = max_output > res.output.size() ? max_output - res.output.size() : 0;
		res.output.append(buf, std::min(room, static_cast<size_t>(r)));
		res.truncated |= static_cast<size_t>(r) > room;
	}
	::close(fds[0]);
	int wst = 0;
	// The output is closed; the child may still run: wait until the deadline.
	while (!timed_out && !stopped) {
		pid_t w = ::waitpid(pid, &wst, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			break;
		if (std::chrono::steady_clock::now() >= deadline)
			timed_out = true;
		else if (cancelled())
			stopped = true;
		else
			::usleep(2000);
	}
	if (timed_out || stopped) {
		::kill(-pid, SIGKILL);
		while (::waitpid(pid, &wst, 0) < 0 && errno == EINTR) {
		}
	}
	if (stopped)
		return unexpected(command_line(argv), "cancelled");
	if (timed_out)
		return unexpected(command_line(argv), "timed out after " + std::to_string(timeout_seconds) + " s");
	res.exit_code = WIFEXITED(wst) ? WEXITSTATUS(wst) : -1;
	return res;
}

} // namespace loom::health
