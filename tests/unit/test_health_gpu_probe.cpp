// Unit tests for the GPU probes (lib/health/gpu_probe*). Without a GPU: the
// real CUDA runtime and NCCL where installed must report "no GPU" and never
// pass; stand-ins for both (tests/unit/fake_cudart.cpp, fake_nccl.cpp, whose
// "GPUs" are host memory) drive the whole all-reduce: bandwidth arithmetic,
// one GPU, a failing call named, corrupted data, a hung collective.
#include "lib/health/gpu_probe.hpp"

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "tests/unit/check_main.hpp"

using namespace loom;
using namespace loom::health;

namespace {

std::string fake_lib(const char *name)
{
	const char *b = std::getenv("LOOM_BUILDDIR");
	return std::string(b && *b ? b : ".") + "/tests/unit/.libs/" + name;
}

// The stand-ins read these at each call; each test sets its own.
void fake_env(const std::vector<std::pair<const char *, const char *>> &set)
{
	for (const char *k :
	     {"LOOM_FAKE_GPUS", "LOOM_FAKE_FAIL", "LOOM_FAKE_HANG", "LOOM_FAKE_CORRUPT", "LOOM_FAKE_ASYNC"})
		::unsetenv(k);
	for (const auto &[k, v] : set)
		::setenv(k, v, 1);
}

AllReduceOptions fake_options(double min_busbw = 0)
{
	AllReduceOptions o;
	o.min_busbw_gb_per_s = min_busbw;
	o.bytes = size_t(1) << 20;
	o.warmup = 1;
	o.iterations = 3;
	o.time_limit_s = 10;
	o.cuda_library = fake_lib("fake_cudart.so");
	o.nccl_library = fake_lib("fake_nccl.so");
	return o;
}

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

} // namespace

START_TEST(allreduce_without_gpu_never_passes)
{
	// The CUDA runtime and NCCL of this machine, if any, with no GPU visible
	// (CUDA_VISIBLE_DEVICES empty hides a GPU where there is one): not run,
	// not passed, not failed either, and it says why.
	::setenv("CUDA_VISIBLE_DEVICES", "", 1);
	AllReduceResult r = probe_allreduce();
	ck_assert(!r.ran);
	ck_assert(!r.passed());
	ck_assert(!r.failed());
	ck_assert_str_eq(r.result(), "not run");
	ck_assert_msg(r.why.rfind("no GPU: ", 0) == 0, "%s", r.why.c_str());
	// A library that is not there is named in the reason, whichever it is.
	AllReduceOptions o;
	o.nccl_library = "/nonexistent/libnccl-loom-test.so.2";
	r = probe_allreduce(o);
	ck_assert(!r.ran && !r.passed());
	ck_assert_msg(r.why.rfind("no GPU: no NCCL", 0) == 0, "%s", r.why.c_str());
	ck_assert_msg(contains(r.why, "/nonexistent/libnccl-loom-test.so.2"), "%s", r.why.c_str());
	o.cuda_library = "/nonexistent/libcudart-loom-test.so";
	r = probe_allreduce(o);
	ck_assert(!r.ran && !r.passed());
	ck_assert_msg(contains(r.why, "/nonexistent/libnccl-loom-test.so.2") && contains(r.why, "no CUDA runtime") &&
			      contains(r.why, "/nonexistent/libcudart-loom-test.so"),
		      "%s", r.why.c_str());
	// No device behind a runtime that loads: the call that said so is named.
	fake_env({});
	r = probe_allreduce(fake_options());
	ck_assert(!r.ran && !r.passed());
	ck_assert_sstr_eq(r.why, "no GPU: cudaGetDeviceCount: no CUDA-capable device is detected (100)");
}
END_TEST

START_TEST(allreduce_bandwidth_arithmetic)
{
	// nccl-tests: busbw = algbw * 2(n-1)/n.
	ck_assert(allreduce_bus_bandwidth(100, 8) == 175);
	ck_assert(allreduce_bus_bandwidth(100, 2) == 100);
	ck_assert(allreduce_bus_bandwidth(100, 1) == 0);
	std::vector<float> v(10, 36.0f);
	ck_assert_int_eq(first_mismatch(v.data(), v.size(), 36.0f), 10);
	v[7] = 35.0f;
	ck_assert_int_eq(first_mismatch(v.data(), v.size(), 36.0f), 7);
	v[2] = std::strtof("nan", nullptr);
	ck_assert_int_eq(first_mismatch(v.data(), v.size(), 36.0f), 2);
	// Outcomes by hand: skipped is neither a pass nor a failure, unless a
	// call failed or the data were wrong.
	AllReduceResult r;
	r.ran = r.data_ok = true;
	r.busbw_gb_per_s = 400;
	r.min_busbw_gb_per_s = 300;
	ck_assert_str_eq(r.result(), "pass");
	r.min_busbw_gb_per_s = 450;
	ck_assert_str_eq(r.result(), "fail");
	r.skipped = true;
	r.busbw_gb_per_s = 0;
	ck_assert_str_eq(r.result(), "skipped");
	ck_assert(!r.passed() && !r.failed());
	r.data_ok = false;
	ck_assert_str_eq(r.result(), "fail");
}
END_TEST

START_TEST(allreduce_eight_fake_gpus)
{
	fake_env({{"LOOM_FAKE_GPUS", "8"}});
	AllReduceResult r = probe_allreduce(fake_options());
	ck_assert_msg(r.passed(), "%s %s", r.result(), r.error.c_str());
	ck_assert_int_eq(r.gpus, 8);
	ck_assert_int_eq(r.nccl_version, 22805);
	ck_assert_int_eq(r.bytes, 1 << 20);
	ck_assert(r.data_ok && r.error.empty() && !r.skipped);
	ck_assert(r.seconds > 0 && r.algbw_gb_per_s > 0);
	ck_assert(r.busbw_gb_per_s > r.algbw_gb_per_s * 1.7499 && r.busbw_gb_per_s < r.algbw_gb_per_s * 1.7501);
	// Below the threshold: a failure with the data intact.
	r = probe_allreduce(fake_options(1e12));
	ck_assert_str_eq(r.result(), "fail");
	ck_assert(r.data_ok && r.error.empty());
	// Sizes that are not whole floats are rounded down.
	AllReduceOptions o = fake_options();
	o.bytes = (size_t(1) << 20) + 3;
	ck_assert_int_eq(probe_allreduce(o).bytes, 1 << 20);
}
END_TEST

START_TEST(allreduce_one_gpu_is_skipped)
{
	fake_env({{"LOOM_FAKE_GPUS", "1"}});
	AllReduceResult r = probe_allreduce(fake_options(100));
	ck_assert(r.ran && r.skipped && r.data_ok);
	ck_assert_str_eq(r.result(), "skipped");
	ck_assert(!r.passed() && !r.failed());
	ck_assert(r.busbw_gb_per_s == 0);
	ck_assert_msg(r.why.rfind("1 GPU: ", 0) == 0, "%s", r.why.c_str());
}
END_TEST

START_TEST(allreduce_corrupt_data_fails)
{
	// GPU 3's result has one element off by one: 36 expected for 8 GPUs.
	fake_env({{"LOOM_FAKE_GPUS", "8"}, {"LOOM_FAKE_CORRUPT", "3"}});
	AllReduceResult r = probe_allreduce(fake_options());
	ck_assert(r.ran && !r.data_ok);
	ck_assert_str_eq(r.result(), "fail");
	ck_assert_msg(contains(r.error, "data check: GPU 3 element 131072 is 37, expected 36"), "%s", r.error.c_str());
	// Also on one GPU: skipped bandwidth does not hide wrong data.
	fake_env({{"LOOM_FAKE_GPUS", "1"}, {"LOOM_FAKE_CORRUPT", "0"}});
	r = probe_allreduce(fake_options());
	ck_assert_str_eq(r.result(), "fail");
	ck_assert_msg(contains(r.error, "GPU 0 element 131072 is 2, expected 1"), "%s", r.error.c_str());
}
END_TEST

START_TEST(allreduce_failing_call_is_named)
{
	struct Case {
		const char *fail, *expect;
	} cases[] = {
		{"ncclCommInitAll", "ncclCommInitAll: unhandled cuda error (run with NCCL_DEBUG=INFO for details) (1)"},
		{"ncclAllReduce", "ncclAllReduce (GPU 0): unhandled cuda error"},
		{"ncclGroupEnd", "ncclGroupEnd: unhandled cuda error"},
		{"cudaMalloc", "cudaMalloc (GPU 0): out of memory (2)"},
		{"cudaStreamCreate", "cudaStreamCreate (GPU 0): out of memory (2)"},
		{"cudaMemcpy", "cudaMemcpy (GPU 0 send buffer from host): out of memory (2)"},
	};
	for (const auto &c : cases) {
		fake_env({{"LOOM_FAKE_GPUS", "4"}, {"LOOM_FAKE_FAIL", c.fail}});
		AllReduceResult r = probe_allreduce(fake_options());
		ck_assert_msg(r.ran && r.failed() && !r.data_ok, "%s: %s", c.fail, r.result());
		ck_assert_msg(r.error.rfind(c.expect, 0) == 0, "%s: %s", c.fail, r.error.c_str());
	}
}
END_TEST

START_TEST(allreduce_hang_and_async_error)
{
	// Streams that never finish: the probe gives up at its time limit.
	fake_env({{"LOOM_FAKE_GPUS", "2"}, {"LOOM_FAKE_HANG", "1"}});
	AllReduceOptions o = fake_options();
	o.time_limit_s = 0.2;
	AllReduceResult r = probe_allreduce(o);
	ck_assert_str_eq(r.result(), "fail");
	ck_assert_msg(contains(r.error, "warm-up all-reduce: 2 of 2 GPUs still busy after"), "%s", r.error.c_str());
	// NCCL reports an asynchronous error while the streams are busy.
	fake_env({{"LOOM_FAKE_GPUS", "2"}, {"LOOM_FAKE_HANG", "1"}, {"LOOM_FAKE_ASYNC", "6"}});
	r = probe_allreduce(o);
	ck_assert_str_eq(r.result(), "fail");
	ck_assert_msg(r.error.rfind("ncclAllReduce (GPU 0) asynchronous error: remote process exited", 0) == 0, "%s",
		      r.error.c_str());
}
END_TEST

START_TEST(memory_bandwidth_on_fake_gpus)
{
	fake_env({{"LOOM_FAKE_GPUS", "2"}});
	std::string cudart = fake_lib("fake_cudart.so");
	ProbeResult r = probe_memory_bandwidth(0, 1 << 20, 2, cudart);
	ck_assert(r.ran && r.passed());
	ck_assert_int_eq(r.gpus.size(), 2);
	ck_assert_str_eq(r.result(), "pass");
	fake_env({{"LOOM_FAKE_GPUS", "2"}, {"LOOM_FAKE_FAIL", "cudaMalloc"}});
	r = probe_memory_bandwidth(0, 1 << 20, 2, cudart);
	ck_assert_str_eq(r.result(), "fail");
	ck_assert_sstr_eq(r.gpus[1].error, "cudaMalloc: out of memory (2)");
	fake_env({});
	r = probe_memory_bandwidth(0, 1 << 20, 2, cudart);
	ck_assert_str_eq(r.result(), "not run");
	ck_assert_sstr_eq(r.why, "no GPU: cudaGetDeviceCount: no CUDA-capable device is detected (100)");
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("health_gpu_probe");
	TCase *tc = tcase_create("gpu_probe");
	tcase_add_test(tc, allreduce_without_gpu_never_passes);
	tcase_add_test(tc, allreduce_bandwidth_arithmetic);
	tcase_add_test(tc, allreduce_eight_fake_gpus);
	tcase_add_test(tc, allreduce_one_gpu_is_skipped);
	tcase_add_test(tc, allreduce_corrupt_data_fails);
	tcase_add_test(tc, allreduce_failing_call_is_named);
	tcase_add_test(tc, allreduce_hang_and_async_error);
	tcase_add_test(tc, memory_bandwidth_on_fake_gpus);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
