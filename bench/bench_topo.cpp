// Benchmark: build synthetic clusters of 1k, 10k and 100k GPUs (3-level fat
// tree, 8 GPUs per node with 8 rail NICs, NVL72-style NVLink domains of 9
// nodes), write them as loom cluster files, then load each in a fresh process
// and report load time, peak memory and distance queries per second.
//
//   bench_topo [DIR]              (default /tmp)
//   bench_topo --load FILE        (one measurement, used by the above)
#include "lib/topo/cluster_json.hpp"
#include "lib/util/fs.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace loom;
using namespace loom::topo;

namespace {

ClusterSpec synthetic(int gpus, bool nvl72)
{
	const int per_node = 8, per_leaf = 32, leaves_per_pod = 16;
	int nodes = gpus / per_node;
	ClusterSpec s;
	s.name = "synthetic-" + std::to_string(gpus);
	s.domains.push_back(DomainSpec{"spine", "spine", "", 0, ""});
	for (int n = 0; n < nodes; n++) {
		int leaf = n / per_leaf, pod = leaf / leaves_per_pod;
		if (n % (per_leaf * leaves_per_pod) == 0)
			s.domains.push_back(DomainSpec{"pod" + std::to_string(pod), "pod", "spine", 51200, ""});
		if (n % per_leaf == 0)
			s.domains.push_back(DomainSpec{"leaf" + std::to_string(leaf), "leaf",
						       "pod" + std::to_string(pod), 12800, ""});
		if (nvl72 && n % 9 == 0)
			s.nvlink_domains.push_back(NvlinkDomainSpec{"nvl" + std::to_string(n / 9), 7200, ""});
		NodeSpec ns;
		ns.name = "gpu" + std::to_string(n);
		ns.domain = "leaf" + std::to_string(leaf);
		if (nvl72)
			ns.nvlink_domain = "nvl" + std::to_string(n / 9);
		ns.perf_class = n % 2 ? "h100" : "b200";
		ns.features = {ns.perf_class, "ib"};
		for (int k = 0; k < per_node; k++) {
			char bus[32];
			std::snprintf(bus, sizeof(bus), "0000:%02x:00.0", 0x10 + k);
			GpuSpec g;
			g.index = k;
			g.pci_bus_id = bus;
			g.model = n % 2 ? "NVIDIA H100 80GB HBM3" : "NVIDIA B200";
			g.memory_mib = 81559;
			g.numa = k / 4;
			g.nic = "mlx5_" + std::to_string(k);
			g.nvswitch = true;
			g.nvlinks = 18;
			g.nvlink_gbps = 3600;
			ns.gpus.push_back(g);
			NicSpec x;
			x.device = "mlx5_" + std::to_string(k);
			x.link_layer = LinkLayer::infiniband;
			x.rate_gbps = 400;
			x.rail = k;
			x.numa = k / 4;
			ns.nics.push_back(x);
		}
		s.nodes.push_back(std::move(ns));
	}
	return s;
}

int load_one(const char *path)
{
	auto t0 = std::chrono::steady_clock::now();
	auto c = load_cluster_file(path);
	auto t1 = std::chrono::steady_clock::now();
	if (!c) {
		std::fprintf(stderr, "bench_topo: %s\n", c.error().str().c_str());
		return 1;
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	std::mt19937 rng(42);
	std::uniform_int_distribution<Index> pick(0, static_cast<Index>(c->gpus.size()) - 1);
	const int queries = 2000000;
	double sink = 0;
	auto q0 = std::chrono::steady_clock::now();
	for (int i = 0; i < queries; i++)
		sink += c->gpu_path(pick(rng), pick(rng)).gbps;
	auto q1 = std::chrono::steady_clock::now();
	double load_s = std::chrono::duration<double>(t1 - t0).count();
	double q_s = std::chrono::duration<double>(q1 - q0).count();
	std::printf("%8lld GPUs %6zu nodes %5zu domains  load %.3f s  peak RSS %.1f MiB  %.1f M gpu_path/s%s\n",
		    static_cast<long long>(c->total_gpus()), c->nodes.size(), c->domains.size(), load_s,
		    static_cast<double>(ru.ru_maxrss) / 1024, queries / q_s / 1e6, sink < 0 ? "!" : "");
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc == 3 && std::string(argv[1]) == "--load")
		return load_one(argv[2]);
	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		std::fprintf(stderr, "usage: bench_topo [DIR]   (default /tmp)\n");
		return 2;
	}
	std::string dir = argc > 1 ? argv[1] : "/tmp";
	int rc = 0;
	for (int gpus : {1024, 10240, 102400}) {
		for (bool shared : {true, false}) {
			auto c = build_cluster(synthetic(gpus, true));
			if (!c) {
				std::fprintf(stderr, "bench_topo: %s\n", c.error().str().c_str());
				return 1;
			}
			std::string path = dir + "/bench-topo-" + std::to_string(gpus) +
					   (shared ? "-shared" : "-inline") + ".json";
			std::string text = write_cluster_json(*c, {false, shared});
			if (!write_file_atomic(path, text)) {
				std::fprintf(stderr, "bench_topo: cannot write %s\n", path.c_str());
				return 1;
			}
			std::printf("%s (%.1f MiB, hardware %s): ", path.c_str(),
				    static_cast<double>(text.size()) / (1 << 20), shared ? "shared" : "inline");
			std::fflush(stdout);
			pid_t pid = fork();
			if (pid == 0) {
				execl("/proc/self/exe", argv[0], "--load", path.c_str(), static_cast<char *>(nullptr));
				_exit(127);
			}
			int st = 0;
			waitpid(pid, &st, 0);
			if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
				rc = 1;
			unlink(path.c_str());
		}
	}
	return rc;
}
