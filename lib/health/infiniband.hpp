// loom health: InfiniBand and RoCE ports.
//
// From /sys/class/infiniband/<dev>/ports/<n>/ (state, phys_state, rate,
// link_layer, counters/*, hw_counters/*) under a root path, or from `ibstat`
// text when that is what was recorded.
#pragma once

#include "lib/health/sample.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loom::health {

// dir is the class directory itself (<root>/sys/class/infiniband). A missing
// directory is no error (a node without HCAs): the result is empty. Files are
// read by the sysfs rules of host_sysfs.hpp: a port whose state is absent,
// unreadable or not "N: NAME" is an error naming the file and is left out; a
// counter that is not a clean count is an error naming the file and the
// value; rate and counters that the device does not implement (EINVAL,
// EOPNOTSUPP) are left out. Errors go to 'problems', the ports read are
// returned; the one-argument form returns the first problem as its error.
std::vector<IbPort> read_ib_sysfs(const std::string &dir, std::vector<Error> &problems);
expected<std::vector<IbPort>> read_ib_sysfs(const std::string &dir);

// `ibstat` output: CA blocks with Port blocks.
expected<std::vector<IbPort>> parse_ibstat(std::string_view text, const std::string &source);
// The ibstat text file at path, read within ibstat_max_bytes and the
// collectors' deadline (read_collector_file), then parsed.
inline constexpr uint64_t ibstat_max_bytes = 16u << 20;
expected<std::vector<IbPort>> read_ibstat(const std::string &path);

// "4: ACTIVE" -> "ACTIVE"; "5: LinkUp" -> "LinkUp"; "400 Gb/sec (4X NDR)" -> 400.
std::string strip_state_number(std::string_view text);
Reading parse_rate_gbps(std::string_view text);

} // namespace loom::health
