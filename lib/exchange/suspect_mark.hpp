// loom exchange: the suspect mark on a node.
//
// `loom health check --drain` marks a suspect node in its Extra field,
// "loom:suspect:<check>:<evidence>", or in its Comment when Extra holds
// someone else's note (lib/health/slurm_ops.hpp, drain.hpp); select/topo
// reads it from slurmctld's node table and places on such nodes last, and on
// a node whose mark is of a link check as on a degraded link of its leaf;
// jobcomp/health and the spare pool leave marked nodes alone.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace loom::exchange {

// "loom:suspect:<check>:<evidence>", one line, at most max_len characters.
std::string suspect_mark(std::string_view check, std::string_view evidence, size_t max_len = 200);
// Any text that starts "loom:suspect" (a mark by hand without a check counts).
bool is_loom_suspect_mark(std::string_view text);
// The checks loom health makes of a node's own fabric link (its ports'
// state, rate, error counters, flaps: health::judge_network's findings).
bool is_link_check(std::string_view check);
// A suspect mark whose check is one of the node's own fabric link
// (is_link_check): "loom:suspect:ib_errors:...".
bool is_link_suspect_mark(std::string_view text);

} // namespace loom::exchange
