// NCCL all-reduce across the node's GPUs, in the manner of nccl-tests'
// all_reduce_perf -g N (one process, one thread, every GPU), with NCCL and the
// CUDA runtime loaded with dlopen (gpu_runtime).
#include "lib/health/gpu_probe.hpp"

#include "lib/health/gpu_runtime.hpp"
#include "lib/util/log.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <thread>
#include <vector>

namespace loom::health {

using namespace gpu;

double allreduce_bus_bandwidth(double algbw, int n) { return n < 2 ? 0 : algbw * 2.0 * (n - 1) / n; }

size_t first_mismatch(const float *data, size_t count, float want)
{
	for (size_t i = 0; i < count; i++)
		if (!(data[i] == want)) // NaN is a mismatch too
			return i;
	return count;
}

namespace {

using Clock = std::chrono::steady_clock;

// Host staging buffer: device buffers are filled and read back through it,
// chunk by chunk, so that a large probe size does not need as much host memory.
constexpr size_t chunk_bytes = size_t(16) << 20;

class AllReduce {
public:
	AllReduce(const Cuda &c, const Nccl &nc, Calls &k, int n, size_t bytes)
		: c_(c), nc_(nc), k_(k), n_(n), bytes_(bytes), comms_(n, nullptr), send_(n, nullptr), recv_(n, nullptr),
		  streams_(n, nullptr), host_(std::min(bytes, chunk_bytes) / sizeof(float))
	{
	}
	AllReduce(const AllReduce &) = delete;
	AllReduce &operator=(const AllReduce &) = delete;

	// ncclCommInitAll, then per GPU two buffers and a stream; send holds rank+1.
	bool setup()
	{
		std::vector<int> devs(n_);
		std::iota(devs.begin(), devs.end(), 0);
		if (!k_.nccl("ncclCommInitAll", nc_.comm_init_all(comms_.data(), n_, devs.data()))) {
			// What a failed ncclCommInitAll left in the array is not ours to
			// release (a failing probe may leak rather than free twice).
			std::fill(comms_.begin(), comms_.end(), nullptr);
			return false;
		}
		for (int d = 0; d < n_; d++) {
			std::string g = " (GPU " + std::to_string(d) + ")";
			if (!k_.cuda("cudaSetDevice" + g, c_.set_device(d)) ||
			    !k_.cuda("cudaMalloc" + g, c_.malloc_(&send_[d], bytes_)) ||
			    !k_.cuda("cudaMalloc" + g, c_.malloc_(&recv_[d], bytes_)) ||
			    !k_.cuda("cudaStreamCreate" + g, c_.stream_create(&streams_[d])) ||
			    !k_.cuda("cudaMemset" + g, c_.memset_(recv_[d], 0, bytes_)) ||
			    !fill(d, static_cast<float>(d + 1)))
				return false;
		}
		return true;
	}

	// One all-reduce on every GPU, enqueued as one group.
	bool enqueue()
	{
		if (!k_.nccl("ncclGroupStart", nc_.group_start()))
			return false;
		bool posted = true;
		for (int d = 0; posted && d < n_; d++)
			posted = k_.nccl("ncclAllReduce (GPU " + std::to_string(d) + ")",
					 nc_.all_reduce(send_[d], recv_[d], bytes_ / sizeof(float), ncclFloat, ncclSum,
							comms_[d], streams_[d]));
		// A group that was started is ended, whatever happened inside it.
		bool ended = k_.nccl("ncclGroupEnd", nc_.group_end());
		return posted && ended;
	}

	// Wait for every stream, as cudaStreamSynchronize would, but with a time
	// limit and watching NCCL's asynchronous errors (as nccl-tests does): a
	// collective stuck on a broken link would otherwise hang the probe.
	bool wait(const char *phase, double limit_s)
	{
		auto deadline = Clock::now() +
				std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limit_s));
		std::vector<bool> done(n_, false);
		int left = n_;
		while (left > 0) {
			for (int d = 0; d < n_; d++) {
				if (done[d])
					continue;
				std::string g = " (GPU " + std::to_string(d) + ")";
				cudaError_t e = c_.stream_query(streams_[d]);
				if (e == cudaSuccess) {
					done[d] = true;
					left--;
					continue;
				}
				if (e != cudaErrorNotReady)
					return k_.cuda("cudaStreamQuery" + g, e);
				ncclResult_t async = ncclSuccess;
				if (!k_.nccl("ncclCommGetAsyncError" + g, nc_.comm_get_async_error(comms_[d], &async)))
					return false;
				if (async != ncclSuccess && async != ncclInProgress)
					return k_.nccl("ncclAllReduce" + g + " asynchronous error", async);
			}
			if (left > 0 && Clock::now() > deadline) {
				hung_ = true;
				return k_.fail(
					strprintf("%s all-reduce: %d of %d GPUs still busy after %.0f s (NCCL hung?)",
						  phase, left, n_, limit_s));
			}
			if (left > 0)
				std::this_thread::yield();
		}
		return true;
	}

	// Every element of every result must be n(n+1)/2 (exact in float for
	// any GPU count a node has).
	bool check()
	{
		const float want = static_cast<float>(n_) * static_cast<float>(n_ + 1) / 2.0f;
		for (int d = 0; d < n_; d++) {
			for (size_t off = 0; off < bytes_; off += chunk_bytes) {
				size_t len = std::min(chunk_bytes, bytes_ - off);
				if (!k_.cuda("cudaMemcpy (GPU " + std::to_string(d) + " result to host)",
					     c_.memcpy_(host_.data(), static_cast<char *>(recv_[d]) + off, len,
							cudaMemcpyDeviceToHost)))
					return false;
				size_t count = len / sizeof(float);
				size_t bad = first_mismatch(host_.data(), count, want);
				if (bad < count)
					return k_.fail(strprintf("data check: GPU %d element %zu is %g, expected %g "
								 "(all-reduce result corrupted)",
								 d, off / sizeof(float) + bad,
								 static_cast<double>(host_[bad]),
								 static_cast<double>(want)));
			}
		}
		return true;
	}

	// Communicators first (destroyed, or aborted after a failure so that
	// nothing waits on a hung collective), then streams and buffers.
	~AllReduce()
	{
		bool clean = k_.ok() && !hung_;
		for (int d = 0; d < n_; d++) {
			if (!comms_[d])
				continue;
			std::string g = " (GPU " + std::to_string(d) + ")";
			if (clean)
				k_.nccl("ncclCommDestroy" + g, nc_.comm_destroy(comms_[d]));
			else
				nc_.comm_abort(comms_[d]);
		}
		for (int d = 0; d < n_; d++) {
			if (!streams_[d] && !send_[d] && !recv_[d])
				continue;
			std::string g = " (GPU " + std::to_string(d) + ")";
			k_.cuda("cudaSetDevice" + g, c_.set_device(d));
			if (streams_[d])
				k_.cuda("cudaStreamDestroy" + g, c_.stream_destroy(streams_[d]));
			if (send_[d])
				k_.cuda("cudaFree" + g, c_.free_(send_[d]));
			if (recv_[d])
				k_.cuda("cudaFree" + g, c_.free_(recv_[d]));
		}
	}

private:
	bool fill(int d, float value)
	{
		std::fill(host_.begin(), host_.end(), value);
		for (size_t off = 0; off < bytes_; off += chunk_bytes)
			if (!k_.cuda("cudaMemcpy (GPU " + std::to_string(d) + " send buffer from host)",
				     c_.memcpy_(static_cast<char *>(send_[d]) + off, host_.data(),
						std::min(chunk_bytes, bytes_ - off), cudaMemcpyHostToDevice)))
				return false;
		return true;
	}

	const Cuda &c_;
	const Nccl &nc_;
	Calls &k_;
	int n_;
	size_t bytes_;
	std::vector<ncclComm_t> comms_;
	std::vector<void *> send_, recv_;
	std::vector<cudaStream_t> streams_;
	std::vector<float> host_;
	bool hung_ = false;
};

} // namespace

AllReduceResult probe_allreduce(const AllReduceOptions &o)
{
	AllReduceResult r;
	r.min_busbw_gb_per_s = o.min_busbw_gb_per_s;
	r.bytes = o.bytes - o.bytes % sizeof(float);
	r.iterations = o.iterations;
	if (r.bytes == 0 || o.iterations < 1 || o.warmup < 0 || !(o.time_limit_s > 0)) {
		r.why = "not run: bad probe options (size, iterations, warm-up or time limit)";
		return r;
	}
	// Both libraries are tried, so that every one missing is named.
	Nccl nc;
	Cuda c;
	std::string no_nccl = load_nccl(nc, o.nccl_library), no_cuda = load_cuda(c, o.cuda_library);
	if (!no_nccl.empty() || !no_cuda.empty()) {
		r.why = "no GPU: " + no_nccl + (no_nccl.empty() || no_cuda.empty() ? "" : "; ") + no_cuda;
		return r;
	}
	Calls k(c, &nc);
	int n = 0;
	if (!k.cuda("cudaGetDeviceCount", c.get_count(&n)) || n <= 0) {
		r.why = "no GPU: " + (k.ok() ? std::string("cudaGetDeviceCount found none") : k.error());
		return r;
	}
	r.ran = true;
	r.gpus = n;
	if (!k.nccl("ncclGetVersion", nc.get_version(&r.nccl_version))) {
		r.error = k.error();
		return r;
	}
	if (n == 1) {
		r.skipped = true;
		r.why = "1 GPU: bus bandwidth needs two or more (the all-reduce ran and its data were checked)";
	}
	{
		AllReduce ar(c, nc, k, n, r.bytes);
		bool ok = ar.setup();
		for (int i = 0; ok && i < o.warmup; i++)
			ok = ar.enqueue();
		ok = ok && ar.wait("warm-up", o.time_limit_s);
		auto t0 = Clock::now();
		for (int i = 0; ok && i < o.iterations; i++)
			ok = ar.enqueue();
		ok = ok && ar.wait("timed", o.time_limit_s);
		double s = std::chrono::duration<double>(Clock::now() - t0).count();
		if (ok && s > 0) {
			r.seconds = s / o.iterations;
			r.algbw_gb_per_s = static_cast<double>(r.bytes) / r.seconds / 1e9;
			r.busbw_gb_per_s = allreduce_bus_bandwidth(r.algbw_gb_per_s, n);
		}
		r.data_ok = ok && ar.check();
	} // teardown: its failures count too
	r.error = k.error();
	return r;
}

} // namespace loom::health
