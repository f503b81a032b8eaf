// loom ckpt: when to checkpoint.
//
// Young (1974): T = sqrt(2CM). Daly (2006), for C < 2M:
//   T = sqrt(2CM) * [1 + (1/3) sqrt(C/2M) + (1/9) (C/2M)] - C,  else T = M,
// with C the time to write a checkpoint and M the job's mean time between
// failures. A job's MTBF over n nodes is 1 / sum(1/M_node).
//
// The job's MTBF comes from the failure statistics jobcomp/health writes:
// exchange::job_mtbf (lib/exchange/failure_stats.hpp), the one reader of that file.
#pragma once

#include <cstdint>

namespace loom::ckpt {

double young_interval(double cost_s, double mtbf_s);
double daly_interval(double cost_s, double mtbf_s);

struct IntervalBounds {
	int64_t min_s = 300;
	int64_t max_s = 6 * 3600;
};
// Daly's interval, rounded to whole seconds and clamped to the bounds.
int64_t auto_interval(double cost_s, double mtbf_s, IntervalBounds b);

// How long before the time limit to ask for the last checkpoint: twice the
// last measured write plus 10 s, never less than min_s.
int64_t time_limit_margin(double last_write_s, int64_t min_s);

} // namespace loom::ckpt
