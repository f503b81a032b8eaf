// A deterministic MPI training program over the C++ SDK, for
// tests/ckpt/ranks_mpi.sh: every rank holds state of its own (a vector
// updated from the rank, the step and an MPI_Allreduce of all ranks' sums,
// so the ranks move in lock-step and depend on each other), agrees through
// the SDK's all-reduce hooks (MPI_Allreduce) on when to checkpoint and on
// the step to restore, saves its own state, and prints
//   rank R final step=N sha256=<hex of the state> resumed_from=S
// Environment: TRAIN_STEPS (400), TRAIN_EVERY (rank 0 wishes a checkpoint
// every this many steps), TRAIN_CRASH_AT (every rank exits abruptly, code 3,
// at this step of a first attempt: LOOM_RESTART_COUNT unset or 0).
// Built by the test with mpicxx against the build tree's libloom_ckpt.
#include "sdk/cpp/loom/ckpt.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

int64_t env_int(const char *name, int64_t def)
{
	const char *v = std::getenv(name);
	return v && *v ? std::strtoll(v, nullptr, 10) : def;
}

int64_t allreduce(int64_t v, MPI_Op op)
{
	int64_t out = 0;
	MPI_Allreduce(&v, &out, 1, MPI_INT64_T, op, MPI_COMM_WORLD);
	return out;
}

// FNV-1a of the state, printed as the run's result (the bytes, not their meaning).
std::string digest(const std::vector<double> &w)
{
	uint64_t h = 1469598103934665603ull;
	const auto *p = reinterpret_cast<const unsigned char *>(w.data());
	for (size_t i = 0; i < w.size() * sizeof(double); i++)
		h = (h ^ p[i]) * 1099511628211ull;
	char buf[32];
	std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
	return buf;
}

void step_once(std::vector<double> &w, int rank, int64_t step)
{
	double local = 0;
	for (double x : w)
		local += x;
	double total = 0;
	MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	double k = static_cast<double>((rank * 1009 + step * 7919) % 997) / 997.0;
	for (size_t i = 0; i < w.size(); i++)
		w[i] = w[i] * 0.999 + k * 1e-3 + total * 1e-9;
}

} // namespace

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	const int64_t steps = env_int("TRAIN_STEPS", 400), every = env_int("TRAIN_EVERY", 50);
	const int64_t crash = env_int("LOOM_RESTART_COUNT", 0) == 0 ? env_int("TRAIN_CRASH_AT", 0) : 0;
	auto cfg = loom::sdk::Config::from_env();
	cfg.allreduce_max = [](int64_t v) { return allreduce(v, MPI_MAX); };
	cfg.allreduce_min = [](int64_t v) { return allreduce(v, MPI_MIN); };
	loom::sdk::Checkpointer ck(cfg, false);
	if (!cfg.error.empty() || ck.config().world_size != 4)
		std::fprintf(stderr, "rank %d: launcher: %s, world %lld\n", rank, cfg.error.c_str(),
			     static_cast<long long>(ck.config().world_size));
	std::vector<double> w(1 << 14);
	for (size_t i = 0; i < w.size(); i++)
		w[i] = static_cast<double>((rank * 17 + i) % 1000) / 1000.0;
	int64_t start = 0;
	if (auto r = ck.restore(); r.found) {
		std::vector<char> bytes;
		std::string err;
		if (!r.read("w.bin", &bytes, &err) || bytes.size() != w.size() * sizeof(double)) {
			std::fprintf(stderr, "rank %d: restore of step %lld: %s\n", rank,
				     static_cast<long long>(r.step), err.c_str());
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		std::memcpy(w.data(), bytes.data(), bytes.size());
		start = r.step;
	}
	for (int64_t step = start; step < steps; step++) {
		if (crash && step == crash)
			_exit(3);
		step_once(w, rank, step);
		usleep(2000);
		if (rank == 0 && every > 0 && (step + 1) % every == 0)
			ck.request();
		if (ck.should_checkpoint(step + 1)) {
			std::string err;
			if (!ck.save_async(step + 1, {{"w.bin", w.data(), w.size() * sizeof(double)}}, &err))
				std::fprintf(stderr, "rank %d: save of step %lld: %s\n", rank,
					     static_cast<long long>(step + 1), err.c_str());
		}
	}
	std::string err;
	if (!ck.wait(&err))
		std::fprintf(stderr, "rank %d: last save: %s\n", rank, err.c_str());
	std::printf("rank %d final step=%lld sha256=%s resumed_from=%lld\n", rank, static_cast<long long>(steps),
		    digest(w).c_str(), static_cast<long long>(start));
	MPI_Finalize();
	return 0;
}
