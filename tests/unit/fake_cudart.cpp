// A stand-in for the CUDA runtime, for the GPU probe tests (test_health_gpu_probe):
// loaded with dlopen by path like the real one, its "GPUs" are host memory.
//   LOOM_FAKE_GPUS=N        devices (default 0: cudaGetDeviceCount says no device)
//   LOOM_FAKE_FAIL=NAME     the entry point NAME fails (cudaErrorMemoryAllocation)
//   LOOM_FAKE_HANG=1        streams never finish (cudaStreamQuery: not ready)
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace {

int env_int(const char *name)
{
	const char *e = std::getenv(name);
	return e ? std::atoi(e) : 0;
}

bool fails(const char *name)
{
	const char *e = std::getenv("LOOM_FAKE_FAIL");
	return e && std::strcmp(e, name) == 0;
}

} // namespace

struct FakeEvent {
	std::chrono::steady_clock::time_point t;
};

extern "C" {

int cudaGetDeviceCount(int *n)
{
	*n = env_int("LOOM_FAKE_GPUS");
	return *n > 0 ? 0 : 100; // cudaErrorNoDevice
}

int cudaSetDevice(int d)
{
	return fails("cudaSetDevice") || d < 0 || d >= env_int("LOOM_FAKE_GPUS") ? 101 : 0; // cudaErrorInvalidDevice
}

int cudaMalloc(void **p, size_t bytes)
{
	if (fails("cudaMalloc"))
		return 2;
	*p = std::malloc(bytes);
	return *p ? 0 : 2;
}

int cudaFree(void *p)
{
	std::free(p);
	return 0;
}

int cudaMemcpy(void *dst, const void *src, size_t bytes, int)
{
	if (fails("cudaMemcpy"))
		return 2;
	std::memcpy(dst, src, bytes);
	return 0;
}

int cudaMemset(void *p, int v, size_t bytes)
{
	std::memset(p, v, bytes);
	return 0;
}

int cudaEventCreate(FakeEvent **e)
{
	*e = new FakeEvent;
	return 0;
}

int cudaEventDestroy(FakeEvent *e)
{
	delete e;
	return 0;
}

int cudaEventRecord(FakeEvent *e, void *)
{
	e->t = std::chrono::steady_clock::now();
	return 0;
}

int cudaEventSynchronize(FakeEvent *) { return 0; }

int cudaEventElapsedTime(float *ms, FakeEvent *a, FakeEvent *b)
{
	*ms = std::chrono::duration<float, std::milli>(b->t - a->t).count();
	return 0;
}

int cudaStreamCreate(int **s)
{
	if (fails("cudaStreamCreate"))
		return 2;
	*s = new int(0);
	return 0;
}

int cudaStreamDestroy(int *s)
{
	delete s;
	return 0;
}

int cudaStreamQuery(int *)
{
	return env_int("LOOM_FAKE_HANG") ? 600 : 0; // cudaErrorNotReady
}

const char *cudaGetErrorString(int e)
{
	switch (e) {
	case 2:
		return "out of memory";
	case 100:
		return "no CUDA-capable device is detected";
	case 101:
		return "invalid device ordinal";
	}
	return "unknown error";
}

} // extern "C"
