// loom health: `nvidia-smi -q` and `nvidia-smi nvlink --status` text.
//
// The second GPU source beside NVML (and the one recorded machines come as).
// The text is an indented tree of "Key : Value" lines; each "GPU <bus id>"
// block becomes one GpuState. "N/A" and missing values stay empty. A report
// that announces more GPUs than it describes (cut short), or a GPU block with
// no UUID, is an error: partial data must not pass for a healthy node.
#pragma once

#include "lib/health/sample.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loom::health {

struct NvidiaSmiReport {
	std::string driver_version, cuda_version;
	int attached = -1; // "Attached GPUs", -1 when absent
	std::vector<GpuState> gpus;
};

// 'source' names the text in errors (a path).
expected<NvidiaSmiReport> parse_nvidia_smi_q(std::string_view text, const std::string &source);

// `nvidia-smi nvlink --status`: fills nvlinks of the GPUs by index (GPUs not
// yet in 'gpus' are added). "<inactive>" links and NVML's "all links are
// inactive" line give inactive links; returns the number of links read.
expected<size_t> parse_nvlink_status(std::string_view text, const std::string &source, std::vector<GpuState> &gpus);

// The same from the files at path, read within nvidia_smi_max_bytes and the
// collectors' deadline (read_collector_file: a FIFO or a device in their
// place is an error naming the path, never a wait).
inline constexpr uint64_t nvidia_smi_max_bytes = 64u << 20;
expected<NvidiaSmiReport> read_nvidia_smi_q(const std::string &path);
expected<size_t> read_nvlink_status(const std::string &path, std::vector<GpuState> &gpus);

} // namespace loom::health
