// loom topology: NCCL topology XML (NCCL_TOPO_FILE) of one node, in and out.
//
// In: <cpu numaid affinity> elements become NUMA nodes; PCI devices of class
// 0x0302xx (3D controller) are GPUs, of class 0x0207xx (InfiniBand) or
// 0x0200xx with a <nic> child are NICs. GPUs are numbered in document order.
// A GPU's nearest NIC is the NIC behind the same PCI bridge; NICs are rails
// in document order. <net> children give device name, port and speed.
// Out: the same shape, each GPU paired with its NIC under a virtual bridge as
// the Azure files do, under the <cpu> of its NUMA node.
#pragma once

#include "lib/topo/build.hpp"
#include "lib/util/expected.hpp"

#include <string>
#include <string_view>

namespace loom::topo {

expected<NodeSpec> parse_nccl_topology(std::string_view text, const std::string &source);
expected<std::string> write_nccl_topology(const Cluster &c, Index node);

// "0-3,8" <-> hex affinity masks as NCCL and Linux print them ("0000000f,...").
expected<std::string> cpulist_from_mask(std::string_view mask);
std::string mask_from_cpulist(std::string_view cpus);

} // namespace loom::topo
