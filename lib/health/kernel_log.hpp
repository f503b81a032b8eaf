// loom health: the kernel log as a source of GPU and host faults.
//
// Parses kernel log text in any of the forms it is usually found in (dmesg,
// `dmesg -T`, `dmesg --time-format iso` with facility/level prefixes, syslog,
// /dev/kmsg records): NVIDIA Xid lines with their PCI bus id, the "GPU at PCI"
// lines that name a GPU's UUID, machine-check/EDAC memory errors, OOM kills
// and crashes inside libnccl. Link flaps are in link_flaps.hpp.
#pragma once

#include "lib/health/sample.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loom::health {

struct KernelLog {
	std::vector<XidEvent> xids;
	std::vector<KernelEvent> events;
	std::map<std::string, std::string> uuid_by_pci; // "0000:9b:00" -> "GPU-5096..."
	std::vector<std::string> lines;                 // the message lines, for the link-flap scan
};

// One line: an Xid event, or nothing.
std::optional<XidEvent> parse_xid_line(std::string_view line);
// Whole text.
KernelLog parse_kernel_log(std::string_view text);

// Fill gpu_index of each event from the GPUs' bus ids; events on a bus id no
// GPU has keep -1. Returns how many events were mapped.
size_t map_xids_to_gpus(std::vector<XidEvent> &xids, const std::vector<GpuState> &gpus);

// Read the kernel log at path (relative to root unless root is empty) with
// read_file_bounded, within kernel_log_deadline_ms: /dev/kmsg as a character
// device is read record by record without blocking, what is there now (at
// most max_bytes of it), starting after sequence number *cursor when cursor
// is given (and updated); a regular file is read as text (the last max_bytes
// of it, from a line's start). A FIFO, a socket, a block device or a
// directory is an error naming the path, never a wait. Errors name the path.
inline constexpr uint32_t kernel_log_deadline_ms = 10000;
expected<std::string> read_kernel_log(const std::string &root, const std::string &path, uint64_t *cursor = nullptr,
				      uint64_t max_bytes = 16u << 20);

} // namespace loom::health
