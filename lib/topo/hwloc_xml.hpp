// loom topology: one node from an hwloc XML file (lstopo --of xml).
#pragma once

#include "lib/topo/build.hpp"
#include "lib/util/expected.hpp"

#include <string>
#include <string_view>

namespace loom::topo {

// NUMA nodes (cpuset, memory), NVIDIA GPUs (PCI class 0302/0300, vendor
// 10de; model from the NVML/CUDA OS device), HCAs (OS devices with a
// NodeGUID) and the NVLinkBandwidth matrix: bandwidth to a non-GPU object
// (an NVSwitch) marks an NVSwitch GPU, to a GPU a direct peer; links are
// counted at 25 GB/s each. The node is named after nothing: callers name it.
expected<NodeSpec> parse_hwloc_xml(std::string_view text, const std::string &source);

} // namespace loom::topo
