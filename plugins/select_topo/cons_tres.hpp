// The select/cons_tres plugin, loaded beside select/topo so that every select
// operation select/topo does not change is cons_tres's own.
#pragma once

#include "plugins/select_topo/slurm_internal.hpp"

#include <string>

namespace loom::select_topo {

// Function table of cons_tres, in the order of Slurm's node_select_syms[].
extern slurm_select_ops_t cons_tres_ops;

// Find select_cons_tres.so in PluginDir, load it (or take the copy Slurm has
// already loaded) and resolve all 36 operations. On failure, 'why' says what.
bool cons_tres_load(std::string &why);
// Undo cons_tres_load: run cons_tres's fini() if we ran its init().
void cons_tres_unload();

} // namespace loom::select_topo
