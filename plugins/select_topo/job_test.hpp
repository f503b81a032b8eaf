// select/topo: select_p_job_test over a Snapshot (as cons_tres's job_test.c).
//
// RUN_NOW: the engine ranks node sets for the whole gang and cons_tres is
// asked to allocate inside each in turn. WILL_RUN (backfill's plan, with
// will_run=engine): the engine's nodes at cons_tres's start time. TEST_ONLY:
// cons_tres's answer, after lib/place's submit checks of a locality hint. What
// is decided is lib/place's (admit.hpp, gpu_class.hpp, slurm_policy.hpp);
// this file converts Slurm's call and logs the outcome.
#pragma once

#include "plugins/select_topo/cons_tres.hpp"
#include "plugins/select_topo/snapshot.hpp"

namespace loom::select_topo {

// Called with the placer's lock held. May throw: the caller catches.
int topo_job_test(Snapshot &s, job_record_t *job, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
		  uint32_t req_nodes, uint16_t mode, const JobTestTail &tail);

} // namespace loom::select_topo
