// jobcomp/health's adapter for the jobcomp interface of Slurm 25.05 and newer
// (src/interfaces/jobcomp.c: set_location(void), record_job_end and
// record_job_start with an event, get_jobs).
#include "plugins/jobcomp_health/jobcomp_api.hpp"

#pragma GCC visibility push(default)
extern "C" {

int jobcomp_p_set_location(void) { return loom::jobcomp_health::on_set_location(slurm_conf.job_comp_loc); }
int jobcomp_p_record_job_end(job_record_t *job_ptr, uint32_t) { return loom::jobcomp_health::on_job_end(job_ptr); }
// A start changes nothing health judges.
int jobcomp_p_record_job_start(job_record_t *, uint32_t) { return SLURM_SUCCESS; }
// No job history is kept here (sacct and JobComp storage are other plugins').
xlist *jobcomp_p_get_jobs(slurmdb_job_cond_t *) { return nullptr; }

} // extern "C"
#pragma GCC visibility pop
