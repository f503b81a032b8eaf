// loom health: what the collectors gather about one node.
//
// Plain data, nothing judged here (LBNL NHC's "gather, then judge"): each
// collector fills its part of a NodeSample from a root path, and the rules in
// rules.hpp are pure functions over it. A value a source did not report
// (nvidia-smi's "N/A", a missing sysfs file) is an empty std::optional, never 0.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace loom::health {

using Count = std::optional<int64_t>;
using Reading = std::optional<double>;

// One NVIDIA Xid event from the kernel log ("NVRM: Xid (PCI:0000:9b:00): 119, ...")
// or NVML's event API.
struct XidEvent {
	int xid = 0;
	std::string pci_bus; // normalised "dddd:bb:dd" (see normalize_pci), may be empty
	int gpu_index = -1;  // -1 when the bus id maps to no known GPU
	std::string time;    // the log's own timestamp text, as written
	std::string process; // "pid=1248209, name=python3.10" part, may be empty
	std::string message; // the rest of the line after the Xid number
};

struct NvLinkState {
	int link = 0;
	bool active = false;
	Count replay_errors, recovery_errors, crc_errors;
};

// One GPU, from NVML or from `nvidia-smi -q`.
struct GpuState {
	int index = -1;      // minor number / NVML index
	std::string pci_bus; // normalised
	std::string uuid, name, serial;
	Reading temp_c, mem_temp_c, slowdown_temp_c, power_w, power_limit_w;
	Count sm_clock_mhz, max_sm_clock_mhz;
	// Clock event (throttle) reasons that are active.
	bool hw_slowdown = false, hw_thermal_slowdown = false, hw_power_brake = false;
	bool sw_thermal_slowdown = false, sw_power_cap = false;
	// ECC counters: volatile (since driver load) and aggregate (lifetime).
	Count ecc_vol_sram_corr, ecc_vol_sram_uncorr, ecc_vol_dram_corr, ecc_vol_dram_uncorr;
	Count ecc_agg_sram_corr, ecc_agg_sram_uncorr, ecc_agg_dram_corr, ecc_agg_dram_uncorr;
	// Page retirement (pre-Ampere) and row remapping (Ampere and later).
	Count retired_sbe, retired_dbe;
	std::optional<bool> retired_pending;
	Count remap_corr, remap_uncorr;
	std::optional<bool> remap_pending, remap_failure;
	std::optional<bool> reset_required;
	Count pcie_replays;
	std::vector<NvLinkState> nvlinks;
	bool nvlink_reported = false; // a source described this GPU's NVLinks (maybe: none up)
};

// One InfiniBand/RoCE port from /sys/class/infiniband (or ibstat text).
struct IbPort {
	std::string device; // mlx5_0
	int port = 1;
	std::string state;      // ACTIVE, DOWN, INIT, ARMED (upper case, no number)
	std::string phys_state; // LinkUp, Polling, Disabled ...
	Reading rate_gbps;
	std::string link_layer;                      // InfiniBand or Ethernet
	std::map<std::string, uint64_t> counters;    // ports/N/counters/*
	std::map<std::string, uint64_t> hw_counters; // ports/N/hw_counters/*
};

// Carrier changes of one interface seen in the kernel log / syslog.
struct LinkFlaps {
	std::string iface;
	int lost = 0, gained = 0;
	std::string first_time, last_time;
};

// An Ethernet (or IPoIB) interface from /sys/class/net.
struct NetIface {
	std::string name;
	std::optional<bool> carrier;
	std::string operstate;
	Count carrier_changes, rx_errors, tx_errors, rx_dropped;
};

// One hwmon sensor, in SI units: degrees C, RPM, volts.
struct HwmonSensor {
	std::string chip;  // hwmon "name", e.g. coretemp
	std::string kind;  // temp, fan, in
	std::string label; // label file or "temp1"
	double value = 0;
	Reading crit, max, min;
	bool alarm = false;
};

// One EDAC memory controller.
struct EdacController {
	std::string name; // mc0
	Count corrected, uncorrected;
};

// Kernel-log lines that are not Xids but matter (memory errors, OOM kills).
struct KernelEvent {
	std::string kind; // mce, edac_ce, edac_ue, oom_kill, segfault_nccl
	std::string time, text;
};

struct CollectorError {
	std::string collector, message;
};

struct NodeSample {
	std::string root;
	std::string gpu_source; // "nvml", "nvidia-smi" or "" (no GPU data)
	std::vector<GpuState> gpus;
	std::vector<XidEvent> xids;
	std::vector<KernelEvent> kernel_events;
	std::vector<IbPort> ib_ports;
	std::vector<LinkFlaps> flaps;
	std::vector<NetIface> net;
	std::vector<HwmonSensor> hwmon;
	std::vector<EdacController> edac;
	std::vector<CollectorError> errors;
	std::map<std::string, double> collect_ms; // per collector, wall time
};

// "PCI:0000:9B:00", "00000000:9b:00.0", "0000:9b:00.0" -> "0000:9b:00";
// empty when the text is not a PCI address.
std::string normalize_pci(std::string_view text);

} // namespace loom::health
