// What the jobcomp interface adapters (jobcomp_api_v*.cpp, one per family of
// Slurm releases, chosen by configure) call: the plugin's own handling of
// Slurm's two events, whatever the release names them.
#pragma once

#include "plugins/common/slurm_internal.hpp"

namespace loom::jobcomp_health {

// JobCompLoc is known (22.05 passes it, later releases leave it in
// slurm_conf.job_comp_loc): parse the options and start the worker.
int on_set_location(const char *location);
// A job ended (or was requeued): queue its record for the worker.
int on_job_end(job_record_t *job_ptr);

} // namespace loom::jobcomp_health
