#include "lib/health/job_log.hpp"

#include "lib/util/fs.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace loom::health {
namespace {

bool host_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_'; }

// "Aug 17 06:18:01 n2 kernel: ..." -> "n2"; "" for any other line.
std::string syslog_host(std::string_view line)
{
	if (line.size() < 16 || !std::isupper(static_cast<unsigned char>(line[0])) || line[3] != ' ')
		return {};
	std::string_view rest = line.substr(4);
	size_t sp = rest.find_first_not_of(' ');
	rest = sp == std::string_view::npos ? std::string_view() : rest.substr(sp);
	size_t day = 0;
	while (day < rest.size() && std::isdigit(static_cast<unsigned char>(rest[day])))
		day++;
	if (day == 0 || day > 2 || day + 10 > rest.size() || rest[day] != ' ')
		return {};
	std::string_view clock = rest.substr(day + 1, 8);
	for (size_t i = 0; i < 8; i++)
		if ((i == 2 || i == 5) ? clock[i] != ':' : !std::isdigit(static_cast<unsigned char>(clock[i])))
			return {};
	rest = rest.substr(day + 9);
	if (rest.empty() || rest[0] != ' ')
		return {};
	rest.remove_prefix(1);
	size_t e = 0;
	while (e < rest.size() && host_char(rest[e]))
		e++;
	if (e == 0 || rest.substr(e, 9) != " kernel: ")
		return {};
	return std::string(rest.substr(0, e));
}

} // namespace

std::string host_of_line(std::string_view line)
{
	// srun -l labels each line with its task: "5: n3:4242:4290 [0] NCCL ..."
	size_t digits = line.find_first_not_of(' ');
	size_t label = digits == std::string_view::npos ? digits : line.find_first_not_of("0123456789", digits);
	if (label != std::string_view::npos && label > digits && line.substr(label, 2) == ": ")
		line.remove_prefix(label + 2);
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
	// syslog / journalctl: "Aug 17 06:18:01 n2 kernel: NVRM: Xid ..."
	if (std::string host = syslog_host(line); !host.empty())
		return host;
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

JobLogScan scan_job_log(std::string_view text, size_t max_findings, const XidTable &xids)
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
		if (!line.empty() && line.back() == '\r')
			line.remove_suffix(1);
		auto kind = error_kind_of_line(line, xids);
		if (!kind)
			continue;
		LogFinding f = error_kind_info(*kind).finding;
		scan.counts[f]++;
		if (scan.lines.size() < max_findings)
			scan.lines.push_back({f, *kind, lineno, host_of_line(line), std::string(line.substr(0, 300))});
	}
	return scan;
}

expected<JobLogScan> scan_job_log_file(const std::string &path, uint64_t max_bytes, size_t max_findings,
				       const XidTable &xids, uint64_t start)
{
	int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return unexpected(path, std::string("cannot open job log: ") + std::strerror(errno));
	struct stat st;
	if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		::close(fd);
		return unexpected(path, "not a regular file");
	}
	uint64_t size = static_cast<uint64_t>(st.st_size);
	start = std::min(start, size);
	bool cut = size - start > max_bytes;
	off_t from = static_cast<off_t>(cut ? size - max_bytes : start);
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
	JobLogScan scan = scan_job_log(text, max_findings, xids);
	scan.cut = cut;
	return scan;
}

} // namespace loom::health
