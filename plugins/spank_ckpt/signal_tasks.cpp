#include "plugins/spank_ckpt/signal_tasks.hpp"

#include "lib/util/fs.hpp"

#include <csignal>
#include <cstdlib>
#include <dirent.h>
#include <map>
#include <set>
#include <unistd.h>

namespace loom::spank_ckpt {
namespace {

struct ProcInfo {
	pid_t ppid = 0;
	unsigned long long caught = 0;
};

bool read_status(const std::string &path, ProcInfo &out)
{
	auto text = read_file(path, 1 << 16);
	if (!text)
		return false;
	bool have_ppid = false, have_cgt = false;
	for (const auto &line : split_lines(*text)) {
		if (line.rfind("PPid:", 0) == 0) {
			out.ppid = static_cast<pid_t>(std::strtol(line.c_str() + 5, nullptr, 10));
			have_ppid = true;
		} else if (line.rfind("SigCgt:", 0) == 0) {
			out.caught = std::strtoull(line.c_str() + 7, nullptr, 16);
			have_cgt = true;
		}
	}
	return have_ppid && have_cgt;
}

} // namespace

std::vector<pid_t> catching_descendants(pid_t root, int sig, const std::string &proc)
{
	std::map<pid_t, ProcInfo> procs;
	DIR *d = ::opendir(proc.c_str());
	if (!d)
		return {};
	while (struct dirent *e = ::readdir(d)) {
		char *end = nullptr;
		long pid = std::strtol(e->d_name, &end, 10);
		if (pid <= 0 || *end != '\0')
			continue;
		ProcInfo info;
		if (read_status(proc + "/" + e->d_name + "/status", info))
			procs[static_cast<pid_t>(pid)] = info;
	}
	::closedir(d);
	std::set<pid_t> below{root};
	// Parents may have larger pids than children (pid wrap): iterate to a fixed point.
	for (bool grew = true; grew;) {
		grew = false;
		for (const auto &[pid, info] : procs)
			if (!below.count(pid) && below.count(info.ppid)) {
				below.insert(pid);
				grew = true;
			}
	}
	std::vector<pid_t> out;
	for (pid_t pid : below)
		if (sig > 0 && sig <= 64 && (procs[pid].caught >> (sig - 1)) & 1ULL)
			out.push_back(pid);
	return out;
}

bool is_srun(pid_t pid, const std::string &proc)
{
	std::string dir = proc + "/" + std::to_string(pid);
	if (auto comm = read_file(dir + "/comm", 64); comm && trim(*comm) == "srun")
		return true;
	// comm is the process's to change (prctl) and cut at 15 bytes: the executable too.
	char buf[4096];
	ssize_t n = ::readlink((dir + "/exe").c_str(), buf, sizeof buf - 1);
	if (n <= 0)
		return false;
	std::string exe(buf, static_cast<size_t>(n));
	const std::string deleted = " (deleted)"; // replaced on disk since it started
	if (exe.size() > deleted.size() && exe.compare(exe.size() - deleted.size(), deleted.size(), deleted) == 0)
		exe.resize(exe.size() - deleted.size());
	return exe.substr(exe.find_last_of('/') + 1) == "srun";
}

Catchers checkpoint_targets(pid_t root, int sig, const std::string &proc)
{
	Catchers c;
	for (pid_t pid : catching_descendants(root, sig, proc))
		(is_srun(pid, proc) ? c.srun : c.signal).push_back(pid);
	return c;
}

Signalled signal_catchers(pid_t root, int sig)
{
	Signalled s;
	Catchers c = checkpoint_targets(root, sig);
	s.srun_skipped = static_cast<int>(c.srun.size());
	for (pid_t pid : c.signal)
		if (::kill(pid, sig) == 0)
			s.sent++;
	return s;
}

} // namespace loom::spank_ckpt
