// loom health: host sensors and memory from sysfs.
//
// hwmon temperatures, fans and voltages (/sys/class/hwmon), EDAC memory
// controller error counts (/sys/devices/system/edac/mc), and Ethernet
// carrier and error counters (/sys/class/net). Each reader takes the sysfs
// directory itself, so a recorded tree under a root path replays as is; a
// directory that does not exist gives an empty result (no such hardware).
#pragma once

#include "lib/health/sample.hpp"
#include "lib/util/expected.hpp"

#include <string>
#include <vector>

namespace loom::health {

expected<std::vector<HwmonSensor>> read_hwmon(const std::string &class_dir);
expected<std::vector<EdacController>> read_edac(const std::string &mc_dir);
// Interfaces whose names start with one of 'skip' prefixes are left out ("lo").
expected<std::vector<NetIface>> read_net(const std::string &class_dir,
					 const std::vector<std::string> &skip = {"lo"});

} // namespace loom::health
