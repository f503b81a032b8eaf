#include "lib/health/job_log.hpp"

#include "lib/util/fs.hpp"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace loom::health {
namespace {

struct Rule {
	std::string_view needle;
	LogFinding kind;
};

// Order matters: the first rule that matches a line decides its kind, so the
// specific ones (ECC, OOM, timeout) come before the general ones (CUDA error).
constexpr Rule rules[] = {
	{"uncorrectable ECC error", LogFinding::gpu_fault},
	{"CUDA_ERROR_ECC_UNCORRECTABLE", LogFinding::gpu_fault},
	{"cudaErrorECCUncorrectable", LogFinding::gpu_fault},
	{"GPU is lost", LogFinding::gpu_fault},
	{"fallen off the bus", LogFinding::gpu_fault},
	{"uncorrectable NVLink error", LogFinding::gpu_fault},
	{"NVRM: Xid", LogFinding::gpu_fault},
	{"CUDA out of memory", LogFinding::oom_gpu},
	{"OutOfMemoryError", LogFinding::oom_gpu},
	{"CUDA_ERROR_OUT_OF_MEMORY", LogFinding::oom_gpu},
	{"cudaErrorMemoryAllocation", LogFinding::oom_gpu},
	{"oom-kill event", LogFinding::oom_host},
	{"oom_kill event", LogFinding::oom_host},
	{"Out of memory: Kill", LogFinding::oom_host},
	{"Watchdog caught collective operation timeout", LogFinding::nccl_timeout},
	{"collective operation timeout", LogFinding::nccl_timeout},
	{"NCCL timeout", LogFinding::nccl_timeout},
	{"ncclTimeout", LogFinding::nccl_timeout},
	{"IBV_WC_RETRY_EXC_ERR", LogFinding::network},
	{"transport retry counter exceeded", LogFinding::network},
	{"Got completion from peer", LogFinding::network},
	{"NET/IB : Got completion", LogFinding::network},
	{"remote process exited or there was a network error", LogFinding::network},
	{"ibv_poll_cq", LogFinding::network},
	{"device-side assert triggered", LogFinding::user_error},
	{"ncclSystemError", LogFinding::nccl_error},
	{"ncclInternalError", LogFinding::nccl_error},
	{"ncclRemoteError", LogFinding::nccl_error},
	{"ncclUnhandledCudaError", LogFinding::nccl_error},
	{"NCCL WARN", LogFinding::nccl_error},
	{"NCCL error", LogFinding::nccl_error},
	{"CUDA error", LogFinding::cuda_error},
	{"CUDA_ERROR_", LogFinding::cuda_error},
	{"cudaError", LogFinding::cuda_error},
	{"Traceback (most recent call last)", LogFinding::user_error},
	{"ModuleNotFoundError", LogFinding::user_error},
	{"SyntaxError", LogFinding::user_error},
	{"command not found", LogFinding::user_error},
	{"No such file or directory", LogFinding::user_error},
};

bool host_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_'; }

} // namespace

const char *finding_name(LogFinding f)
{
	switch (f) {
	case LogFinding::gpu_fault:
		return "gpu_fault";
	case LogFinding::cuda_error:
		return "cuda_error";
	case LogFinding::nccl_timeout:
		return "nccl_timeout";
	case LogFinding::nccl_error:
		return "nccl_error";
	case LogFinding::network:
		return "network";
	case LogFinding::oom_gpu:
		return "oom_gpu";
	case LogFinding::oom_host:
		return "oom_host";
	case LogFinding::user_error:
		return "user_error";
	}
	return "unknown";
}

std::string host_of_line(std::string_view line)
{
	// NCCL: "host:pid:tid [dev] NCCL ..."
	size_t i = 0;
	while (i < line.size() && host_char(line[i]))
		i++;
	if (i > 0 && i < line.size() && line[i] == ':' && line.find(" NCCL ") != std::string_view::npos) {
		size_t j = i + 1;
		while (j < line.size() && std::isdigit(static_cast<unsigned char>(line[j])))
			j++;
		if (j > i + 1 && j < line.size() && line[j] == ':')
			return std::string(line.substr(0, i));
	}
	// slurmstepd: "*** JOB 12 ON n2 CANCELLED ..."; "*** STEP 12.0 ON n2 ..."
	size_t on = line.find(" ON ");
	if (on != std::string_view::npos && line.find("***") != std::string_view::npos) {
		size_t b = on + 4, e = b;
		while (e < line.size() && host_char(line[e]))
			e++;
		if (e > b)
			return std::string(line.substr(b, e - b));
	}
	// srun: "srun: error: n3: task 5: Exited with exit code 1"
	static constexpr std::string_view srun = "srun: error: ";
	size_t s = line.find(srun);
	if (s != std::string_view::npos) {
		size_t b = s + srun.size(), e = b;
		while (e < line.size() && host_char(line[e]))
			e++;
		if (e > b && e + 7 < line.size() && line.substr(e, 7) == ": task ")
			return std::string(line.substr(b, e - b));
	}
	return {};
}

JobLogScan scan_job_log(std::string_view text, size_t max_findings)
{
	JobLogScan scan;
	int lineno = 0;
	size_t start = 0;
	while (start < text.size()) {
		size_t nl = text.find('\n', start);
		std::string_view line =
			text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
		start = nl == std::string_view::npos ? text.size() : nl + 1;
		lineno++;
		for (const auto &r : rules) {
			if (line.find(r.needle) == std::string_view::npos)
				continue;
			scan.counts[r.kind]++;
			if (scan.lines.size() < max_findings)
				scan.lines.push_back({r.kind, lineno, host_of_line(line), std::string(line.substr(0, 300))});
			break;
		}
	}
	return scan;
}

expected<JobLogScan> scan_job_log_file(const std::string &path, uint64_t max_bytes, size_t max_findings)
{
	int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return unexpected(path, std::string("cannot open job log: ") + std::strerror(errno));
	struct stat st;
	if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		::close(fd);
		return unexpected(path, "not a regular file");
	}
	bool cut = static_cast<uint64_t>(st.st_size) > max_bytes;
	off_t from = cut ? st.st_size - static_cast<off_t>(max_bytes) : 0;
	std::string text;
	text.resize(static_cast<size_t>(st.st_size - from));
	size_t got = 0;
	while (got < text.size()) {
		ssize_t n = ::pread(fd, text.data() + got, text.size() - got, from + static_cast<off_t>(got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += static_cast<size_t>(n);
	}
	::close(fd);
	text.resize(got);
	if (cut) {
		size_t nl = text.find('\n');
		text.erase(0, nl == std::string::npos ? text.size() : nl + 1);
	}
	JobLogScan scan = scan_job_log(text, max_findings);
	scan.cut = cut;
	return scan;
}

} // namespace loom::health
