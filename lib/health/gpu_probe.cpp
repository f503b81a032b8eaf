// Device memory bandwidth per GPU (the all-reduce probe is in
// gpu_probe_allreduce.cpp; both load the CUDA runtime through gpu_runtime).
#include "lib/health/gpu_probe.hpp"

#include "lib/health/gpu_runtime.hpp"

namespace loom::health {

using namespace gpu;

ProbeResult probe_memory_bandwidth(double min_gb_per_s, size_t bytes, int iterations, const std::string &library)
{
	ProbeResult r;
	Cuda c;
	if (std::string why = load_cuda(c, library); !why.empty()) {
		r.why = "no GPU: " + why;
		return r;
	}
	int n = 0;
	Calls count(c);
	if (!count.cuda("cudaGetDeviceCount", c.get_count(&n)) || n == 0) {
		r.why = "no GPU: " + (count.ok() ? std::string("cudaGetDeviceCount found none") : count.error());
		return r;
	}
	r.ran = true;
	for (int d = 0; d < n; d++) {
		MemBandwidth m;
		m.gpu = d;
		void *a = nullptr, *b = nullptr;
		cudaEvent_t start = nullptr, stop = nullptr;
		float ms = 0;
		Calls k(c);
		bool ok = k.cuda("cudaSetDevice", c.set_device(d)) && k.cuda("cudaMalloc", c.malloc_(&a, bytes)) &&
			  k.cuda("cudaMalloc", c.malloc_(&b, bytes)) && k.cuda("cudaMemset", c.memset_(a, 1, bytes)) &&
			  k.cuda("cudaEventCreate", c.event_create(&start)) &&
			  k.cuda("cudaEventCreate", c.event_create(&stop)) &&
			  k.cuda("cudaMemcpy", c.memcpy_(b, a, bytes, cudaMemcpyDeviceToDevice)); // warm-up
		if (ok) {
			ok = k.cuda("cudaEventRecord", c.event_record(start, nullptr));
			for (int i = 0; ok && i < iterations; i++)
				ok = k.cuda("cudaMemcpy",
					    c.memcpy_(i % 2 ? a : b, i % 2 ? b : a, bytes, cudaMemcpyDeviceToDevice));
			ok = ok && k.cuda("cudaEventRecord", c.event_record(stop, nullptr)) &&
			     k.cuda("cudaEventSynchronize", c.event_sync(stop)) &&
			     k.cuda("cudaEventElapsedTime", c.elapsed(&ms, start, stop));
		}
		if (ok && ms > 0)
			m.gb_per_s = 2.0 * static_cast<double>(bytes) * iterations / (ms / 1000.0) / 1e9;
		m.passed = ok && m.gb_per_s >= min_gb_per_s;
		m.error = k.error();
		if (start)
			c.event_destroy(start);
		if (stop)
			c.event_destroy(stop);
		if (a)
			c.free_(a);
		if (b)
			c.free_(b);
		r.gpus.push_back(m);
	}
	return r;
}

} // namespace loom::health
