// loom's note in a job's SystemComment: what select/topo placed it as, for
// billing and reports per GPU tier, read back by jobcomp/health.
//
//   loom: class=h100 tier=value price_per_h=28.80
//
// class: the GPU class of its nodes (chosen by a tier, or named by the job);
// tier: the tier it asked for (absent without one); price_per_h: the price of
// its GPUs per hour at the class prices of loom-topo.conf when it started
// (absent where the classes are not priced). Whatever else slurmctld wrote in
// the comment is kept, "; "-separated; a newer note replaces an older one (a
// requeued job).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace loom::exchange {

struct JobNote {
	std::string gpu_class;   // "" = none
	std::string tier;        // "" = none
	double price_per_h = -1; // < 0 = not priced
};

// "loom: class=h100 tier=value price_per_h=28.80"
std::string format_job_note(const JobNote &n);
// The comment with the note put in (replacing a loom note already there).
std::string put_job_note(std::string_view comment, const JobNote &n);
// The note in a comment; nullopt when there is none or it does not parse.
std::optional<JobNote> find_job_note(std::string_view comment);

} // namespace loom::exchange
