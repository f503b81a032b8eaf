// loom topology (internal): build_cluster's second half, the nodes
// (build_nodes.cpp); build.cpp builds the domains, rails and NVLink domains.
#pragma once

#include "lib/topo/build.hpp"
#include "lib/util/expected.hpp"

#include <string>

namespace loom::topo {

// A name as build errors quote it: 'name'.
inline std::string quoted(const std::string &s) { return "'" + s + "'"; }

// The nodes of spec into c, whose domains, rails and NVLink domains are
// built: each node checked (a duplicate, a dangling domain or NVLink domain,
// a NIC on a rail switch of another domain, its own GPUs, NICs and NUMA
// nodes), the nodes in depth-first order (those in no domain first, where
// the cluster has no domains), then the domains' node ranges and GPU counts,
// the ancestor table and each NVLink domain's nodes.
status build_nodes(const ClusterSpec &spec, Cluster &c);

} // namespace loom::topo
