#include "lib/ckpt/safe_dir.hpp"

#include "lib/util/log.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace loom::ckpt {
namespace {

std::vector<std::string> components(const std::string &rel)
{
	std::vector<std::string> out;
	size_t start = 0;
	while (start < rel.size()) {
		size_t slash = rel.find('/', start);
		if (slash == std::string::npos)
			slash = rel.size();
		if (slash > start)
			out.push_back(rel.substr(start, slash - start));
		start = slash + 1;
	}
	return out;
}

} // namespace

status make_checkpoint_dir(const std::string &root, const std::string &path)
{
	if (path != root && (path.size() <= root.size() || path.compare(0, root.size(), root) != 0 ||
			     (root != "/" && path[root.size()] != '/')))
		return unexpected(path, "is not below " + root);
	int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return unexpected(root, std::string("checkpoint root cannot be opened: ") + std::strerror(errno));
	std::string done = root;
	uid_t me = ::geteuid();
	std::vector<std::string> comps = components(path.substr(root.size()));
	for (size_t i = 0; i < comps.size(); i++) {
		const std::string &c = comps[i];
		done += (done == "/" ? "" : "/") + c;
		bool last = i + 1 == comps.size();
		if (::mkdirat(fd, c.c_str(), last ? 0700 : 0755) != 0 && errno != EEXIST) {
			int e = errno;
			::close(fd);
			return unexpected(done, std::string("cannot create: ") + std::strerror(e));
		}
		int next = ::openat(fd, c.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		::close(fd);
		if (next < 0)
			return unexpected(done, e == ELOOP || e == ENOTDIR
							? std::string("is a symlink or not a directory: refused")
							: std::string("cannot open: ") + std::strerror(e));
		fd = next;
		struct stat st;
		if (::fstat(fd, &st) != 0) {
			::close(fd);
			return unexpected(done, "cannot stat");
		}
		if (st.st_uid != me && (last || st.st_uid != 0)) {
			::close(fd);
			return unexpected(done, "belongs to uid " + std::to_string(st.st_uid) + ", not to you (uid " +
							std::to_string(me) + ")");
		}
	}
	struct stat st;
	int rc = ::fstat(fd, &st);
	::close(fd);
	if (rc != 0 || st.st_uid != me)
		return unexpected(path, "is not yours");
	return ok();
}

expected<std::string> run_as(const Credentials &cred, const std::function<expected<std::string>()> &fn,
			     int timeout_s)
{
	int p[2];
	if (::pipe2(p, O_CLOEXEC) != 0)
		return unexpected("run_as", std::string("pipe: ") + std::strerror(errno));
	pid_t pid = ::fork();
	if (pid < 0) {
		::close(p[0]);
		::close(p[1]);
		return unexpected("run_as", std::string("fork: ") + std::strerror(errno));
	}
	if (pid == 0) {
		::close(p[0]);
		std::string out;
		bool switched = true;
		// slurmstepd may have dropped only its effective uid: take root back first.
		if (::getuid() == 0 && ::geteuid() != 0 && ::seteuid(0) != 0)
			switched = false;
		if (switched && ::geteuid() == 0) {
			switched = ::setgroups(cred.groups.size(), cred.groups.data()) == 0 &&
				   ::setresgid(cred.gid, cred.gid, cred.gid) == 0 &&
				   ::setresuid(cred.uid, cred.uid, cred.uid) == 0;
			if (switched && cred.uid != 0 && ::setuid(0) == 0)
				switched = false; // must not be able to return to root
		} else if (::geteuid() != cred.uid) {
			switched = false;
		}
		if (!switched) {
			out = "E" + strprintf("cannot switch to uid %u", static_cast<unsigned>(cred.uid));
		} else {
			try {
				auto r = fn();
				out = r ? "O" + *r : "E" + r.error().str();
			} catch (const std::exception &ex) {
				out = std::string("E") + ex.what();
			} catch (...) {
				out = "Eunexpected failure";
			}
		}
		const char *d = out.data();
		size_t left = out.size();
		while (left > 0) {
			ssize_t w = ::write(p[1], d, left);
			if (w <= 0)
				break;
			d += w;
			left -= static_cast<size_t>(w);
		}
		::_exit(0);
	}
	::close(p[1]);
	std::string got;
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
	bool timed_out = false;
	char buf[4096];
	while (true) {
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
		if (left.count() <= 0) {
			timed_out = true;
			break;
		}
		struct pollfd pfd = {p[0], POLLIN, 0};
		int r = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			continue;
		ssize_t n = ::read(p[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got.append(buf, static_cast<size_t>(n));
	}
	::close(p[0]);
	if (timed_out)
		::kill(pid, SIGKILL);
	int wstatus = 0;
	while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
	}
	if (timed_out)
		return unexpected("run_as", "timed out after " + std::to_string(timeout_s) + " s");
	if (got.empty())
		return unexpected("run_as", "the helper process died without an answer");
	if (got[0] == 'O')
		return got.substr(1);
	return unexpected(got.substr(1));
}

} // namespace loom::ckpt
