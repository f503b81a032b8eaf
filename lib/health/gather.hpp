// loom health: run every collector against one root path.
//
// The root is "/" on a live node and a recorded tree in tests and replays
// (like hwloc's HWLOC_FSROOT). Under a root the collectors read:
//   sys/class/infiniband/  sys/class/net/  sys/class/hwmon/
//   sys/devices/system/edac/mc/   proc/driver/nvidia/gpus/<bus>/information
//   the kernel log (kernel_log, default dev/kmsg, then var/log/kern.log)
//   syslog (default var/log/syslog) for link flaps written by systemd-networkd
//   GPUs: NVML on a live root; in a recorded root nvidia-smi-q.txt and
//   nvidia-smi-nvlink-status.txt (the outputs of `nvidia-smi -q` and
//   `nvidia-smi nvlink --status`), or ibstat.txt when there is no sysfs tree.
// A collector that fails records a CollectorError and the others still run.
#pragma once

#include "lib/health/sample.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::health {

struct GatherOptions {
	std::string root = "/";
	std::vector<std::string> kernel_logs = {"/dev/kmsg", "/var/log/kern.log"};
	std::string syslog = "/var/log/syslog";
	// auto: NVML on a live root, nvidia-smi-q.txt in a recorded one.
	std::string gpu_source = "auto"; // auto, nvml, nvidia-smi, none
	std::string nvidia_smi_file;     // explicit `nvidia-smi -q` text (overrides)
	std::string nvml_library;        // dlopen name; empty: libnvidia-ml.so.1
	// > 0: GPUs the node must show (health.conf gpu_count, else the node's
	// Gres in Slurm). Where GPUs are expected, or the NVIDIA driver is loaded
	// (proc/driver/nvidia under the root), no GPU data is a collector error.
	int expected_gpus = 0;
	// /dev/kmsg sequence number already judged (updated); nullptr: read all.
	uint64_t *kmsg_cursor = nullptr;
	bool live() const { return root.empty() || root == "/"; }
};

NodeSample gather(const GatherOptions &opt);

// The collector gather() is in now ("gpu", "kernel_log", "network", "host"),
// "" outside; a static string, safe to read from a signal handler.
const char *gather_stage();

} // namespace loom::health
