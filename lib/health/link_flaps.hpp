// loom health: link flaps (carrier lost/gained) from the kernel log and syslog.
//
// Recognises systemd-networkd's "ib6: lost carrier" / "ib6: Gained carrier",
// the kernel's "mlx5_core 0000:..: ib0: Link down" / "Link up", and
// "ibp12s0: link becomes ready"-style lines, counted per interface.
#pragma once

#include "lib/health/sample.hpp"

#include <string>
#include <vector>

namespace loom::health {

std::vector<LinkFlaps> count_link_flaps(const std::vector<std::string> &lines);

} // namespace loom::health
