// loom health: scan a job's output files for the errors that tell why it died.
//
// CUDA errors, GPU hardware faults as the application saw them, NVIDIA Xid
// lines (judged by the health config's Xid table), NCCL errors and watchdog
// timeouts, network transport errors, GPU and host out-of-memory, and plain
// user errors (Python tracebacks, missing files): the vocabulary is
// error_kinds.hpp. Lines written by NCCL carry their host ("n2:1234:1290 [3]
// NCCL WARN ..."), syslog lines theirs ("Aug 17 06:18:01 n2 kernel: NVRM: Xid
// ..."), and srun/slurmstepd name the node of a failed task; those hosts
// become the finding's host, which is how the failure classifier names a
// culprit node.
#pragma once

#include "lib/health/error_kinds.hpp"
#include "lib/health/xid_table.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace loom::health {

// LogFinding, ErrorKind: error_kinds.hpp.
struct JobLogLine {
	LogFinding kind;  // the category (error_kind_info(error).finding)
	ErrorKind error;  // what the line says
	int line = 0;     // 1-based
	std::string host; // empty when the line does not say
	std::string text; // the line, cut to 300 characters
};

struct JobLogScan {
	std::vector<JobLogLine> lines;    // at most max_findings
	std::map<LogFinding, int> counts; // all matches, even past max_findings
	bool cut = false;                 // the text was longer than max_bytes: only its tail was read
};

// Pure: classify every line of text. Xid lines take their kind from xids
// (pass the health config's table; NVIDIA's mapping when none is given).
JobLogScan scan_job_log(std::string_view text, size_t max_findings = 200, const XidTable &xids = nvidia_default_xids());
// Read the last max_bytes of a file, from byte 'from' on (a step's part of a
// job's output), and scan it.
expected<JobLogScan> scan_job_log_file(const std::string &path, uint64_t max_bytes = 8u << 20,
				       size_t max_findings = 200, const XidTable &xids = nvidia_default_xids(),
				       uint64_t from = 0);
// The host a line names, or "".
std::string host_of_line(std::string_view line);

} // namespace loom::health
