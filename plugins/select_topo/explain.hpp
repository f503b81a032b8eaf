// select/topo: keep what each decision saw, so `loom place --explain`
// reproduces it outside slurmctld.
//
// On with DebugFlags=SelectType (or explain_dir= in loom-topo.conf). Per
// decision, in <explain_dir>/ (default <StateSaveLocation>/loom-place/):
//   cluster.json           the fabric the decision used (loom cluster file)
//   job_<id>.request       the request (loom-place(1) text form; nodes Slurm
//                          did not offer appear as exclude=)
//   job_<id>.state         the free capacity (loom place state file)
//   job_<id>.decision      the chosen nodes and the reason
// slurmctld's scheduling thread only formats strings and queues them; a
// worker thread writes the files (never blocking the scheduler), and the
// newest 500 decisions are kept.
#pragma once

#include <string>

namespace loom::select_topo {

// A new fabric: the next decision's files refer to this cluster file text.
void explain_fabric(const std::string &dir, std::string cluster_json);
void explain_decision(const std::string &dir, uint32_t job_id, std::string request, std::string state,
		      std::string decision);
// Any other file select/topo publishes (the spare pool), by the same writer.
void write_async(const std::string &path, std::string text);
// Stop the writer thread, writing what is queued (plugin fini).
void explain_stop();

} // namespace loom::select_topo
