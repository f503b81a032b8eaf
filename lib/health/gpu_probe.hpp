// loom health: active GPU probes (DCGM level 1 in spirit: seconds, not minutes).
//
// Device memory bandwidth per GPU, measured with device-to-device copies, and
// an NCCL all-reduce across all of the node's GPUs, through the CUDA runtime
// and NCCL loaded with dlopen at run time like NVML: loom never links CUDA or
// NCCL, and a machine without a GPU gets an honest "no GPU" result (ran =
// false, with the reason), never a pass.
#pragma once

#include "lib/util/expected.hpp"

#include <string>
#include <vector>

namespace loom::health {

struct MemBandwidth {
	int gpu = -1;
	double gb_per_s = 0; // read+write bytes per second / 1e9
	bool passed = false;
	std::string error; // the CUDA call that failed ("cudaMalloc: out of memory (2)")
};

struct ProbeResult {
	bool ran = false; // false: no CUDA runtime or no GPU (see why)
	std::string why;  // "no GPU: ..." when it did not run
	std::vector<MemBandwidth> gpus;
	bool passed() const
	{
		if (!ran || gpus.empty())
			return false;
		for (const auto &g : gpus)
			if (!g.passed)
				return false;
		return true;
	}
	// "pass", "fail" or "not run".
	const char *result() const { return !ran ? "not run" : passed() ? "pass" : "fail"; }
};

// Copy 'bytes' (default 1 GiB) device to device 'iterations' times per GPU;
// pass when at least min_gb_per_s. library: libcudart to dlopen (default:
// libcudart.so, then .so.13/.so.12).
ProbeResult probe_memory_bandwidth(double min_gb_per_s, size_t bytes = size_t(1) << 30, int iterations = 10,
				   const std::string &library = {});

// NCCL all-reduce (float, sum, out of place) across every GPU of the node,
// driven by one process: ncclCommInitAll, one stream per GPU, each
// all-reduce one ncclGroupStart/ncclAllReduce.../ncclGroupEnd; warm-up
// iterations, then timed ones, waited for on every stream with a time limit
// (a hung NVLink must not hang the health check). Every GPU's send buffer
// holds rank+1, so every element of every result must be n(n+1)/2: anything
// else is silent data corruption and fails the probe.
struct AllReduceOptions {
	double min_busbw_gb_per_s = 0;    // pass at or above this bus bandwidth
	size_t bytes = size_t(256) << 20; // per GPU (a multiple of 4: floats)
	int warmup = 5;
	int iterations = 20;
	double time_limit_s = 120; // for each wait on the streams
	std::string nccl_library;  // default libnccl.so.2, then libnccl.so
	std::string cuda_library;  // default as probe_memory_bandwidth
};

struct AllReduceResult {
	bool ran = false;     // false: no NCCL, no CUDA runtime or no GPU (see why)
	bool skipped = false; // ran on one GPU: a bus bandwidth means nothing there (see why)
	std::string why;      // "no GPU: ..." when it did not run; why it was skipped
	std::string error;    // the call that failed, with NCCL's or CUDA's words, or the data check
	int gpus = 0;
	int nccl_version = 0; // e.g. 22805 for 2.28.5
	size_t bytes = 0;     // per GPU
	int iterations = 0;
	double seconds = 0;        // per all-reduce, mean of the timed iterations
	double algbw_gb_per_s = 0; // bytes / seconds / 1e9
	double busbw_gb_per_s = 0; // algbw * 2(n-1)/n, as nccl-tests defines it
	double min_busbw_gb_per_s = 0;
	bool data_ok = false; // every element of every GPU's result was n(n+1)/2
	// A pass needs a run on two or more GPUs, no failed call, correct data
	// and the bus bandwidth. Skipped is neither a pass nor a failure.
	bool failed() const
	{
		return ran && (!error.empty() || !data_ok || (!skipped && busbw_gb_per_s < min_busbw_gb_per_s));
	}
	bool passed() const { return ran && !skipped && !failed(); }
	// "pass", "fail", "skipped" or "not run".
	const char *result() const { return !ran ? "not run" : passed() ? "pass" : failed() ? "fail" : "skipped"; }
};

AllReduceResult probe_allreduce(const AllReduceOptions &o = {});

// nccl-tests' bus bandwidth of an all-reduce among n ranks: algbw * 2(n-1)/n
// (0 for fewer than two ranks).
double allreduce_bus_bandwidth(double algbw, int n);

// Index of the first of count floats that is not 'want' (count when all are).
size_t first_mismatch(const float *data, size_t count, float want);

} // namespace loom::health
