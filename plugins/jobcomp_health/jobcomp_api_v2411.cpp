// jobcomp/health's adapter for Slurm 24.11's jobcomp interface
// (src/interfaces/jobcomp.c: set_location(void) with JobCompLoc in slurm_conf,
// log_record, get_jobs).
#include "plugins/jobcomp_health/jobcomp_api.hpp"

#pragma GCC visibility push(default)
extern "C" {

int jobcomp_p_set_location(void) { return loom::jobcomp_health::on_set_location(slurm_conf.job_comp_loc); }
int jobcomp_p_log_record(job_record_t *job_ptr) { return loom::jobcomp_health::on_job_end(job_ptr); }
// No job history is kept here (sacct and JobComp storage are other plugins').
xlist *jobcomp_p_get_jobs(slurmdb_job_cond_t *) { return nullptr; }

} // extern "C"
#pragma GCC visibility pop
