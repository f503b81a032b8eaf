// loom-ckpt-helper: what spank_ckpt does in a job user's checkpoint
// directory, done as that user.
//
// slurmstepd is multi-threaded: its forked child may only execute this
// program (ckpt::run_helper), never parse, allocate or verify itself. This
// process is single-threaded and does all of that. Before anything else it
// takes the job user's identity for good (ckpt::become): started as root it
// switches groups, gid and uid and makes sure root is out of reach; started
// by anyone else it tries nothing and acts only as its caller (it is not
// set-id; a user asking for another uid is refused).
//
//   loom-ckpt-helper --uid=U --gid=G --groups=G1,G2 OPERATION ARGS...
//     prepare ROOT DIR   create DIR below ROOT one component at a time
//                        (no symlink, no '..', directories of the user's),
//                        answer the newest checkpoint
//     start ROOT DIR RESTART_COUNT MAX_RESTARTS JOB_ID
//                        prepare, then judge and record this start of the
//                        batch step against the restart budget
//     newest DIR         the newest checkpoint (quick verification)
//     migrated DIR [UNIX_TIME]
//                        when the job last moved off a suspect node, or
//                        record that it does now
//     request DIR REASON ask the program to checkpoint: write the next
//                        request to DIR/.loom-request (ckpt::write_request),
//                        answer its seq
//
// The answer is one line on stdout: "O" and the JSON answer, or "E" and the
// error naming the path and the cause. Exit status 0, 1 (refused or
// failed) or 2 (usage).
#include "lib/ckpt/catalog.hpp"
#include "lib/ckpt/layout.hpp"
#include "lib/ckpt/options.hpp"
#include "lib/ckpt/request.hpp"
#include "lib/ckpt/restart.hpp"
#include "lib/ckpt/safe_dir.hpp"
#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"
#include "lib/util/log.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <exception>
#include <string>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace {

using namespace loom;

// Descriptors slurmstepd left open without close-on-exec: not the user's.
void close_inherited_fds()
{
#ifdef SYS_close_range
	if (::syscall(SYS_close_range, 3u, ~0u, 0u) == 0)
		return;
#endif
	std::vector<int> fds;
	if (DIR *d = ::opendir("/proc/self/fd")) {
		while (struct dirent *e = ::readdir(d))
			if (int fd = std::atoi(e->d_name); fd > 2 && fd != ::dirfd(d))
				fds.push_back(fd);
		::closedir(d);
	} else {
		struct rlimit rl = {};
		rlim_t n = ::getrlimit(RLIMIT_NOFILE, &rl) == 0 ? std::min<rlim_t>(rl.rlim_cur, 1u << 20) : 1024;
		for (int fd = 3; static_cast<rlim_t>(fd) < n; fd++)
			fds.push_back(fd);
	}
	for (int fd : fds)
		::close(fd);
}

double now_unix() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

expected<std::string> clean(const std::string &path)
{
	if (auto st = ckpt::check_clean_path(path); !st)
		return unexpected(path, st.error().message);
	return path;
}

// The newest checkpoint as a JSON object: step, path, created, write_s ({} when none).
expected<std::string> newest_as_json(const std::string &dir)
{
	Json o = Json::object();
	auto l = ckpt::find_latest(dir, ckpt::Verify::quick);
	if (!l)
		return unexpected(l.error());
	if (l->has_value()) {
		const auto &e = (*l)->entry;
		o.set("step", Json::integer(e.step)).set("path", Json::string(e.path));
		o.set("created", Json::number(e.manifest->created));
		o.set("write_s", Json::number(e.manifest->write_seconds));
		o.set("bytes", Json::integer(static_cast<int64_t>(e.manifest->total_bytes())));
	}
	return o.dump(false);
}

expected<std::string> prepare(const std::string &root, const std::string &dir)
{
	auto r = clean(root);
	auto d = clean(dir);
	if (!r || !d)
		return unexpected(!r ? r.error() : d.error());
	if (auto st = ckpt::make_checkpoint_dir(*r, *d); !st)
		return unexpected(st.error());
	return newest_as_json(*d);
}

// The visible entries of 'dir' that loom did not write, sorted (a
// framework's own checkpoints; dot files, .nfs* included, are not counted).
std::vector<std::string> foreign_entries(const std::string &dir)
{
	std::vector<std::string> out;
	for (auto &name : list_dir(dir))
		if (!name.empty() && name[0] != '.' && !ckpt::is_loom_entry(name))
			out.push_back(std::move(name));
	std::sort(out.begin(), out.end());
	return out;
}

// The batch step's start: {"newest": <prepare's answer>, "verdict": N,
// "reason": "...", "foreign": [the first 5 of foreign_entries], "foreign_count": N}.
expected<std::string> start(const std::string &root, const std::string &dir, int64_t restarts, int64_t budget,
			    const std::string &job)
{
	auto newest = prepare(root, dir);
	if (!newest)
		return unexpected(newest.error());
	int64_t step = -1;
	if (auto doc = json_parse(*newest, "newest checkpoint"); doc)
		if (auto s = ObjectReader(doc->get(), "$").integer_or("step", -1); s)
			step = *s;
	std::vector<ckpt::StartRecord> before;
	std::string starts_path = path_join(dir, ckpt::starts_name);
	if (auto text = read_file(starts_path, 16u << 20); text)
		if (auto parsed = ckpt::parse_starts(*text, starts_path); parsed)
			before = *parsed;
	auto foreign = foreign_entries(dir);
	auto d = ckpt::decide_start(restarts, budget, step, before, !foreign.empty());
	double now = now_unix();
	ckpt::StartRecord record{restarts, step, now, job, d.verdict != ckpt::StartVerdict::run};
	if (auto rec = ckpt::record_start(dir, record); !rec)
		return unexpected(rec.error());
	Json o = Json::object();
	o.set("newest", Json::string(*newest));
	o.set("verdict", Json::integer(static_cast<int64_t>(d.verdict)));
	o.set("reason", Json::string(d.reason));
	Json names = Json::array();
	for (size_t i = 0; i < foreign.size() && i < 5; i++)
		names.push(Json::string(foreign[i]));
	o.set("foreign", std::move(names));
	o.set("foreign_count", Json::integer(static_cast<int64_t>(foreign.size())));
	return o.dump(false);
}

const char *const usage = "usage: loom-ckpt-helper --uid=U --gid=G [--groups=G1,G2] "
			  "prepare ROOT DIR | start ROOT DIR RESTART_COUNT MAX_RESTARTS JOB_ID | newest DIR | "
			  "migrated DIR [UNIX_TIME] | request DIR REASON";

// Exit status 2: the command line is wrong.
struct UsageError {
	Error error;
};

expected<std::string> run(const std::vector<std::string> &op)
{
	const std::string &name = op[0];
	auto count = [&](size_t n) {
		if (op.size() != n + 1)
			throw UsageError{Error(name, "takes " + std::to_string(n) + " argument(s)")};
	};
	auto number = [&](size_t i, const char *what) {
		auto v = parse_int(op[i], 0, INT64_MAX);
		if (!v)
			throw UsageError{Error(std::string(what) + " '" + op[i] + "'", v.error().message)};
		return *v;
	};
	if (name == "prepare") {
		count(2);
		return prepare(op[1], op[2]);
	}
	if (name == "start") {
		count(5);
		return start(op[1], op[2], number(3, "RESTART_COUNT"), number(4, "MAX_RESTARTS"), op[5]);
	}
	if (name == "newest") {
		count(1);
		auto d = clean(op[1]);
		return d ? newest_as_json(*d) : expected<std::string>(unexpected(d.error()));
	}
	if (name == "migrated") {
		// When the job last moved off a suspect node (DIR/.loom-migrated, seconds
		// since the epoch; 0: never), or record that it does now.
		if (op.size() != 2 && op.size() != 3)
			throw UsageError{Error(name, "takes 1 or 2 argument(s)")};
		auto d = clean(op[1]);
		if (!d)
			return unexpected(d.error());
		std::string file = path_join(*d, ".loom-migrated");
		if (op.size() == 3) {
			int64_t t = number(2, "UNIX_TIME");
			if (auto st = write_file_atomic(file, std::to_string(t) + "\n", 0600); !st)
				return unexpected(st.error());
			return std::to_string(t);
		}
		auto text = read_file(file, 64);
		if (!text)
			return std::string("0");
		auto t = parse_int(trim(*text), 0, INT64_MAX);
		return t ? std::to_string(*t) : std::string("0");
	}
	if (name == "request") {
		count(2);
		auto d = clean(op[1]);
		if (!d)
			return unexpected(d.error());
		auto seq = ckpt::write_request(*d, op[2], now_unix());
		return seq ? std::to_string(*seq) : expected<std::string>(unexpected(seq.error()));
	}
	throw UsageError{Error(name, "unknown operation")};
}

int answer(const expected<std::string> &r, int failed_status)
{
	std::string line = r ? "O" + *r : "E" + r.error().str();
	if (line.empty() || line.back() != '\n')
		line += '\n';
	bool written = std::fwrite(line.data(), 1, line.size(), stdout) == line.size() && std::fflush(stdout) == 0;
	return !written ? 1 : r ? 0 : failed_status;
}

} // namespace

int main(int argc, char **argv)
{
	close_inherited_fds();
	sigset_t none;
	sigemptyset(&none);
	::sigprocmask(SIG_SETMASK, &none, nullptr); // slurmstepd's mask survives the exec
	log_set_program("loom-ckpt-helper");
	try {
		auto args = ckpt::parse_helper_args(argc, argv);
		if (!args)
			return answer(unexpected(args.error().str() + " (" + usage + ")"), 2);
		// For good, before any path is looked at.
		if (auto st = ckpt::become(args->cred); !st)
			return answer(unexpected(st.error()), 1);
		::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		return answer(run(args->operation), 1);
	} catch (const UsageError &u) {
		return answer(unexpected(u.error.str() + " (" + usage + ")"), 2);
	} catch (const std::exception &e) {
		return answer(unexpected(std::string("unexpected failure: ") + e.what()), 1);
	} catch (...) {
		return answer(unexpected("unexpected failure"), 1);
	}
}
