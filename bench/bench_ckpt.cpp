// bench_ckpt: the cost of checkpointing to the training loop, and the
// background writer's speed, on this machine's disk.
//
//   bench_ckpt [--size 1G] [--dir /var/tmp] [--reps 2] [--copy-threads N] [--huge-pages] [--settle S]
//
// Measures, on the same bytes and the same disk in one run:
//   sync     save(): write + SHA-256 + fsync + commit on the caller's thread
//   stall    save_async(): how long the caller is held (the snapshot copy):
//            first save of a new writer (fresh snapshot memory), first save
//            after reserve() has finished, first save right after reserve()
//            (while it still runs), and steady state (memory reused)
//   writer   the background writer's time for the same checkpoint
//   plain    write() of the same bytes to one file + fsync, nothing else
// Floors (issue 5): steady stall < 10% of sync; writer >= 80% of plain throughput.
// --copy-threads N: threads for the snapshot copy (default: the writer's own
// choice, min(4, hardware threads) from 64 MiB on; 1: no parallel copy).
// --huge-pages: snapshot memory on transparent huge pages (WriterSettings).
// --settle S: seconds to pause before each first save (default 3). A real
// first checkpoint comes minutes after start; memory freed just before (by
// the previous measurement) is still backed by the host of a VM that takes
// free memory back (virtio-balloon free page reporting, 2 s delay) and
// faults in much faster than it would then.
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

// The command line.
struct Args {
	uint64_t size = 1ull << 30;
	std::string base = "/var/tmp";
	int reps = 2;
	int copy_threads = 0;
	bool huge_pages = false;
	int settle_s = 3;
};

// -1: go on; otherwise the exit code, after saying why on stderr.
int parse_args(int argc, char **argv, Args &a)
{
	for (int i = 1; i < argc; i++) {
		std::string arg = argv[i];
		std::string v = i + 1 < argc ? argv[i + 1] : "";
		if (arg == "--size") {
			auto s = parse_size(v);
			if (!s || *s == 0) {
				std::fprintf(stderr, "bench_ckpt: --size: '%s': expected a size such as 256M or 4G\n",
					     v.c_str());
				return 2;
			}
			a.size = *s;
			i++;
		} else if (arg == "--dir") {
			a.base = v;
			i++;
		} else if (arg == "--reps") {
			auto r = parse_int(v, 1, 100);
			if (!r) {
				std::fprintf(stderr, "bench_ckpt: --reps: '%s': %s\n", v.c_str(),
					     r.error().message.c_str());
				return 2;
			}
			a.reps = static_cast<int>(*r);
			i++;
		} else if (arg == "--copy-threads") {
			auto t = parse_int(v, 1, 64);
			if (!t) {
				std::fprintf(stderr, "bench_ckpt: --copy-threads: '%s': %s\n", v.c_str(),
					     t.error().message.c_str());
				return 2;
			}
			a.copy_threads = static_cast<int>(*t);
			i++;
		} else if (arg == "--huge-pages") {
			a.huge_pages = true;
		} else if (arg == "--settle") {
			auto t = parse_int(v, 0, 600);
			if (!t) {
				std::fprintf(stderr, "bench_ckpt: --settle: '%s': %s\n", v.c_str(),
					     t.error().message.c_str());
				return 2;
			}
			a.settle_s = static_cast<int>(*t);
			i++;
		} else {
			std::fprintf(stderr,
				     "usage: bench_ckpt [--size 1G] [--dir /var/tmp] [--reps 2] [--copy-threads N]"
				     " [--huge-pages] [--settle S]\n");
			return 2;
		}
	}
	return -1;
}

void fail(const Error &e)
{
	std::fprintf(stderr, "bench_ckpt: %s\n", e.str().c_str());
	std::exit(1);
}

// Model state: four shards, non-trivial bytes.
std::vector<char> model_state(uint64_t size)
{
	std::vector<char> state(size);
	uint64_t x = 88172645463325252ull;
	for (size_t i = 0; i < size; i += 8) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		std::memcpy(&state[i], &x, std::min<size_t>(8, size - i));
	}
	return state;
}

std::vector<ckpt::BufferView> shards(std::vector<char> &state)
{
	size_t size = state.size();
	std::vector<ckpt::BufferView> views;
	size_t shard = (size + 3) / 4;
	for (size_t off = 0, k = 0; off < size; off += shard, k++)
		views.push_back(
			{"shard" + std::to_string(k) + ".bin", state.data() + off, std::min(shard, size - off)});
	return views;
}

// One run: the bytes, the writer's settings, the next step to save.
struct Bench {
	const Args &args;
	std::string dir;
	std::vector<char> state;
	std::vector<ckpt::BufferView> views;
	ckpt::WriterSettings ws;
	int64_t step = 1;

	Bench(const Args &a, std::string d) : args(a), dir(std::move(d)) {}

	// The first save_async() of a new writer; mode 0: nothing before it, 1:
	// reserve() finished long before (*reserve_s: how long it took), 2:
	// reserve() called just before. The writer is gone afterwards, and its
	// snapshot memory with it.
	double first_stall(int mode, double *reserve_s)
	{
		::sleep(static_cast<unsigned>(args.settle_s));
		ckpt::AsyncWriter fresh(ws);
		if (mode > 0) {
			auto t0 = clk::now();
			if (auto st = fresh.reserve(views); !st)
				fail(st.error());
			if (mode == 1) { // reserved at start-up, long before the first save
				if (auto a = fresh.wait(); !a)
					fail(a.error());
				*reserve_s = since(t0);
			}
		}
		auto t0 = clk::now();
		if (auto st = fresh.save_async(step++, views); !st)
			fail(st.error());
		double stall = since(t0);
		if (auto a = fresh.wait(); !a)
			fail(a.error());
		return stall;
	}
};

// Best times (seconds) and the samples reported as best and median.
struct Results {
	double plain = 1e18, sync = 1e18, stall_warm = 1e18, writer = 1e18, reserve_s = 1e18;
	std::vector<double> cold, reserved, racing, pair_ratio;
};

// Disks shared with other work vary from second to second: each writer
// run is paired with a plain write just before it, and the ratio of each
// pair is reported (median of the pairs). The memory of a VM varies as
// much: the first stalls are reported as best and median of the reps.
Results measure(Bench &b, ckpt::AsyncWriter &w)
{
	Results m;
	for (int r = 0; r < b.args.reps; r++) {
		auto s = w.save(b.step++, b.views);
		if (!s)
			fail(s.error());
		m.sync = std::min(m.sync, s->write_s);
		double rs = 0;
		m.cold.push_back(b.first_stall(0, &rs));
		m.reserved.push_back(b.first_stall(1, &rs));
		m.reserve_s = std::min(m.reserve_s, rs);
		m.racing.push_back(b.first_stall(2, &rs));
		if (r == 0) { // w's own first save: its snapshot memory is faulted in from here on
			if (auto st = w.save_async(b.step++, b.views); !st)
				fail(st.error());
			if (auto a = w.wait(); !a)
				fail(a.error());
		}
		for (int k = 0; k < 2; k++) {
			double p = plain_write(b.dir, b.state.data(), b.args.size);
			m.plain = std::min(m.plain, p);
			auto t0 = clk::now();
			if (auto st = w.save_async(b.step++, b.views); !st)
				fail(st.error());
			m.stall_warm = std::min(m.stall_warm, since(t0));
			auto a = w.wait();
			if (!a)
				fail(a.error());
			m.writer = std::min(m.writer, a->write_s);
			m.pair_ratio.push_back(p / a->write_s);
		}
	}
	return m;
}

// The table, against the floors; the exit code (0: floors met).
int report(const Bench &b, Results &m)
{
	const Args &a = b.args;
	double mib = static_cast<double>(a.size) / (1 << 20);
	std::printf("bench_ckpt: %.0f MiB in %s, best of %d, snapshot copied by %d thread(s)%s, %d s settle\n", mib,
		    a.base.c_str(), a.reps, ckpt::copy_threads_for(b.ws, a.size),
		    a.huge_pages ? " into huge pages" : "", a.settle_s);
	std::printf("  %-38s %7.2f s  %8.1f MiB/s\n", "plain write+fsync", m.plain, mib / m.plain);
	std::printf("  %-38s %7.2f s  %8.1f MiB/s\n", "sync save", m.sync, mib / m.sync);
	auto first = [&](const char *what, std::vector<double> v) {
		std::sort(v.begin(), v.end());
		std::printf("  %-38s %7.3f s  %5.1f%% of sync   (median %.3f s)\n", what, v[0], 100 * v[0] / m.sync,
			    v[v.size() / 2]);
	};
	first("async stall (first, no reserve)", m.cold);
	first("async stall (first, after reserve)", m.reserved);
	first("async stall (first, reserve in flight)", m.racing);
	std::printf("  %-38s %7.3f s  in the background\n", "reserve (map + fault in)", m.reserve_s);
	std::printf("  %-38s %7.3f s  %5.1f%% of sync   (floor: < 10%%)\n", "async stall (steady)", m.stall_warm,
		    100 * m.stall_warm / m.sync);
	std::sort(m.pair_ratio.begin(), m.pair_ratio.end());
	double ratio = m.pair_ratio[m.pair_ratio.size() / 2];
	std::printf("  %-38s %7.2f s  %8.1f MiB/s  %5.1f%% of the plain write beside it (median of %zu;"
		    " floor: >= 80%%)\n",
		    "background writer", m.writer, mib / m.writer, 100 * ratio, m.pair_ratio.size());
	bool pass = m.stall_warm < 0.10 * m.sync && ratio >= 0.80;
	std::printf("  %s\n", pass ? "floors met" : "FLOORS NOT MET");
	return pass ? 0 : 1;
}

} // namespace

int main(int argc, char **argv)
{
	Args a;
	if (int rc = parse_args(argc, argv, a); rc >= 0)
		return rc;
	Bench b(a, a.base + "/loom-bench-ckpt." + std::to_string(::getpid()));
	if (::mkdir(b.dir.c_str(), 0700) != 0) {
		std::perror(b.dir.c_str());
		return 1;
	}
	b.state = model_state(a.size);
	b.views = shards(b.state);
	b.ws.dir = b.dir;
	b.ws.keep = 1;
	b.ws.copy_threads = a.copy_threads;
	b.ws.huge_pages = a.huge_pages;
	ckpt::AsyncWriter w(b.ws);
	Results m = measure(b, w);
	(void)ckpt::remove_tree(b.dir);
	return report(b, m);
}
