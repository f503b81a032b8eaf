#include "lib/health/gpu_probe.hpp"

#include "lib/util/log.hpp"

#include <dlfcn.h>

namespace loom::health {
namespace {

using cudaError_t = int;
using cudaEvent_t = struct CUevent_st *;
constexpr int cudaMemcpyDeviceToDevice = 3;

struct Cuda {
	void *lib = nullptr;
	cudaError_t (*get_count)(int *) = nullptr;
	cudaError_t (*set_device)(int) = nullptr;
	cudaError_t (*malloc_)(void **, size_t) = nullptr;
	cudaError_t (*free_)(void *) = nullptr;
	cudaError_t (*memcpy_)(void *, const void *, size_t, int) = nullptr;
	cudaError_t (*memset_)(void *, int, size_t) = nullptr;
	cudaError_t (*event_create)(cudaEvent_t *) = nullptr;
	cudaError_t (*event_destroy)(cudaEvent_t) = nullptr;
	cudaError_t (*event_record)(cudaEvent_t, void *) = nullptr;
	cudaError_t (*event_sync)(cudaEvent_t) = nullptr;
	cudaError_t (*elapsed)(float *, cudaEvent_t, cudaEvent_t) = nullptr;
	const char *(*error_string)(cudaError_t) = nullptr;
	~Cuda()
	{
		if (lib)
			::dlclose(lib);
	}
};

template <typename F>
bool bind(void *lib, const char *name, F &out)
{
	out = reinterpret_cast<F>(::dlsym(lib, name));
	return out != nullptr;
}

std::string load(Cuda &c, const std::string &library)
{
	std::vector<std::string> names = library.empty()
		? std::vector<std::string>{"libcudart.so", "libcudart.so.13", "libcudart.so.12"}
		: std::vector<std::string>{library};
	std::string err;
	for (const auto &n : names) {
		c.lib = ::dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
		if (c.lib)
			break;
		const char *e = ::dlerror();
		err = e ? e : n;
	}
	if (!c.lib)
		return "no CUDA runtime: " + err;
	bool ok = bind(c.lib, "cudaGetDeviceCount", c.get_count) && bind(c.lib, "cudaSetDevice", c.set_device) &&
		  bind(c.lib, "cudaMalloc", c.malloc_) && bind(c.lib, "cudaFree", c.free_) &&
		  bind(c.lib, "cudaMemcpy", c.memcpy_) && bind(c.lib, "cudaMemset", c.memset_) &&
		  bind(c.lib, "cudaEventCreate", c.event_create) && bind(c.lib, "cudaEventDestroy", c.event_destroy) &&
		  bind(c.lib, "cudaEventRecord", c.event_record) && bind(c.lib, "cudaEventSynchronize", c.event_sync) &&
		  bind(c.lib, "cudaEventElapsedTime", c.elapsed) && bind(c.lib, "cudaGetErrorString", c.error_string);
	return ok ? std::string() : "the CUDA runtime lacks a needed symbol";
}

} // namespace

ProbeResult probe_memory_bandwidth(double min_gb_per_s, size_t bytes, int iterations, const std::string &library)
{
	ProbeResult r;
	Cuda c;
	if (std::string why = load(c, library); !why.empty()) {
		r.why = "no GPU: " + why;
		return r;
	}
	int n = 0;
	if (cudaError_t e = c.get_count(&n); e != 0 || n == 0) {
		r.why = std::string("no GPU: ") + (e ? c.error_string(e) : "cudaGetDeviceCount found none");
		return r;
	}
	r.ran = true;
	for (int d = 0; d < n; d++) {
		MemBandwidth m;
		m.gpu = d;
		void *a = nullptr, *b = nullptr;
		cudaEvent_t start = nullptr, stop = nullptr;
		float ms = 0;
		bool ok = c.set_device(d) == 0 && c.malloc_(&a, bytes) == 0 && c.malloc_(&b, bytes) == 0 &&
			  c.memset_(a, 1, bytes) == 0 && c.event_create(&start) == 0 && c.event_create(&stop) == 0 &&
			  c.memcpy_(b, a, bytes, cudaMemcpyDeviceToDevice) == 0; // warm-up
		if (ok) {
			ok = c.event_record(start, nullptr) == 0;
			for (int i = 0; ok && i < iterations; i++)
				ok = c.memcpy_(i % 2 ? a : b, i % 2 ? b : a, bytes, cudaMemcpyDeviceToDevice) == 0;
			ok = ok && c.event_record(stop, nullptr) == 0 && c.event_sync(stop) == 0 && c.elapsed(&ms, start, stop) == 0;
		}
		if (ok && ms > 0)
			m.gb_per_s = 2.0 * static_cast<double>(bytes) * iterations / (ms / 1000.0) / 1e9;
		m.passed = ok && m.gb_per_s >= min_gb_per_s;
		if (!ok)
			log_error("GPU %d: memory bandwidth probe failed", d);
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
