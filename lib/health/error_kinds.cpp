#include "lib/health/error_kinds.hpp"

#include "lib/health/kernel_log.hpp"

namespace loom::health {
namespace {

using K = ErrorKind;
using F = LogFinding;

// One row per kind, in the enum's order (checked below), its comment beside it.
// clang-format off
constexpr ErrorKindInfo kinds[] = {
	{K::nccl_watchdog_timeout, "nccl_watchdog_timeout", F::nccl_timeout, false}, // every rank of the collective times out
	{K::nccl_comm_aborted, "nccl_comm_aborted", F::nccl_error, false},
	{K::nccl_remote_error, "nccl_remote_error", F::network, false}, // said by the rank that lost its peer
	{K::nccl_system_error, "nccl_system_error", F::nccl_error, false},
	{K::nccl_cuda_error, "nccl_cuda_error", F::nccl_error, false},
	{K::nccl_internal_error, "nccl_internal_error", F::nccl_error, false},
	{K::nccl_warn, "nccl_warn", F::nccl_error, false},
	{K::ib_retry_exceeded, "ib_retry_exceeded", F::network, true}, // said by the host whose HCA gave up
	{K::ib_completion_error, "ib_completion_error", F::network, true},
	{K::cuda_ecc_uncorrectable, "cuda_ecc_uncorrectable", F::gpu_fault, true},
	{K::gpu_lost, "gpu_lost", F::gpu_fault, true},
	{K::nvlink_uncorrectable, "nvlink_uncorrectable", F::gpu_fault, true},
	{K::cuda_oom, "cuda_oom", F::oom_gpu, false}, // the application asked for too much
	{K::cuda_device_assert, "cuda_device_assert", F::user_error, false},
	{K::cuda_illegal_address, "cuda_illegal_address", F::cuda_error, false},
	{K::cuda_launch_failure, "cuda_launch_failure", F::cuda_error, false},
	{K::cuda_error, "cuda_error", F::cuda_error, false},
	{K::xid_application, "xid_application", F::cuda_error, false},
	{K::xid_suspect, "xid_suspect", F::cuda_error, false}, // the node checks watch it; it drains nothing
	{K::xid_gpu, "xid_gpu", F::gpu_fault, true},
	{K::host_oom_kill, "host_oom_kill", F::oom_host, false}, // the job's memory limit, not the node
	{K::python_traceback, "python_traceback", F::user_error, false},
	{K::missing_module, "missing_module", F::user_error, false},
	{K::syntax_error, "syntax_error", F::user_error, false},
	{K::command_not_found, "command_not_found", F::user_error, false},
	{K::missing_file, "missing_file", F::user_error, false},
};
// clang-format on
static_assert(
	[] {
		for (size_t i = 0; i < std::size(kinds); i++)
			if (static_cast<size_t>(kinds[i].kind) != i)
				return false;
		return std::size(kinds) == static_cast<size_t>(K::missing_file) + 1;
	}(),
	"kinds[] must list every ErrorKind in the enum's order");

struct Pattern {
	std::string_view needle;
	ErrorKind kind;
};

// The first pattern a line holds decides its kind, so the specific ones (ECC,
// out of memory, a timeout, an IB error) come before the general ones (NCCL
// WARN, CUDA error): "NCCL WARN Cuda failure 'uncorrectable ECC error
// encountered'" is an ECC error.
constexpr Pattern patterns[] = {
	{"uncorrectable ECC error", K::cuda_ecc_uncorrectable},
	{"CUDA_ERROR_ECC_UNCORRECTABLE", K::cuda_ecc_uncorrectable},
	{"cudaErrorECCUncorrectable", K::cuda_ecc_uncorrectable},
	{"GPU is lost", K::gpu_lost},
	{"fallen off the bus", K::gpu_lost},
	{"GPU lost from the bus", K::gpu_lost},
	{"uncorrectable NVLink error", K::nvlink_uncorrectable},
	{"CUDA out of memory", K::cuda_oom},
	{"CUDA error: out of memory", K::cuda_oom},
	{"OutOfMemoryError", K::cuda_oom},
	{"CUDA_ERROR_OUT_OF_MEMORY", K::cuda_oom},
	{"cudaErrorMemoryAllocation", K::cuda_oom},
	// slurmstepd ("Detected 1 oom_kill event in StepId=..." since 21.08,
	// "Detected 1 oom-kill event(s) in step ..." before), the kernel, srun.
	{"oom_kill event", K::host_oom_kill},
	{"oom-kill event", K::host_oom_kill},
	{"Out of memory: Kill", K::host_oom_kill},
	{"oom-kill:", K::host_oom_kill},
	{"Memory cgroup out of memory", K::host_oom_kill},
	{": Out Of Memory", K::host_oom_kill},
	{"Watchdog caught collective operation timeout", K::nccl_watchdog_timeout},
	{"collective operation timeout", K::nccl_watchdog_timeout},
	{"NCCL timeout", K::nccl_watchdog_timeout},
	{"ncclTimeout", K::nccl_watchdog_timeout},
	{"IBV_WC_RETRY_EXC_ERR", K::ib_retry_exceeded},
	{"transport retry counter exceeded", K::ib_retry_exceeded},
	{"Got completion from peer", K::ib_completion_error},
	{"NET/IB : Got completion", K::ib_completion_error},
	{"ibv_poll_cq", K::ib_completion_error},
	{"remote process exited or there was a network error", K::nccl_remote_error},
	{"ncclRemoteError", K::nccl_remote_error},
	{"NCCL communicator was aborted", K::nccl_comm_aborted},
	{"device-side assert triggered", K::cuda_device_assert},
	{"an illegal memory access was encountered", K::cuda_illegal_address},
	{"cudaErrorIllegalAddress", K::cuda_illegal_address},
	{"CUDA_ERROR_ILLEGAL_ADDRESS", K::cuda_illegal_address},
	{"unspecified launch failure", K::cuda_launch_failure},
	{"cudaErrorLaunchFailure", K::cuda_launch_failure},
	{"CUDA_ERROR_LAUNCH_FAILED", K::cuda_launch_failure},
	{"unhandled system error", K::nccl_system_error},
	{"ncclSystemError", K::nccl_system_error},
	{"unhandled cuda error", K::nccl_cuda_error},
	{"ncclUnhandledCudaError", K::nccl_cuda_error},
	{"ncclInternalError", K::nccl_internal_error},
	{"NCCL WARN", K::nccl_warn},
	{"NCCL error", K::nccl_warn},
	{"CUDA error", K::cuda_error},
	{"CUDA_ERROR_", K::cuda_error},
	{"cudaError", K::cuda_error},
	{"Cuda failure", K::cuda_error},
	{"Traceback (most recent call last)", K::python_traceback},
	{"ModuleNotFoundError", K::missing_module},
	{"SyntaxError", K::syntax_error},
	{"command not found", K::command_not_found},
	{"No such file or directory", K::missing_file},
};

} // namespace

const char *finding_name(LogFinding f)
{
	switch (f) {
	case F::gpu_fault:
		return "gpu_fault";
	case F::cuda_error:
		return "cuda_error";
	case F::nccl_timeout:
		return "nccl_timeout";
	case F::nccl_error:
		return "nccl_error";
	case F::network:
		return "network";
	case F::oom_gpu:
		return "oom_gpu";
	case F::oom_host:
		return "oom_host";
	case F::user_error:
		return "user_error";
	}
	return "unknown";
}

FailureClass failure_class_of(LogFinding f)
{
	switch (f) {
	case F::gpu_fault:
		return FailureClass::gpu_fault;
	case F::network:
		return FailureClass::network_fault;
	case F::nccl_timeout:
		return FailureClass::nccl_timeout;
	case F::oom_gpu:
	case F::oom_host:
		return FailureClass::oom;
	case F::cuda_error:
	case F::nccl_error:
	case F::user_error:
		return FailureClass::user_error;
	}
	return FailureClass::user_error;
}

const ErrorKindInfo &error_kind_info(ErrorKind k) { return kinds[static_cast<size_t>(k)]; }

const char *error_kind_name(ErrorKind k) { return error_kind_info(k).name; }

ErrorKind error_kind_of_xid(int xid, const XidTable &xids)
{
	switch (xid_blame(xids.action(xid))) {
	case XidBlame::application:
		return K::xid_application;
	case XidBlame::suspect:
		return K::xid_suspect;
	case XidBlame::gpu:
		return K::xid_gpu;
	}
	return K::xid_suspect;
}

std::optional<ErrorKind> error_kind_of_line(std::string_view line, const XidTable &xids)
{
	if (auto x = parse_xid_line(line))
		return error_kind_of_xid(x->xid, xids);
	for (const auto &p : patterns)
		if (line.find(p.needle) != std::string_view::npos)
			return p.kind;
	return std::nullopt;
}

size_t find_error_kind(std::string_view line, ErrorKind kind)
{
	for (const auto &p : patterns) {
		if (p.kind != kind)
			continue;
		size_t at = line.find(p.needle);
		if (at != std::string_view::npos)
			return at;
	}
	return std::string_view::npos;
}

} // namespace loom::health
