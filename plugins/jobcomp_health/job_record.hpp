// jobcomp/health: Slurm's job_record_t -> loom's JobRecord (Slurm-free).
// Called from jobcomp_p_log_record with slurmctld's job lock held: it copies
// fields and expands the node list, nothing else (no I/O, no lookups).
#pragma once

#include "lib/health/jobcomp.hpp"

struct job_record;

namespace loom::jobcomp_health {

health::JobRecord to_job_record(const struct job_record *job);

} // namespace loom::jobcomp_health
