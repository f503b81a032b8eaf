// bench_ckpt: the cost of checkpointing to the training loop, and the
// background writer's speed, on this machine's disk.
//
//   bench_ckpt [--size 1G] [--dir /var/tmp] [--reps 2]
//
// Measures, on the same bytes and the same disk in one run:
//   sync     save(): write + SHA-256 + fsync + commit on the caller's thread
//   stall    save_async(): how long the caller is held (the snapshot copy),
//            first save (fresh snapshot memory) and steady state (reused)
//   writer   the background writer's time for the same checkpoint
//   plain    write() of the same bytes to one file + fsync, nothing else
// Floors (issue 5): stall < 10% of sync; writer >= 80% of plain throughput.
#include "lib/ckpt/async_writer.hpp"
#include "lib/ckpt/commit.hpp"
#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace loom;
using clk = std::chrono::steady_clock;

namespace {

double since(clk::time_point t) { return std::chrono::duration<double>(clk::now() - t).count(); }

double plain_write(const std::string &dir, const char *p, size_t n)
{
	std::string path = dir + "/plain.bin";
	auto t0 = clk::now();
	int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		std::perror(path.c_str());
		std::exit(1);
	}
	for (size_t off = 0; off < n;) {
		ssize_t w = ::write(fd, p + off, std::min<size_t>(n - off, 8u << 20));
		if (w <= 0) {
			std::perror("write");
			std::exit(1);
		}
		off += static_cast<size_t>(w);
	}
	::fsync(fd);
	::close(fd);
	double s = since(t0);
	::unlink(path.c_str());
	return s;
}

} // namespace

int main(int argc, char **argv)
{
	uint64_t size = 1ull << 30;
	std::string base = "/var/tmp";
	int reps = 2;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		std::string v = i + 1 < argc ? argv[i + 1] : "";
		if (a == "--size") {
			auto s = parse_size(v);
			if (!s || *s == 0) {
				std::fprintf(stderr, "bench_ckpt: --size: '%s': expected a size such as 256M or 4G\n", v.c_str());
				return 2;
			}
			size = *s;
			i++;
		} else if (a == "--dir") {
			base = v;
			i++;
		} else if (a == "--reps") {
			auto r = parse_int(v, 1, 100);
			if (!r) {
				std::fprintf(stderr, "bench_ckpt: --reps: '%s': %s\n", v.c_str(), r.error().message.c_str());
				return 2;
			}
			reps = static_cast<int>(*r);
			i++;
		} else {
			std::fprintf(stderr, "usage: bench_ckpt [--size 1G] [--dir /var/tmp] [--reps 2]\n");
			return 2;
		}
	}
	std::string dir = base + "/loom-bench-ckpt." + std::to_string(::getpid());
	if (::mkdir(dir.c_str(), 0700) != 0) {
		std::perror(dir.c_str());
		return 1;
	}
	// Model state: four shards, non-trivial bytes.
	std::vector<char> state(size);
	uint64_t x = 88172645463325252ull;
	for (size_t i = 0; i < size; i += 8) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		std::memcpy(&state[i], &x, std::min<size_t>(8, size - i));
	}
	std::vector<ckpt::BufferView> views;
	size_t shard = (size + 3) / 4;
	for (size_t off = 0, k = 0; off < size; off += shard, k++)
		views.push_back({"shard" + std::to_string(k) + ".bin", state.data() + off, std::min(shard, size - off)});

	ckpt::WriterSettings ws;
	ws.dir = dir;
	ws.keep = 1;
	ckpt::AsyncWriter w(ws);
	// Disks shared with other work vary from second to second: each writer
	// run is paired with a plain write just before it, and the ratio of each
	// pair is reported (median of the pairs).
	double plain = 1e18, sync = 1e18, stall_cold = 0, stall_warm = 1e18, writer = 1e18;
	std::vector<double> pair_ratio;
	int64_t step = 1;
	for (int r = 0; r < reps; r++) {
		auto s = w.save(step++, views);
		if (!s) {
			std::fprintf(stderr, "bench_ckpt: %s\n", s.error().str().c_str());
			return 1;
		}
		sync = std::min(sync, s->write_s);
		for (int k = 0; k < 2; k++) {
			double p = plain_write(dir, state.data(), size);
			plain = std::min(plain, p);
			auto t0 = clk::now();
			if (auto st = w.save_async(step++, views); !st) {
				std::fprintf(stderr, "bench_ckpt: %s\n", st.error().str().c_str());
				return 1;
			}
			double stall = since(t0);
			if (r == 0 && k == 0)
				stall_cold = stall;
			else
				stall_warm = std::min(stall_warm, stall);
			auto a = w.wait();
			if (!a) {
				std::fprintf(stderr, "bench_ckpt: %s\n", a.error().str().c_str());
				return 1;
			}
			writer = std::min(writer, a->write_s);
			pair_ratio.push_back(p / a->write_s);
		}
	}
	(void)ckpt::remove_tree(dir);
	double mib = static_cast<double>(size) / (1 << 20);
	std::printf("bench_ckpt: %.0f MiB in %s, best of %d\n", mib, base.c_str(), reps);
	std::printf("  plain write+fsync   %7.2f s  %8.1f MiB/s\n", plain, mib / plain);
	std::printf("  sync save           %7.2f s  %8.1f MiB/s\n", sync, mib / sync);
	std::printf("  async stall (first) %7.3f s  %5.1f%% of sync\n", stall_cold, 100 * stall_cold / sync);
	std::printf("  async stall (steady)%7.3f s  %5.1f%% of sync   (floor: < 10%%)\n", stall_warm,
		    100 * stall_warm / sync);
	std::sort(pair_ratio.begin(), pair_ratio.end());
	double ratio = pair_ratio[pair_ratio.size() / 2];
	std::printf("  background writer   %7.2f s  %8.1f MiB/s  %5.1f%% of the plain write beside it (median of %zu;"
		    " floor: >= 80%%)\n",
		    writer, mib / writer, 100 * ratio, pair_ratio.size());
	bool pass = stall_warm < 0.10 * sync && ratio >= 0.80;
	std::printf("  %s\n", pass ? "floors met" : "FLOORS NOT MET");
	return pass ? 0 : 1;
}
