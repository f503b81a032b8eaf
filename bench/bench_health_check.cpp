// bench_health_check: how long `loom health check` spends gathering and
// judging, on a recorded 8xH100 node (nvidia-smi -q, the Xid 119 kernel log,
// the InfiniBand sysfs tree, Azure's link-flap syslog) assembled under a
// temporary root from tests/data/health.
//
//   bench_health_check [ITERATIONS]    (LOOM_SRCDIR: the source tree, default .)
#include "lib/health/gather.hpp"
#include "lib/health/rules.hpp"
#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace loom;
using namespace loom::health;

int main(int argc, char **argv)
{
	int iters = 200;
	if (argc > 2) {
		std::fprintf(stderr, "usage: bench_health_check [COUNT]   (default 200)\n");
		return 2;
	}
	if (argc == 2) {
		auto v = loom::parse_int(argv[1], 1, 100000);
		if (!v) {
			std::fprintf(stderr, "usage: bench_health_check [COUNT]: '%s': %s\n", argv[1],
				     v.error().message.c_str());
			return 2;
		}
		iters = static_cast<int>(*v);
	}
	const char *src = std::getenv("LOOM_SRCDIR");
	std::string data = std::string(src && *src ? src : ".") + "/tests/data/health";
	char tmpl[] = "/tmp/loom-bench-health.XXXXXX";
	std::string root = ::mkdtemp(tmpl);
	auto copy = [&](const std::string &from, const std::string &to) {
		auto t = read_file(data + "/" + from);
		if (!t || !write_file_atomic(root + "/" + to, *t)) {
			std::fprintf(stderr, "bench_health_check: cannot stage %s\n", from.c_str());
			std::exit(1);
		}
	};
	::mkdir((root + "/var").c_str(), 0755);
	::mkdir((root + "/var/log").c_str(), 0755);
	::mkdir((root + "/sys").c_str(), 0755);
	::mkdir((root + "/sys/class").c_str(), 0755);
	copy("kmsg-xid-119-h100.log", "var/log/kern.log");
	copy("azure-1dev_6flap_syslog", "var/log/syslog");
	copy("nvidia-smi-q-8xh100-535.161.08.txt", "nvidia-smi-q.txt");
	if (::symlink((data + "/sys-class-infiniband-h100").c_str(), (root + "/sys/class/infiniband").c_str()) != 0)
		return 1;
	GatherOptions opt;
	opt.root = root;
	HealthConfig cfg;
	std::vector<double> ms;
	std::map<std::string, double> per;
	Outcome last = Outcome::ok;
	for (int i = 0; i < iters; i++) {
		auto t0 = std::chrono::steady_clock::now();
		NodeSample s = gather(opt);
		Verdict v = judge(s, cfg);
		ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
		for (const auto &[k, t] : s.collect_ms)
			per[k] += t / iters;
		last = v.outcome;
	}
	std::sort(ms.begin(), ms.end());
	std::printf("bench_health_check: %d runs on a recorded 8xH100 node (verdict %s)\n", iters, outcome_name(last));
	std::printf("  gather+judge: median %.2f ms, p99 %.2f ms, max %.2f ms\n", ms[ms.size() / 2],
		    ms[std::min(ms.size() - 1, ms.size() * 99 / 100)], ms.back());
	for (const auto &[k, t] : per)
		std::printf("  %-12s %.3f ms mean\n", k.c_str(), t);
	std::string cmd = "rm -rf '" + root + "'";
	return std::system(cmd.c_str()) == 0 ? 0 : 1;
}
