// loom health: the errors a job's output can show, defined once.
//
// Every kind of error line loom knows in a job's stdout/stderr: NCCL (watchdog
// timeouts, aborted communicators, system, CUDA, internal and remote errors),
// InfiniBand verbs completion errors, CUDA runtime errors (uncorrectable ECC,
// a lost GPU, illegal address, launch failure, device-side assert, out of
// memory), NVIDIA Xid lines, OOM kills by the kernel or slurmstepd, and plain
// user errors. Each kind says which category the failure classifier ranks it
// in (LogFinding), hence its class (failure_class_of), and whether the host a
// line of that kind names is to blame for it.
//
// Xid lines are parsed by the kernel-log parser (parse_xid_line) and judged by
// the same Xid table as the node checks: an Xid whose action is ignore or
// restart_app is the application's, reset_gpu/reboot/drain the GPU's (and the
// node's), suspect an unexplained GPU error that blames no node. The
// kernel-log parser takes its OOM-kill patterns from here too.
#pragma once

#include "lib/health/xid_table.hpp"

#include <cstddef>
#include <optional>
#include <string_view>

namespace loom::health {

// Why a job failed, as jobcomp/health reports it (classify.hpp).
enum class FailureClass { none, node_failure, gpu_fault, network_fault, nccl_timeout, oom, user_error };

// The categories the classifier ranks, most specific first.
enum class LogFinding {
	gpu_fault,    // uncorrectable ECC, GPU lost / fallen off the bus, an Xid the table blames on the GPU
	cuda_error,   // any other CUDA error, an application Xid
	nccl_timeout, // NCCL watchdog / collective timeout
	nccl_error,   // NCCL WARN / system, internal, unhandled CUDA errors, aborted communicator
	network,      // IB completion errors, retry exceeded, a remote rank or the network lost
	oom_gpu,      // CUDA out of memory
	oom_host,     // the kernel's, slurmstepd's or srun's OOM kill
	user_error,   // traceback, missing module or file, device-side assert
};
const char *finding_name(LogFinding f);
// gpu_fault -> gpu_fault, network -> network_fault, nccl_timeout ->
// nccl_timeout, oom_gpu and oom_host -> oom, the rest -> user_error.
FailureClass failure_class_of(LogFinding f);

enum class ErrorKind {
	// NCCL
	nccl_watchdog_timeout, // "Watchdog caught collective operation timeout"
	nccl_comm_aborted,     // "NCCL communicator was aborted"
	nccl_remote_error,     // "remote process exited or there was a network error"
	nccl_system_error,     // "unhandled system error"
	nccl_cuda_error,       // "unhandled cuda error"
	nccl_internal_error,   // ncclInternalError
	nccl_warn,             // any other "NCCL WARN" / "NCCL error"
	// InfiniBand verbs, as NCCL reports them
	ib_retry_exceeded,   // IBV_WC_RETRY_EXC_ERR, "transport retry counter exceeded"
	ib_completion_error, // "NET/IB : Got completion from peer ... with error"
	// CUDA
	cuda_ecc_uncorrectable, // "uncorrectable ECC error encountered"
	gpu_lost,               // "GPU is lost", "fallen off the bus"
	nvlink_uncorrectable,   // "uncorrectable NVLink error"
	cuda_oom,               // "CUDA out of memory", "CUDA error: out of memory"
	cuda_device_assert,     // "device-side assert triggered"
	cuda_illegal_address,   // "an illegal memory access was encountered"
	cuda_launch_failure,    // "unspecified launch failure"
	cuda_error,             // any other CUDA error
	// NVIDIA Xid lines, by the Xid table's action
	xid_application, // ignore, restart_app
	xid_suspect,     // suspect (and Xids no list names, by default)
	xid_gpu,         // reset_gpu, reboot, drain
	// the host
	host_oom_kill, // "Detected 1 oom_kill event", "Out of memory: Kill process", srun's "Out Of Memory"
	// the user's own
	python_traceback,
	missing_module,
	syntax_error,
	command_not_found,
	missing_file,
};

struct ErrorKindInfo {
	ErrorKind kind;
	const char *name;   // "nccl_watchdog_timeout"
	LogFinding finding; // the category the classifier ranks it in
	bool blames_node;   // the host a line of this kind names is a culprit
};
const ErrorKindInfo &error_kind_info(ErrorKind k);
const char *error_kind_name(ErrorKind k);

// The kind of an Xid by its action in the table.
ErrorKind error_kind_of_xid(int xid, const XidTable &xids);
// The kind of one line of a job's output: a kernel Xid line by the Xid table,
// any other line by the first pattern it holds (the specific ones come first);
// nothing when it holds no error loom knows.
std::optional<ErrorKind> error_kind_of_line(std::string_view line, const XidTable &xids);
// Where the first pattern of 'kind' that line holds starts, or npos (for
// parsers that keep the text from the match on, as the kernel log does).
size_t find_error_kind(std::string_view line, ErrorKind kind);

} // namespace loom::health
