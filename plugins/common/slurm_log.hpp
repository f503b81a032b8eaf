// Route libloom's log sink into Slurm's own log (slurmctld.log, slurmd.log,
// the client's stderr), through the public slurm_info/slurm_error/slurm_debug.
#pragma once

namespace loom::plugin {

// prefix is the plugin_type ("select/topo"); every message reads "select/topo: ...".
void install_slurm_log_sink(const char *prefix);
void remove_slurm_log_sink();

} // namespace loom::plugin
