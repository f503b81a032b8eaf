// jobcomp/health's adapter for Slurm 22.05's jobcomp interface
// (src/common/slurm_jobcomp.c: set_location(char *), log_record, get_jobs).
#include "plugins/jobcomp_health/jobcomp_api.hpp"

#pragma GCC visibility push(default)
extern "C" {

int jobcomp_p_set_location(char *location) { return loom::jobcomp_health::on_set_location(location); }
int jobcomp_p_log_record(job_record_t *job_ptr) { return loom::jobcomp_health::on_job_end(job_ptr); }
// No job history is kept here (sacct and JobComp storage are other plugins').
xlist *jobcomp_p_get_jobs(void *) { return nullptr; }

} // extern "C"
#pragma GCC visibility pop
