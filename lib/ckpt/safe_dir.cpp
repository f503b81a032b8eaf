#include "lib/ckpt/safe_dir.hpp"

#include "lib/ckpt/options.hpp"
#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/log.hpp"
#include "lib/util/subprocess.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/auxv.h>
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

std::string errno_text(const char *what, int e) { return std::string(what) + ": " + std::strerror(e); }

// "O<text>" is the answer, "E<error>" the error (one trailing newline dropped).
expected<std::string> answer(std::string text, const std::string &program)
{
	if (!text.empty() && text.back() == '\n')
		text.pop_back();
	if (!text.empty() && text[0] == 'O')
		return text.substr(1);
	if (text.size() > 1 && text[0] == 'E')
		return unexpected(text.substr(1));
	return unexpected(program, "unreadable answer '" + shown(text) + "'");
}

// More than one thread in this process (or no way to tell).
bool multi_threaded()
{
	auto text = read_file("/proc/self/status", 1u << 20);
	if (!text)
		return true;
	for (const auto &line : split_lines(*text))
		if (line.compare(0, 8, "Threads:") == 0)
			return trim(std::string_view(line).substr(8)) != "1";
	return true;
}

} // namespace

status make_checkpoint_dir(const std::string &root, const std::string &path)
{
	// '..' would climb out of the directory opened last: refused before anything is opened.
	if (auto st = check_clean_path(root); !st)
		return unexpected(root, st.error().message);
	if (auto st = check_clean_path(path); !st)
		return unexpected(path, st.error().message);
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

status become(const Credentials &cred)
{
	auto refused = [&](const std::string &why) {
		return unexpected(strprintf("cannot switch to uid %u", static_cast<unsigned>(cred.uid)), why);
	};
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;
	if (::getresuid(&ruid, &euid, &suid) != 0 || ::getresgid(&rgid, &egid, &sgid) != 0)
		return refused(errno_text("getresuid", errno));
	if (ruid == 0) {
		// slurmstepd may have dropped only its effective uid: the real one is root's.
		if (euid != 0 && ::seteuid(0) != 0)
			return refused(errno_text("seteuid(0)", errno));
		if (::setgroups(cred.groups.size(), cred.groups.data()) != 0)
			return refused(errno_text("setgroups", errno));
		if (::setresgid(cred.gid, cred.gid, cred.gid) != 0)
			return refused(errno_text("setresgid", errno));
		if (::setresuid(cred.uid, cred.uid, cred.uid) != 0)
			return refused(errno_text("setresuid", errno));
		if (cred.uid != 0 && ::setuid(0) == 0)
			return refused("root could be taken back");
		if (::getresuid(&ruid, &euid, &suid) != 0 || ruid != cred.uid || euid != cred.uid || suid != cred.uid ||
		    ::getresgid(&rgid, &egid, &sgid) != 0 || rgid != cred.gid || egid != cred.gid || sgid != cred.gid)
			return refused("the identity did not change");
		return ok();
	}
	// Not root: try nothing, act only as oneself.
	if (::getauxval(AT_SECURE) != 0)
		return refused("started set-user-ID, set-group-ID or with file capabilities by uid " +
			       std::to_string(ruid) + ": refused");
	if (euid != ruid || suid != ruid || egid != rgid || sgid != rgid)
		return refused("real, effective and saved ids differ (uid " + std::to_string(ruid) + "/" +
			       std::to_string(euid) + "/" + std::to_string(suid) + "): refused");
	if (cred.uid != ruid)
		return refused("running as uid " + std::to_string(ruid) + ", not root: acts only as its caller");
	return ok();
}

std::vector<std::string> credential_args(const Credentials &cred)
{
	std::vector<std::string> words = {"--uid=" + std::to_string(cred.uid), "--gid=" + std::to_string(cred.gid),
					  "--groups="};
	// One word holds at most 128 KiB (MAX_ARG_STRLEN): a long group list takes several.
	size_t in_word = 0;
	for (gid_t g : cred.groups) {
		if (in_word == 1000) {
			words.push_back("--groups=");
			in_word = 0;
		}
		words.back() += (in_word++ ? "," : "") + std::to_string(g);
	}
	return words;
}

expected<HelperArgs> parse_helper_args(int argc, char *const argv[])
{
	HelperArgs h;
	bool have_uid = false, have_gid = false;
	const int64_t id_max = static_cast<int64_t>(static_cast<uid_t>(-1)) - 1; // (uid_t)-1 is "no id"
	int i = 1;
	for (; i < argc; i++) {
		std::string_view a = argv[i];
		auto id = [&](size_t skip) { return parse_int(a.substr(skip), 0, id_max); };
		if (a.substr(0, 6) == "--uid=") {
			auto v = id(6);
			if (!v)
				return unexpected(std::string(a), v.error().message);
			h.cred.uid = static_cast<uid_t>(*v), have_uid = true;
		} else if (a.substr(0, 6) == "--gid=") {
			auto v = id(6);
			if (!v)
				return unexpected(std::string(a), v.error().message);
			h.cred.gid = static_cast<gid_t>(*v), have_gid = true;
		} else if (a.substr(0, 9) == "--groups=") { // adds to the groups of the words before
			std::string_view list = a.substr(9);
			while (!list.empty()) {
				size_t comma = std::min(list.find(','), list.size());
				auto v = parse_int(list.substr(0, comma), 0, id_max);
				if (!v)
					return unexpected(std::string(a), v.error().message);
				h.cred.groups.push_back(static_cast<gid_t>(*v));
				list.remove_prefix(std::min(comma + 1, list.size()));
			}
		} else {
			break;
		}
	}
	if (!have_uid || !have_gid)
		return unexpected("--uid= and --gid= are required before the operation");
	for (; i < argc; i++)
		h.operation.emplace_back(argv[i]);
	if (h.operation.empty())
		return unexpected("no operation given");
	return h;
}

expected<std::string> run_helper(const std::string &program, const Credentials &cred,
				 const std::vector<std::string> &args, int timeout_s)
{
	if (program.empty() || program[0] != '/')
		return unexpected(program, "the checkpoint helper must be an absolute path");
	std::vector<std::string> argv = {program};
	for (auto &w : credential_args(cred))
		argv.push_back(std::move(w));
	argv.insert(argv.end(), args.begin(), args.end());
	RunOptions o;
	o.timeout_s = timeout_s;
	o.search_path = false;
	o.merge_stderr = false; // the answer is stdout; the helper's own messages go nowhere
	o.max_output = 1u << 20;
	o.env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
	auto r = run_command(argv, o);
	if (!r) {
		const std::string &why = r.error().message;
		if (why.rfind("cannot run: ", 0) == 0)
			return unexpected(program, "cannot execute the checkpoint helper: " + why.substr(12));
		return unexpected(program, why);
	}
	if (r->truncated)
		return unexpected(program, "answer longer than 1 MiB: not read");
	if (r->output.empty())
		return unexpected(program, "ended without an answer (" +
						   (r->signal ? strprintf("killed by signal %d", r->signal)
							      : strprintf("exit status %d", r->exit_code)) +
						   ")");
	return answer(std::move(r->output), program);
}

expected<std::string> run_as(const Credentials &cred, const std::function<expected<std::string>()> &fn, int timeout_s)
{
	if (multi_threaded())
		return unexpected("run_as", "refused in a multi-threaded process (the child could deadlock): "
					    "use run_helper");
	int p[2];
	if (::pipe2(p, O_CLOEXEC) != 0)
		return unexpected("run_as", errno_text("pipe", errno));
	pid_t pid = ::fork();
	if (pid < 0) {
		::close(p[0]);
		::close(p[1]);
		return unexpected("run_as", errno_text("fork", errno));
	}
	if (pid == 0) {
		::close(p[0]);
		std::string out;
		if (auto st = become(cred); !st) {
			out = "E" + st.error().str();
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
	ChildEnd got = wait_child(pid, p[0], timeout_s, false, nullptr, 64u << 20);
	if (got.timed_out)
		return unexpected("run_as", "timed out after " + std::to_string(timeout_s) + " s");
	if (got.output.empty())
		return unexpected("run_as", "the helper process died without an answer");
	if (got.output[0] == 'O')
		return got.output.substr(1);
	return unexpected(got.output.substr(1));
}

} // namespace loom::ckpt
