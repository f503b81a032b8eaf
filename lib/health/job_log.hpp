// loom health: scan a job's output files for the errors that tell why it died.
//
// CUDA errors, GPU hardware faults as the application saw them, NCCL errors
// and watchdog timeouts, network transport errors, GPU and host out-of-memory,
// and plain user errors (Python tracebacks, missing files). Lines written by
// NCCL carry their host ("n2:1234:1290 [3] NCCL WARN ..."), and srun/slurmstepd
// name the node of a failed task; those hosts become the finding's host, which
// is how the failure classifier names a culprit node.
#pragma once

#include "lib/util/expected.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace loom::health {

enum class LogFinding {
	gpu_fault,    // uncorrectable ECC, GPU lost / fallen off the bus, Xid
	cuda_error,   // any other CUDA runtime/driver error
	nccl_timeout, // NCCL watchdog / collective timeout
	nccl_error,   // NCCL WARN / ncclSystemError / ncclInternalError
	network,      // IB completion errors, retry exceeded, peer lost
	oom_gpu,      // CUDA out of memory
	oom_host,     // the kernel's or slurmstepd's OOM kill
	user_error,   // traceback, missing module or file, device-side assert
};
const char *finding_name(LogFinding f);

struct JobLogLine {
	LogFinding kind;
	int line = 0;      // 1-based
	std::string host;  // empty when the line does not say
	std::string text;  // the line, cut to 300 characters
};

struct JobLogScan {
	std::vector<JobLogLine> lines; // at most max_findings
	std::map<LogFinding, int> counts; // all matches, even past max_findings
	bool cut = false; // the text was longer than max_bytes: only its tail was read
};

// Pure: classify every line of text.
JobLogScan scan_job_log(std::string_view text, size_t max_findings = 200);
// Read the last max_bytes of a file and scan it.
expected<JobLogScan> scan_job_log_file(const std::string &path, uint64_t max_bytes = 8u << 20,
				       size_t max_findings = 200);
// The host a line names, or "".
std::string host_of_line(std::string_view line);

} // namespace loom::health
