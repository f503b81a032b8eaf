#include "lib/health/gpu_runtime.hpp"

#include <dlfcn.h>

namespace loom::health::gpu {

Library::~Library()
{
	if (handle_)
		::dlclose(handle_);
}

std::string Library::open(const std::vector<std::string> &names, int flags)
{
	std::string tried, err;
	for (const auto &n : names) {
		handle_ = ::dlopen(n.c_str(), flags);
		if (handle_)
			return {};
		const char *e = ::dlerror();
		err = e ? e : n + ": cannot open";
		tried += (tried.empty() ? "" : ", ") + n;
	}
	return "(tried " + tried + "): " + err;
}

void *Library::sym(const char *name) const { return handle_ ? ::dlsym(handle_, name) : nullptr; }

std::string load_cuda(Cuda &c, const std::string &library)
{
	std::vector<std::string> names =
		library.empty() ? std::vector<std::string>{"libcudart.so", "libcudart.so.13", "libcudart.so.12"}
				: std::vector<std::string>{library};
	if (std::string err = c.lib.open(names, RTLD_NOW | RTLD_LOCAL); !err.empty())
		return "no CUDA runtime " + err;
	Library &l = c.lib;
	bool ok = l.bind("cudaGetDeviceCount", c.get_count) && l.bind("cudaSetDevice", c.set_device) &&
		  l.bind("cudaMalloc", c.malloc_) && l.bind("cudaFree", c.free_) && l.bind("cudaMemcpy", c.memcpy_) &&
		  l.bind("cudaMemset", c.memset_) && l.bind("cudaEventCreate", c.event_create) &&
		  l.bind("cudaEventDestroy", c.event_destroy) && l.bind("cudaEventRecord", c.event_record) &&
		  l.bind("cudaEventSynchronize", c.event_sync) && l.bind("cudaEventElapsedTime", c.elapsed) &&
		  l.bind("cudaStreamCreate", c.stream_create) && l.bind("cudaStreamDestroy", c.stream_destroy) &&
		  l.bind("cudaStreamQuery", c.stream_query) && l.bind("cudaGetErrorString", c.error_string);
	return ok ? std::string() : "the CUDA runtime lacks " + l.missing;
}

std::string load_nccl(Nccl &n, const std::string &library)
{
	std::vector<std::string> names = library.empty() ? std::vector<std::string>{"libnccl.so.2", "libnccl.so"}
							 : std::vector<std::string>{library};
	if (std::string err = n.lib.open(names, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE); !err.empty())
		return "no NCCL " + err;
	Library &l = n.lib;
	bool ok = l.bind("ncclGetVersion", n.get_version) && l.bind("ncclCommInitAll", n.comm_init_all) &&
		  l.bind("ncclCommDestroy", n.comm_destroy) && l.bind("ncclCommAbort", n.comm_abort) &&
		  l.bind("ncclCommGetAsyncError", n.comm_get_async_error) && l.bind("ncclGroupStart", n.group_start) &&
		  l.bind("ncclGroupEnd", n.group_end) && l.bind("ncclAllReduce", n.all_reduce) &&
		  l.bind("ncclGetErrorString", n.error_string);
	if (!ok)
		return "NCCL lacks " + l.missing;
	l.bind_optional("ncclGetLastError", n.last_error);
	return {};
}

bool Calls::cuda(const std::string &call, cudaError_t e)
{
	if (e == cudaSuccess)
		return true;
	if (error_.empty()) {
		const char *s = cuda_.error_string ? cuda_.error_string(e) : nullptr;
		error_ = call + ": " + (s ? s : "CUDA error") + " (" + std::to_string(e) + ")";
	}
	return false;
}

bool Calls::nccl(const std::string &call, ncclResult_t r)
{
	if (r == ncclSuccess)
		return true;
	if (error_.empty()) {
		const char *s = nccl_ && nccl_->error_string ? nccl_->error_string(r) : nullptr;
		error_ = call + ": " + (s ? s : "NCCL error") + " (" + std::to_string(r) + ")";
		const char *last = nccl_ && nccl_->last_error ? nccl_->last_error(nullptr) : nullptr;
		if (last && *last)
			error_ += ": " + std::string(last);
	}
	return false;
}

bool Calls::fail(const std::string &why)
{
	if (error_.empty())
		error_ = why;
	return false;
}

} // namespace loom::health::gpu
