// NCCL settings for one node from the cluster file (spank_place
// --comm-env=auto): NCCL_TOPO_FILE's content, written by the NCCL XML writer
// (nccl_xml.hpp), and NCCL_IB_HCA, the HCAs of the rails the node's GPUs use.
#pragma once

#include "lib/topo/model.hpp"
#include "lib/util/expected.hpp"

#include <string>
#include <string_view>

namespace loom::topo {

struct NcclEnv {
	std::string topo_xml; // "" when the fabric cannot describe the node to NCCL
	std::string no_topo;  // then: why
	// "=mlx5_0:1,mlx5_3:1": the nearest HCA of each GPU, in GPU order, each
	// once ('=': NCCL matches the names exactly, not as prefixes); without a
	// GPU-to-HCA pairing, the node's InfiniBand HCAs and those on a rail.
	// "" when the node has none.
	std::string ib_hca;
};

// An error when the node is not in the fabric, or when neither setting can
// be given (a fabric file with no GPU or HCA details of the node).
expected<NcclEnv> nccl_env(const Cluster &c, std::string_view node);

} // namespace loom::topo
