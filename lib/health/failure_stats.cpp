#include "lib/health/failure_stats.hpp"

namespace loom::health {

void record_job(exchange::FailureStats &s, const JobEnd &job, const Classification &c,
		const std::map<std::string, std::string> &gpu_class_of, int64_t now)
{
	auto cls_of = [&](const std::string &n) {
		auto it = gpu_class_of.find(n);
		return it == gpu_class_of.end() || it->second.empty() ? std::string("none") : it->second;
	};
	double run = job.end_time > job.start_time ? static_cast<double>(job.end_time - job.start_time) : 0;
	for (const auto &n : job.nodes) {
		exchange::NodeStats &ns = s.nodes[n];
		// A node keeps the first GPU class a job saw on it ("none" only until one does).
		if (ns.gpu_class.empty() || ns.gpu_class == "none")
			ns.gpu_class = cls_of(n);
		ns.exposure_s += run;
		s.gpu_classes[ns.gpu_class].exposure_s += run;
	}
	if (is_infrastructure(c.cls)) {
		const char *name = failure_class_name(c.cls);
		if (c.culprits.empty()) {
			// Unattributed: one failure against the class of the job's first node.
			std::string gc = job.nodes.empty() ? std::string("none") : cls_of(job.nodes.front());
			auto &g = s.gpu_classes[gc];
			g.failures++;
			g.by_class[name]++;
			g.last_failure = now;
		}
		for (const auto &n : c.culprits) {
			exchange::NodeStats &ns = s.nodes[n];
			if (ns.gpu_class.empty())
				ns.gpu_class = cls_of(n);
			ns.failures++;
			ns.by_class[name]++;
			ns.last_failure = now;
			auto &g = s.gpu_classes[ns.gpu_class];
			g.failures++;
			g.by_class[name]++;
			g.last_failure = now;
		}
	}
	s.updated = now;
}

} // namespace loom::health
