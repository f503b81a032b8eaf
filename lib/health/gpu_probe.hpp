// loom health: active GPU probes (DCGM level 1 in spirit: seconds, not minutes).
//
// Device memory bandwidth per GPU, measured with device-to-device copies
// through the CUDA runtime, loaded with dlopen at run time like NVML: loom
// never links CUDA, and a machine without a GPU gets an honest "no GPU"
// result (passed = false, with the reason), never a pass.
#pragma once

#include "lib/util/expected.hpp"

#include <string>
#include <vector>

namespace loom::health {

struct MemBandwidth {
	int gpu = -1;
	double gb_per_s = 0; // read+write bytes per second / 1e9
	bool passed = false;
};

struct ProbeResult {
	bool ran = false;    // false: no CUDA runtime or no GPU (see why)
	std::string why;     // "no GPU: ..." when it did not run
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
};

// Copy 'bytes' (default 1 GiB) device to device 'iterations' times per GPU;
// pass when at least min_gb_per_s. library: libcudart to dlopen (default:
// libcudart.so, then .so.13/.so.12).
ProbeResult probe_memory_bandwidth(double min_gb_per_s, size_t bytes = size_t(1) << 30, int iterations = 10,
				   const std::string &library = {});

} // namespace loom::health
