// loom health: the health configuration (etc/loom/health.conf).
//
// key=value lines parsed fail-closed by loom::ConfigSchema: an unknown key, a
// repeated key or a bad value is an error naming file, line, key and value,
// and the caller keeps its previous configuration. Defaults come from the
// field (see doc/loom-health.conf.5): Meta's gcm GPU temperature 84 C, Azure's
// H100 correctable-ECC limits 20,000,000 DRAM / 10,000 SRAM, any pending row
// remap or remap failure, any uncorrectable ECC error; NVIDIA's Xid mapping.
#pragma once

#include "lib/health/xid_table.hpp"
#include "lib/util/config.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace loom::health {

// What an InfiniBand hw_counter counts, for ib_hw_counters_suspect/_drain:
// link (lost or corrupted packets, transport retries: a bad cable, port or
// HCA), application (receive queues not replenished, access and length errors,
// flushed work: a job's doing, accepted but off by default), congestion and
// traffic (refused), unknown (refused: a typo would never match).
enum class IbHwCounterKind { link, application, congestion, traffic, unknown };
IbHwCounterKind ib_hw_counter_kind(std::string_view name);
std::map<std::string, int64_t> ib_hw_counters_suspect_default();

struct HealthConfig {
	// Collectors.
	std::vector<std::string> kernel_logs = {"/dev/kmsg", "/var/log/kern.log"};
	std::string syslog = "/var/log/syslog";
	std::string gpu_source = "auto";
	std::string nvml_library;
	// GPUs.
	int64_t gpu_count = 0; // 0: not checked
	double gpu_temp_suspect = 84, gpu_temp_drain = 95;
	double gpu_mem_temp_suspect = 95;
	int64_t ecc_dram_corr_suspect = 20000000, ecc_sram_corr_suspect = 10000;
	int64_t ecc_uncorr_drain = 1; // volatile uncorrectable errors that drain (0: off)
	int64_t retired_pages_drain = 10;
	bool remap_pending_drains = true;
	int64_t nvlink_errors_suspect = 1000; // replay+recovery+CRC per link (0: off)
	std::vector<std::string> throttle_suspect = {"hw_thermal", "sw_thermal"};
	int64_t pcie_replays_suspect = 0; // 0: off
	XidTable xids = XidTable::nvidia_default();
	// Network.
	int64_t ib_port_count = 0;     // 0: not checked
	double ib_rate_min = 0;        // Gb/s per InfiniBand port (0: off)
	int64_t ib_errors_suspect = 0; // sum of error counters per port (0: off)
	std::vector<std::string> ib_error_counters = {
		"symbol_error",    "link_error_recovery",         "link_downed",
		"port_rcv_errors", "local_link_integrity_errors", "excessive_buffer_overrun_errors"};
	// InfiniBand/RoCE hw_counters (mlx5) that count a bad link or HCA, per
	// port: counter -> value at which the node turns suspect / drains. The
	// defaults are ib_hw_counters_suspect_default(); congestion counters
	// (ECN, CNPs) are refused: they measure the fabric's load, not a fault.
	std::map<std::string, int64_t> ib_hw_counters_suspect = ib_hw_counters_suspect_default();
	std::map<std::string, int64_t> ib_hw_counters_drain;
	int64_t link_flaps_suspect = 2, link_flaps_drain = 5;
	std::vector<std::string> eth_carrier_required;
	// Host.
	int64_t edac_ce_suspect = 100;
	bool edac_ue_drains = true;
	bool mce_suspect = true;
	// What an unreadable collector means.
	std::string collector_error = "unknown"; // unknown, suspect, drain (never ok)
	// loom health check --drain.
	int64_t hold_down = 600; // seconds healthy before loom resumes its own drain
	std::string state_dir = "/var/lib/loom/health";
	std::string scontrol = "scontrol";
	int64_t scontrol_timeout = 10; // seconds
	// Predictor.
	int64_t history_len = 12;
	int64_t predict_horizon = 1800; // seconds ahead a trend may reach a threshold
	// loom health probe: NCCL all-reduce across the node's GPUs.
	double probe_allreduce_busbw_min = 100;              // GB/s bus bandwidth (0: data checked only)
	uint64_t probe_allreduce_size = uint64_t(256) << 20; // bytes per GPU
};

// The keys, bound to 'c'; read before parsing, its values are the defaults.
ConfigSchema health_config_schema(HealthConfig &c);
// Parse text (file contents) into a fresh config built on the defaults.
expected<HealthConfig> parse_health_config(std::string_view text, const std::string &name);
expected<HealthConfig> load_health_config(const std::string &path);
// The keys and their help, for `loom health config --keys` and the man page.
std::string describe_health_config();

} // namespace loom::health
