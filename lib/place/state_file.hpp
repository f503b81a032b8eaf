// loom placement: the state file, so that any decision can be replayed.
//
// The select/topo plugin writes the State it decided on (write_state) next to
// the request (format_request); `loom place --explain --state FILE` reads it
// back over the same cluster file and gives the same answer. The format, one
// node or hostlist per line, '#' comments; nodes not listed are idle, up and
// healthy:
//
//   # loom place state 1
//   gpu[001-004] used_gpus=8 used_cores=112
//   gpu005 used_gpus=2 used_cores=16 suspect=yes health=0.6
//   gpu006 down=yes
//   gpu007 gpus=4 cores=64         (capacity as Slurm sees it, when it differs)
//
// Keys: used_gpus, used_cores, gpus, cores, health (0..1), suspect, link_suspect
// (the node's own link looks degraded: its leaf counts it), down.
// An unknown node, key or bad value is an error naming the line.
#pragma once

#include "lib/place/state.hpp"
#include "lib/util/expected.hpp"

#include <string>
#include <string_view>

namespace loom::place {

// Apply the lines to a state (on error the state may hold part of them:
// read into a fresh State and adopt it only on success).
status apply_state(State &state, std::string_view text, const std::string &source);
expected<State> read_state(const topo::Cluster &cluster, std::string_view text, const std::string &source);
expected<State> load_state_file(const topo::Cluster &cluster, const std::string &path);
// Every node that is not idle, up, healthy and at model capacity.
std::string write_state(const State &state);

} // namespace loom::place
