#include "lib/util/subprocess.hpp"

#include "lib/util/log.hpp"

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

namespace loom {
namespace {

// The descriptor moved to 3 or above (close-on-exec), so that the child's
// dup2 onto 0, 1 and 2 cannot land on it.
int above_stdio(int fd)
{
	if (fd < 0 || fd > 2)
		return fd;
	int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
	::close(fd);
	return moved;
}

std::string errno_text(const char *what, int e) { return std::string(what) + ": " + std::strerror(e); }

} // namespace

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

std::string how_it_ended(int wstatus)
{
	if (WIFSIGNALED(wstatus))
		return strprintf("killed by signal %d", WTERMSIG(wstatus));
	return strprintf("exit status %d", WEXITSTATUS(wstatus));
}

ChildEnd wait_child(pid_t pid, int fd, int timeout_s, bool group, const std::atomic<bool> *cancel, size_t max_output)
{
	ChildEnd out;
	auto cancelled = [cancel] { return cancel && cancel->load(std::memory_order_acquire); };
	bool reaped = false, eof = false;
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
	char buf[4096];
	// Read until EOF; then (the child may have closed its output and still run)
	// wait for it, in slices of at most 100 ms so that cancel and the deadline
	// are seen, and so that an exited child is reaped without EOF.
	while (!reaped) {
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
										  std::chrono::steady_clock::now());
		if (left.count() <= 0) {
			out.timed_out = true;
			break;
		}
		if (cancelled()) {
			out.cancelled = true;
			break;
		}
		int slice = static_cast<int>(std::min<int64_t>(left.count(), 100));
		if (!eof) {
			struct pollfd p = {fd, POLLIN, 0};
			int n = ::poll(&p, 1, slice);
			if (n < 0 && errno == EINTR)
				continue;
			if (n > 0) {
				ssize_t r = ::read(fd, buf, sizeof(buf));
				if (r < 0 && (errno == EINTR || errno == EAGAIN))
					continue;
				if (r <= 0) {
					eof = true;
				} else {
					size_t room =
						max_output > out.output.size() ? max_output - out.output.size() : 0;
					out.output.append(buf, std::min(room, static_cast<size_t>(r)));
					out.truncated |= static_cast<size_t>(r) > room;
					continue;
				}
			}
		} else {
			::usleep(static_cast<useconds_t>(std::min(slice, 2)) * 1000);
		}
		pid_t w = ::waitpid(pid, &out.wstatus, WNOHANG);
		if (w == pid)
			reaped = true;
		else if (w < 0 && errno != EINTR)
			break;
	}
	// Whatever the exited child left in the pipe (without waiting: another
	// process may still hold the write end).
	while (reaped && !eof) {
		struct pollfd p = {fd, POLLIN, 0};
		if (::poll(&p, 1, 0) <= 0)
			break;
		ssize_t r = ::read(fd, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		size_t room = max_output > out.output.size() ? max_output - out.output.size() : 0;
		out.output.append(buf, std::min(room, static_cast<size_t>(r)));
		out.truncated |= static_cast<size_t>(r) > room;
	}
	::close(fd);
	if (!reaped) {
		if (out.timed_out || out.cancelled)
			::kill(group ? -pid : pid, SIGKILL);
		while (::waitpid(pid, &out.wstatus, 0) < 0 && errno == EINTR) {}
	}
	return out;
}

expected<CommandResult> run_command(const std::vector<std::string> &argv, const RunOptions &o)
{
	if (argv.empty())
		return unexpected("run_command", "empty command");
	if (!o.search_path && argv[0].compare(0, 1, "/") != 0)
		return unexpected(argv[0], "must be an absolute path");
	if (o.cancel && o.cancel->load(std::memory_order_acquire))
		return unexpected(command_line(argv), "cancelled");
	// Everything the child needs, made here.
	std::vector<char *> args;
	for (const auto &a : argv)
		args.push_back(const_cast<char *>(a.c_str()));
	args.push_back(nullptr);
	std::vector<char *> envp;
	for (const auto &e : o.env)
		envp.push_back(const_cast<char *>(e.c_str()));
	envp.push_back(nullptr);

	int fds[2];
	if (::pipe2(fds, O_CLOEXEC) != 0)
		return unexpected(argv[0], errno_text("pipe", errno));
	int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int *fd : {&fds[0], &fds[1], &null_fd})
		*fd = above_stdio(*fd);
	auto close_all = [&] {
		for (int fd : {fds[0], fds[1], null_fd})
			if (fd >= 0)
				::close(fd);
	};
	if (std::min({fds[0], fds[1], null_fd}) < 0) {
		int e = errno;
		close_all();
		return unexpected(argv[0], errno_text("cannot set up the command's descriptors", e));
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, null_fd, 0);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_adddup2(&fa, o.merge_stderr ? fds[1] : null_fd, 2);
	posix_spawnattr_t attr;
	posix_spawnattr_init(&attr);
	// Own process group, so that a timeout kills helpers the command started;
	// default signal handling and an empty mask, whatever the caller blocks.
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setpgroup(&attr, 0);
	char **env = o.env.empty() ? environ : envp.data();
	pid_t pid = -1;
	int rc = o.search_path ? ::posix_spawnp(&pid, args[0], &fa, &attr, args.data(), env)
			       : ::posix_spawn(&pid, args[0], &fa, &attr, args.data(), env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	::close(fds[1]);
	::close(null_fd);
	if (rc != 0) {
		::close(fds[0]);
		return unexpected(argv[0], std::string("cannot run: ") + std::strerror(rc));
	}
	ChildEnd end = wait_child(pid, fds[0], o.timeout_s, true, o.cancel, o.max_output);
	if (end.cancelled)
		return unexpected(command_line(argv), "cancelled");
	if (end.timed_out)
		return unexpected(command_line(argv), "timed out after " + std::to_string(o.timeout_s) + " s: killed");
	CommandResult res;
	res.output = std::move(end.output);
	res.truncated = end.truncated;
	res.exit_code = WIFEXITED(end.wstatus) ? WEXITSTATUS(end.wstatus) : -1;
	res.signal = WIFSIGNALED(end.wstatus) ? WTERMSIG(end.wstatus) : 0;
	return res;
}

expected<CommandResult> run_command(const std::vector<std::string> &argv, int timeout_seconds,
				    const std::atomic<bool> *cancel, size_t max_output)
{
	RunOptions o;
	o.timeout_s = timeout_seconds;
	o.cancel = cancel;
	o.max_output = max_output;
	return run_command(argv, o);
}

} // namespace loom
