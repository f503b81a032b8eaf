#include "lib/health/subprocess.hpp"

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

expected<CommandResult> run_command(const std::vector<std::string> &argv, int timeout_seconds)
{
	if (argv.empty())
		return unexpected("run_command", "empty command");
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
	bool timed_out = false;
	char buf[4096];
	while (true) {
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
		if (left.count() <= 0) {
			timed_out = true;
			break;
		}
		struct pollfd p = {fds[0], POLLIN, 0};
		int n = ::poll(&p, 1, static_cast<int>(left.count()));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			timed_out = n == 0;
			break;
		}
		ssize_t r = ::read(fds[0], buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break; // EOF: the child closed its output
		if (res.output.size() < 65536)
			res.output.append(buf, static_cast<size_t>(r));
	}
	::close(fds[0]);
	int wst = 0;
	// The output is closed; the child may still run: wait until the deadline.
	while (!timed_out) {
		pid_t w = ::waitpid(pid, &wst, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			break;
		if (std::chrono::steady_clock::now() >= deadline)
			timed_out = true;
		else
			::usleep(2000);
	}
	if (timed_out) {
		::kill(-pid, SIGKILL);
		while (::waitpid(pid, &wst, 0) < 0 && errno == EINTR) {
		}
	}
	if (timed_out)
		return unexpected(command_line(argv), "timed out after " + std::to_string(timeout_seconds) + " s");
	res.exit_code = WIFEXITED(wst) ? WEXITSTATUS(wst) : -1;
	return res;
}

} // namespace loom::health
