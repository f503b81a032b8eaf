// Fuzz target: the job-log scanner and the classifier over what it finds.
#include "lib/health/classify.hpp"
#include "lib/health/job_log.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	std::string_view text(reinterpret_cast<const char *>(data), size);
	loom::health::JobLogScan scan = loom::health::scan_job_log(text, 50);
	if (scan.lines.size() > 50)
		__builtin_trap();
	loom::health::JobEnd job;
	job.job_id = 1;
	job.state = "FAILED";
	job.exit_code = 1;
	job.nodes = {"n1", "n2", "n3"};
	auto c = loom::health::classify_job(job, scan);
	for (const auto &n : c.culprits)
		if (n != "n1" && n != "n2" && n != "n3")
			__builtin_trap(); // a culprit is always one of the job's nodes
	(void)loom::health::decide_job(job, c, 3);
	(void)loom::health::expand_output_path(std::string(text.substr(0, 200)), "/w", 1, "u", "x", "n1");
	return 0;
}
