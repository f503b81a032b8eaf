// loom health: InfiniBand and RoCE ports.
//
// From /sys/class/infiniband/<dev>/ports/<n>/ (state, phys_state, rate,
// link_layer, counters/*, hw_counters/*) under a root path, or from `ibstat`
// text when that is what was recorded.
#pragma once

#include "lib/health/sample.hpp"
#include "lib/util/expected.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace loom::health {

// dir is the class directory itself (<root>/sys/class/infiniband). A missing
// directory is no error (a node without HCAs): the result is empty. A port
// whose state cannot be read is an error naming the file.
expected<std::vector<IbPort>> read_ib_sysfs(const std::string &dir);

// `ibstat` output: CA blocks with Port blocks.
expected<std::vector<IbPort>> parse_ibstat(std::string_view text, const std::string &source);

// "4: ACTIVE" -> "ACTIVE"; "5: LinkUp" -> "LinkUp"; "400 Gb/sec (4X NDR)" -> 400.
std::string strip_state_number(std::string_view text);
Reading parse_rate_gbps(std::string_view text);

} // namespace loom::health
