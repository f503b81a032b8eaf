// loom health: host sensors and memory from sysfs, and the rules every sysfs
// reader of loom health (this one and infiniband.hpp) reads attributes by.
//
// hwmon temperatures, fans and voltages (/sys/class/hwmon), EDAC memory
// controller error counts (/sys/devices/system/edac/mc), and Ethernet
// carrier and error counters (/sys/class/net). Each reader takes the sysfs
// directory itself, so a recorded tree under a root path replays as is; a
// directory that does not exist gives an empty result (no such hardware).
//
// One attribute file is taken by these rules (garbage is never healthy):
//  - Absent (ENOENT, ENOTDIR): the hardware or kernel has no such attribute;
//    the value is left out, no error. Required files are the exceptions: an
//    InfiniBand port's state, and at least one of an EDAC controller's
//    ce_count and ue_count.
//  - Present but not a clean value: a collector error naming the file and
//    the value ("sys/class/hwmon/hwmon3/temp1_input: 'abc' is not a
//    number"), and the value is left out. Clean is one decimal integer and
//    ASCII white space around it, within 64 bits; counters (EDAC, net
//    statistics, InfiniBand counters) are not negative; carrier is 0 or 1.
//    An empty file is not clean. Text attributes must be one of the words
//    the kernel writes there (operstate, InfiniBand state, link_layer, rate).
//  - Present, but read() fails: an error naming the file and the errno,
//    except the errnos the kernel uses for "no value now" in that kind of
//    file, which leave the value out as if absent:
//      hwmon *_input, limits, alarms  ENODATA EIO ENXIO EAGAIN ENODEV EOPNOTSUPP
//                                     (a sensor not fitted, faulted, or a chip
//                                     that did not answer this time)
//      net carrier                    EINVAL (interface down: operstate says so)
//      InfiniBand rate, counters/*,   EINVAL EOPNOTSUPP (a speed or PMA counter
//      hw_counters/*                  the device does not implement: RoCE)
//      EDAC counts, net statistics,   none: these always read
//      InfiniBand state, phys_state,
//      link_layer, hwmon name, label
//  - Not a regular file (a FIFO, socket, device, directory) or over
//    sysfs_max_bytes: an error (read_file_bounded's refusal); every read has
//    sysfs_deadline_ms, and sysfs files are read to EOF (st_size says 4096).
//
// Each reader appends the errors to 'problems' and returns what it could
// read. The older one-argument forms return the first problem as their error
// (with how many more there were) and nothing else.
#pragma once

#include "lib/health/sample.hpp"
#include "lib/util/expected.hpp"
#include "lib/util/fs.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace loom::health {

std::vector<HwmonSensor> read_hwmon(const std::string &class_dir, std::vector<Error> &problems);
std::vector<EdacController> read_edac(const std::string &mc_dir, std::vector<Error> &problems);
// Interfaces whose names start with one of 'skip' prefixes are left out ("lo").
std::vector<NetIface> read_net(const std::string &class_dir, const std::vector<std::string> &skip,
			       std::vector<Error> &problems);

expected<std::vector<HwmonSensor>> read_hwmon(const std::string &class_dir);
expected<std::vector<EdacController>> read_edac(const std::string &mc_dir);
expected<std::vector<NetIface>> read_net(const std::string &class_dir, const std::vector<std::string> &skip = {"lo"});

// The bounds of every sysfs attribute read, and of the other files the
// collectors read (nvidia-smi text, ibstat text, /proc/driver/nvidia).
inline constexpr uint64_t sysfs_max_bytes = 64u << 10;
inline constexpr uint32_t sysfs_deadline_ms = 2000;
inline constexpr uint32_t collector_file_deadline_ms = 10000;
// A collector's text file: read_file_bounded with max_bytes (an error above
// it) and collector_file_deadline_ms.
expected<std::string> read_collector_file(const std::string &path, uint64_t max_bytes);

// "12\n" -> 12. The error (no 'where') says what the text is instead.
expected<int64_t> parse_sysfs_int(std::string_view text);
expected<uint64_t> parse_sysfs_count(std::string_view text);
// The first problem, with how many more there were, as one error.
Error first_of(const std::vector<Error> &problems);

// One attribute by the rules above: nullopt when absent or in error (the
// error appended to 'problems'). 'no_value' are the errnos that mean "no
// value now" for this kind of file.
class SysfsAttrs {
public:
	explicit SysfsAttrs(std::vector<Error> &problems) : problems_(problems) {}
	// The trimmed text.
	std::optional<std::string> text(const std::string &path, std::span<const int> no_value = {});
	std::optional<int64_t> integer(const std::string &path, std::span<const int> no_value = {});
	std::optional<uint64_t> count(const std::string &path, std::span<const int> no_value = {});
	// A count as the samples hold it (Count: at most INT64_MAX).
	Count counter(const std::string &path, std::span<const int> no_value = {});
	// A value read but not clean: "<path>: '<value>' <what>".
	void bad(const std::string &path, std::string_view value, const std::string &what);
	// "<path>: <message>".
	void problem(const std::string &path, const std::string &message);
	size_t problems() const { return problems_.size(); }

private:
	std::vector<Error> &problems_;
};

} // namespace loom::health
