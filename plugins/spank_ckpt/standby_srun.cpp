#include "plugins/spank_ckpt/standby_srun.hpp"

#include "lib/ckpt/standby_plan.hpp"
#include "lib/util/fs.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace loom::spank_ckpt {
namespace {

struct Armed {
	std::string dir;
	uint32_t job = 0, step = 0;
};
Armed g_armed;

void say(const std::string &text)
{
	std::fprintf(stderr, "spank_ckpt: job %u step %u: %s\n", g_armed.job, g_armed.step, text.c_str());
	std::fflush(stderr);
}

// srun's own command line, as it was executed.
std::vector<std::string> own_argv()
{
	auto text = read_file("/proc/self/cmdline", 1u << 20);
	std::vector<std::string> argv;
	if (!text)
		return argv;
	for (size_t start = 0; start < text->size();) {
		size_t nul = text->find('\0', start);
		if (nul == std::string::npos)
			nul = text->size();
		argv.push_back(text->substr(start, nul - start));
		start = nul + 1;
	}
	return argv;
}

// The keeper's answer, or an error once the deadline passes.
expected<ckpt::StepVerdict> await_verdict(const std::string &path)
{
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(standby_answer_timeout_s);
	for (;;) {
		int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0) {
			::close(fd);
			auto text = read_file(path, 64u << 10);
			if (!text)
				return unexpected(text.error());
			return ckpt::parse_verdict(*text, path);
		}
		if (errno != ENOENT)
			return unexpected(path, std::strerror(errno));
		if (std::chrono::steady_clock::now() >= deadline)
			return unexpected(path, "no answer from the batch step in " +
							std::to_string(standby_answer_timeout_s) + " s");
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
	}
}

void relaunch(const ckpt::StepVerdict &v)
{
	for (const auto &[k, value] : ckpt::relaunch_env(v))
		::setenv(k.c_str(), value.c_str(), 1);
	auto argv = own_argv();
	if (argv.empty()) {
		say("cannot read srun's command line: not started again");
		return;
	}
	if (auto ex = ckpt::relaunch_exclude(v); !ex.empty())
		argv.insert(argv.begin() + 1, "--exclude=" + ex);
	say(v.why + ": starting the step again on " + join(v.layout.active, ",") + " (restart " +
	    std::to_string(v.generation) + " in the allocation)");
	std::vector<char *> args;
	for (auto &a : argv)
		args.push_back(a.data());
	args.push_back(nullptr);
	::execv("/proc/self/exe", args.data());
	say(std::string("cannot execute srun again: ") + std::strerror(errno));
}

void at_exit()
{
	std::string base = g_armed.dir + "/";
	std::string ended = base + "ended." + std::to_string(g_armed.step);
	int fd = ::open(ended.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return; // no keeper to ask (its directory is gone): srun ends as it would
	::close(fd);
	auto v = await_verdict(base + "verdict." + std::to_string(g_armed.step));
	if (!v) {
		say(v.error().str());
		return;
	}
	if (v->relaunch)
		relaunch(*v);
}

} // namespace

bool arm_standby_relaunch(uint32_t job, uint32_t step)
{
	const char *dir = std::getenv(ckpt::standby_dir_env);
	if (!dir || !*dir || !g_armed.dir.empty())
		return false;
	// The handler lives in this plugin: keep it loaded until srun is gone.
	Dl_info info;
	if (!::dladdr(reinterpret_cast<void *>(&at_exit), &info) || !info.dli_fname ||
	    !::dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE))
		return false;
	g_armed = {dir, job, step};
	// The keeper learns of the step: a replacement while it runs starts it again.
	std::string started = std::string(dir) + "/started." + std::to_string(step);
	if (int fd = ::open(started.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600); fd >= 0)
		::close(fd);
	return std::atexit(at_exit) == 0;
}

} // namespace loom::spank_ckpt
