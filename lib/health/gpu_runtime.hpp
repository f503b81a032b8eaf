// loom health: the CUDA runtime and NCCL, loaded with dlopen at run time.
//
// Internal to the GPU probes (gpu_probe.cpp, gpu_probe_allreduce.cpp). loom
// never links CUDA or NCCL and builds without their headers: the few types,
// constants and entry points the probes use are declared here. The NCCL
// values were checked against nccl.h of NCCL 2.28 (ncclSuccess 0,
// ncclInProgress 7, ncclFloat = ncclFloat32 = 7, ncclSum 0); they are part of
// NCCL's ABI and have not changed since 2.0.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace loom::health::gpu {

// cuda_runtime_api.h
using cudaError_t = int;
using cudaEvent_t = struct CUevent_st *;
using cudaStream_t = struct CUstream_st *;
constexpr cudaError_t cudaSuccess = 0;
constexpr cudaError_t cudaErrorNotReady = 600;
constexpr int cudaMemcpyHostToDevice = 1;
constexpr int cudaMemcpyDeviceToHost = 2;
constexpr int cudaMemcpyDeviceToDevice = 3;

// nccl.h
using ncclComm_t = struct ncclComm *;
using ncclResult_t = int;
constexpr ncclResult_t ncclSuccess = 0;
constexpr ncclResult_t ncclInProgress = 7;
constexpr int ncclFloat = 7;
constexpr int ncclSum = 0;

// One dlopen handle, closed when it goes.
class Library {
public:
	Library() = default;
	~Library();
	Library(const Library &) = delete;
	Library &operator=(const Library &) = delete;

	// Open the first of names that loads; "" on success, else the names
	// tried and the last dlerror(), which names the file.
	std::string open(const std::vector<std::string> &names, int flags);
	// Bind a symbol to a function pointer; false when it is missing (and
	// then 'missing' names it).
	template <typename F>
	bool bind(const char *name, F &out)
	{
		out = reinterpret_cast<F>(sym(name));
		if (!out && missing.empty())
			missing = name;
		return out != nullptr;
	}
	template <typename F>
	void bind_optional(const char *name, F &out)
	{
		out = reinterpret_cast<F>(sym(name));
	}
	std::string missing;

private:
	void *sym(const char *name) const;
	void *handle_ = nullptr;
};

struct Cuda {
	Library lib;
	cudaError_t (*get_count)(int *) = nullptr;
	cudaError_t (*set_device)(int) = nullptr;
	cudaError_t (*malloc_)(void **, size_t) = nullptr;
	cudaError_t (*free_)(void *) = nullptr;
	cudaError_t (*memcpy_)(void *, const void *, size_t, int) = nullptr;
	cudaError_t (*memset_)(void *, int, size_t) = nullptr;
	cudaError_t (*event_create)(cudaEvent_t *) = nullptr;
	cudaError_t (*event_destroy)(cudaEvent_t) = nullptr;
	cudaError_t (*event_record)(cudaEvent_t, cudaStream_t) = nullptr;
	cudaError_t (*event_sync)(cudaEvent_t) = nullptr;
	cudaError_t (*elapsed)(float *, cudaEvent_t, cudaEvent_t) = nullptr;
	cudaError_t (*stream_create)(cudaStream_t *) = nullptr;
	cudaError_t (*stream_destroy)(cudaStream_t) = nullptr;
	cudaError_t (*stream_query)(cudaStream_t) = nullptr;
	const char *(*error_string)(cudaError_t) = nullptr;
};

struct Nccl {
	Library lib;
	ncclResult_t (*get_version)(int *) = nullptr;
	ncclResult_t (*comm_init_all)(ncclComm_t *, int, const int *) = nullptr;
	ncclResult_t (*comm_destroy)(ncclComm_t) = nullptr;
	ncclResult_t (*comm_abort)(ncclComm_t) = nullptr;
	ncclResult_t (*comm_get_async_error)(ncclComm_t, ncclResult_t *) = nullptr;
	ncclResult_t (*group_start)() = nullptr;
	ncclResult_t (*group_end)() = nullptr;
	// ncclAllReduce(sendbuff, recvbuff, count, ncclDataType_t, ncclRedOp_t, comm, stream)
	ncclResult_t (*all_reduce)(const void *, void *, size_t, int, int, ncclComm_t, cudaStream_t) = nullptr;
	const char *(*error_string)(ncclResult_t) = nullptr;
	const char *(*last_error)(ncclComm_t) = nullptr; // NCCL >= 2.13; may stay null
};

// Load the CUDA runtime (library, or libcudart.so, .so.13, .so.12) and bind
// what the probes use. "" on success, else why not: "no CUDA runtime (tried
// ...): <dlerror>" or "the CUDA runtime lacks cudaStreamQuery".
std::string load_cuda(Cuda &c, const std::string &library);
// The same for NCCL (library, or libnccl.so.2, libnccl.so). NCCL is never
// unloaded once opened (its proxy threads may outlive the last communicator).
std::string load_nccl(Nccl &n, const std::string &library);

// Checks return codes and keeps the first failure as "<call>: <error string>
// (<code>)": every call of a probe goes through cuda() or nccl(), so that a
// failed probe names the call that failed.
class Calls {
public:
	explicit Calls(const Cuda &c, const Nccl *n = nullptr) : cuda_(c), nccl_(n) {}
	bool cuda(const std::string &call, cudaError_t e);
	bool nccl(const std::string &call, ncclResult_t r);
	// Any other failure (a data check, a time limit).
	bool fail(const std::string &why);
	bool ok() const { return error_.empty(); }
	const std::string &error() const { return error_; }

private:
	const Cuda &cuda_;
	const Nccl *nccl_;
	std::string error_;
};

} // namespace loom::health::gpu
