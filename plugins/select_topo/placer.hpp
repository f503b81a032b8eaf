// select/topo: the placement engine inside slurmctld.
//
// Holds the fabric, the engine's free-capacity State and the map between
// Slurm's node table and the fabric model. Loaded when slurmctld builds its
// node table (select_p_node_init) and on `scontrol reconfigure`; a bad file at
// start is fatal, a bad file at reconfigure keeps the last good fabric.
// Every entry point catches everything: nothing throws into Slurm.
#pragma once

#include "plugins/select_topo/cons_tres.hpp"

#include <string>

namespace loom::select_topo {

// (Re)load the fabric and config. 'starting': no fabric is loaded yet.
// Returns false with 'why' when the files are bad.
bool placer_load(bool starting, std::string &why);
void placer_unload();
bool placer_loaded();

// What jobs hold may have changed. placer_note_change: anywhere (nodes or
// partitions were reconfigured, state restored): the next job_test reads the
// whole node table. placer_note_job: on the job's nodes (it was allocated,
// ended, resized, suspended or resumed), placer_note_node: on one node; the
// next job_test reads those nodes only. Never blocks on more than a short
// lock of its own, never throws.
void placer_note_change() noexcept;
void placer_note_job(const job_record_t *job) noexcept;
void placer_note_node(int index) noexcept;

// select_p_job_test for select/topo. Decides, then lets cons_tres allocate
// inside the chosen node set. 'tail' is the rest of Slurm's call, passed on.
int placer_job_test(job_record_t *job, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes, uint32_t req_nodes,
		    uint16_t mode, const JobTestTail &tail);

} // namespace loom::select_topo
