#include "lib/health/config.hpp"

#include "lib/util/fs.hpp"

#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>

namespace loom::health {
namespace {

struct HwCounter {
	const char *name;
	IbHwCounterKind kind;
	int64_t suspect; // default limit (0: off)
};

// mlx5 hw_counters (drivers/infiniband/hw/mlx5/counters.c). The link ones
// count lost or corrupted packets and transport retries; on a lossless
// fabric that is a bad cable, port or HCA on the path. They rise too on a
// node whose peer died (its QPs time out and retry), and they run from the
// driver's load, hence the margins: a site sets its own from its fleet.
const HwCounter hw_counters[] = {
	{"local_ack_timeout_err", IbHwCounterKind::link, 1000},         // ACK timer expired, request retransmitted
	{"req_transport_retries_exceeded", IbHwCounterKind::link, 100}, // retries ran out: a QP (a job) failed
	{"packet_seq_err", IbHwCounterKind::link, 10000},               // NAK for a sequence gap received
	{"implied_nak_seq_err", IbHwCounterKind::link, 10000},          // a response skipped ahead: lost packets
	{"duplicate_request", IbHwCounterKind::link, 10000},            // a request executed before came again
	{"rx_icrc_encapsulated", IbHwCounterKind::link, 100},           // RoCE packets with a bad ICRC: corrupted
	// Loss as well, but normal with adaptive routing (packets out of order)
	// or RoCE's adaptive retransmission: accepted, off by default.
	{"out_of_sequence", IbHwCounterKind::link, 0},
	{"roce_adp_retrans", IbHwCounterKind::link, 0},
	{"roce_adp_retrans_to", IbHwCounterKind::link, 0},
	// The application's doing: receive queues not replenished (RNR NAKs,
	// drops for want of a receive WQE), bad lengths or keys, work flushed
	// after a QP error. Accepted, off by default.
	{"out_of_buffer", IbHwCounterKind::application, 0},
	{"rnr_nak_retry_err", IbHwCounterKind::application, 0},
	{"req_rnr_retries_exceeded", IbHwCounterKind::application, 0},
	{"req_cqe_error", IbHwCounterKind::application, 0},
	{"resp_cqe_error", IbHwCounterKind::application, 0},
	{"req_cqe_flush_error", IbHwCounterKind::application, 0},
	{"resp_cqe_flush_error", IbHwCounterKind::application, 0},
	{"resp_local_length_error", IbHwCounterKind::application, 0},
	{"req_remote_access_errors", IbHwCounterKind::application, 0},
	{"resp_remote_access_errors", IbHwCounterKind::application, 0},
	{"req_remote_invalid_request", IbHwCounterKind::application, 0},
	// Congestion control (ECN marks, CNPs, rate reduction): load, not faults.
	{"np_cnp_sent", IbHwCounterKind::congestion, 0},
	{"np_ecn_marked_roce_packets", IbHwCounterKind::congestion, 0},
	{"rp_cnp_handled", IbHwCounterKind::congestion, 0},
	{"rp_cnp_ignored", IbHwCounterKind::congestion, 0},
	{"roce_slow_restart", IbHwCounterKind::congestion, 0},
	{"roce_slow_restart_cnps", IbHwCounterKind::congestion, 0},
	{"roce_slow_restart_trans", IbHwCounterKind::congestion, 0},
	{"cc_rx_ce_pkts", IbHwCounterKind::congestion, 0},
	// Traffic and settings.
	{"rx_write_requests", IbHwCounterKind::traffic, 0},
	{"rx_read_requests", IbHwCounterKind::traffic, 0},
	{"rx_atomic_requests", IbHwCounterKind::traffic, 0},
	{"rx_dct_connect", IbHwCounterKind::traffic, 0},
	{"lifespan", IbHwCounterKind::traffic, 0},
};

// "counter:limit,..." over the limits already there (the defaults): a
// limit of 0 turns that counter off, "none" turns them all off.
ConfigSchema::Setter hw_counter_limits(std::map<std::string, int64_t> *out)
{
	return [=](std::string_view v) -> status {
		if (v == "none") {
			out->clear();
			return ok();
		}
		std::map<std::string, int64_t> given;
		size_t start = 0;
		while (start <= v.size()) {
			size_t comma = v.find(',', start);
			if (comma == std::string_view::npos)
				comma = v.size();
			std::string_view item = v.substr(start, comma - start);
			start = comma + 1;
			size_t colon = item.find(':');
			if (colon == std::string_view::npos || colon == 0)
				return unexpected("expected counter:limit items (or none), got '" + std::string(item) +
						  "'");
			std::string name(item.substr(0, colon));
			switch (ib_hw_counter_kind(name)) {
			case IbHwCounterKind::link:
			case IbHwCounterKind::application:
				break;
			case IbHwCounterKind::congestion:
				return unexpected("'" + name + "' counts congestion (ECN marks, CNPs), not a fault");
			case IbHwCounterKind::traffic:
				return unexpected("'" + name + "' counts traffic, not errors");
			case IbHwCounterKind::unknown: {
				std::string known;
				for (const auto &h : hw_counters)
					if (h.kind == IbHwCounterKind::link || h.kind == IbHwCounterKind::application)
						known += (known.empty() ? "" : ", ") + std::string(h.name);
				return unexpected("unknown hw_counter '" + name + "' (known: " + known + ")");
			}
			}
			auto limit = parse_int(item.substr(colon + 1), 0, INT64_MAX);
			if (!limit)
				return unexpected("'" + name + "': " + limit.error().str());
			if (!given.emplace(name, *limit).second)
				return unexpected("'" + name + "' given twice");
		}
		for (const auto &[name, limit] : given) {
			if (limit == 0)
				out->erase(name);
			else
				(*out)[name] = limit;
		}
		return ok();
	};
}

ConfigSchema::Setter xid_list(HealthConfig *c, XidAction a, std::shared_ptr<std::map<int, XidAction>> claimed)
{
	return [=](std::string_view v) -> status {
		std::vector<std::string> words;
		size_t start = 0;
		std::string s(v);
		while (start <= s.size()) {
			size_t comma = s.find(',', start);
			std::string w(trim(std::string_view(s).substr(
				start, comma == std::string::npos ? std::string::npos : comma - start)));
			if (w.empty())
				return unexpected("empty Xid in list");
			words.push_back(w);
			if (comma == std::string::npos)
				break;
			start = comma + 1;
		}
		return c->xids.assign(a, words, *claimed);
	};
}

ConfigSchema schema(HealthConfig &c, std::shared_ptr<std::map<int, XidAction>> claimed)
{
	ConfigSchema s;
	s.list("kernel_log", &c.kernel_logs, "kernel log paths tried in order (/dev/kmsg is read as records)")
		.string("syslog", &c.syslog, "syslog file scanned for link flaps (empty: none)")
		.choice("gpu_source", &c.gpu_source, {"auto", "nvml", "nvidia-smi", "none"},
			"where GPU state comes from")
		.string("nvml_library", &c.nvml_library, "NVML library for dlopen (default libnvidia-ml.so.1)")
		.integer("gpu_count", &c.gpu_count, 0, 1024,
			 "GPUs the node must show (0: its GPU count in Slurm's Gres)")
		.real("gpu_temp_suspect", &c.gpu_temp_suspect, 0, 200,
		      "GPU temperature (C) that makes the node suspect")
		.real("gpu_temp_drain", &c.gpu_temp_drain, 0, 200, "GPU temperature (C) that drains")
		.real("gpu_mem_temp_suspect", &c.gpu_mem_temp_suspect, 0, 200,
		      "HBM temperature (C) that makes the node suspect")
		.integer("ecc_dram_corr_suspect", &c.ecc_dram_corr_suspect, 0, INT64_MAX,
			 "aggregate correctable DRAM ECC errors per GPU that make the node suspect (0: off)")
		.integer("ecc_sram_corr_suspect", &c.ecc_sram_corr_suspect, 0, INT64_MAX,
			 "aggregate correctable SRAM ECC errors per GPU that make the node suspect (0: off)")
		.integer("ecc_uncorr_drain", &c.ecc_uncorr_drain, 0, INT64_MAX,
			 "volatile uncorrectable ECC errors per GPU that drain (0: off)")
		.integer("retired_pages_drain", &c.retired_pages_drain, 0, 100000,
			 "retired pages (single+double bit) per GPU that drain (0: off)")
		.boolean("remap_pending_drains", &c.remap_pending_drains,
			 "a pending row remap or page retirement drains (the GPU needs a reset)")
		.integer("nvlink_errors_suspect", &c.nvlink_errors_suspect, 0, INT64_MAX,
			 "NVLink replay+recovery+CRC errors per link that make the node suspect (0: off)")
		.list("throttle_suspect", &c.throttle_suspect,
		      "clock throttle reasons that make the node suspect: hw_slowdown, hw_thermal, hw_power_brake, "
		      "sw_thermal, sw_power_cap")
		.integer("pcie_replays_suspect", &c.pcie_replays_suspect, 0, INT64_MAX,
			 "PCIe replays per GPU that make the node suspect (0: off)")
		.add("xid_default", "action for an Xid no list names", [&c](std::string_view v) -> status {
			auto a = parse_xid_action(v);
			if (!a)
				return unexpected(a.error());
			c.xids.set_fallback(*a);
			return ok();
		});
	for (XidAction a : {XidAction::ignore, XidAction::restart_app, XidAction::suspect, XidAction::reset_gpu,
			    XidAction::reboot, XidAction::drain})
		s.add(std::string("xid_") + xid_action_name(a),
		      std::string("comma-separated Xids whose action is ") + xid_action_name(a),
		      xid_list(&c, a, claimed));
	s.integer("ib_port_count", &c.ib_port_count, 0, 1024,
		  "InfiniBand/RoCE ports the node must show (0: not checked)")
		.real("ib_rate_min", &c.ib_rate_min, 0, 100000, "lowest acceptable port rate in Gb/s (0: off)")
		.integer("ib_errors_suspect", &c.ib_errors_suspect, 0, INT64_MAX,
			 "sum of ib_error_counters per port that makes the node suspect (0: off)")
		.list("ib_error_counters", &c.ib_error_counters, "counters summed by ib_errors_suspect")
		.add("ib_hw_counters_suspect",
		     "hw_counters per port that make the node suspect, counter:limit,... over the defaults "
		     "(limit 0: off; none: all off)",
		     hw_counter_limits(&c.ib_hw_counters_suspect))
		.add("ib_hw_counters_drain", "hw_counters per port that drain, counter:limit,... (default none)",
		     hw_counter_limits(&c.ib_hw_counters_drain))
		.integer("link_flaps_suspect", &c.link_flaps_suspect, 0, 100000,
			 "carrier losses per interface in the logs that make the node suspect (0: off)")
		.integer("link_flaps_drain", &c.link_flaps_drain, 0, 100000,
			 "carrier losses per interface in the logs that drain (0: off)")
		.list("eth_carrier_required", &c.eth_carrier_required, "interfaces that must have carrier")
		.integer("edac_ce_suspect", &c.edac_ce_suspect, 0, INT64_MAX,
			 "corrected memory errors per controller that make the node suspect (0: off)")
		.boolean("edac_ue_drains", &c.edac_ue_drains, "an uncorrected memory error drains")
		.boolean("mce_suspect", &c.mce_suspect, "a machine-check (Hardware Error) line makes the node suspect")
		.choice("collector_error", &c.collector_error, {"unknown", "suspect", "drain"},
			"outcome when a collector cannot read its source (never ok)")
		.duration("hold_down", &c.hold_down, 0, 30 * 86400,
			  "how long a node loom drained must stay healthy before loom resumes it")
		.string("state_dir", &c.state_dir, "directory for hold-down state, the suspect flag and history")
		.string("scontrol", &c.scontrol, "scontrol command used by --drain")
		.duration("scontrol_timeout", &c.scontrol_timeout, 1, 600, "time limit for one scontrol call")
		.integer("history_len", &c.history_len, 3, 1000, "samples the predictor keeps per node")
		.duration("predict_horizon", &c.predict_horizon, 60, 7 * 86400,
			  "how far ahead a trend may reach a threshold before the node turns suspect")
		.real("probe_allreduce_busbw_min", &c.probe_allreduce_busbw_min, 0, 100000,
		      "NCCL all-reduce bus bandwidth in GB/s that loom health probe passes (0: data checked only)")
		.size("probe_allreduce_size", &c.probe_allreduce_size,
		      "bytes per GPU of loom health probe's all-reduce (1M to 64G, whole floats)");
	return s;
}

} // namespace

ConfigSchema health_config_schema(HealthConfig &c) { return schema(c, std::make_shared<std::map<int, XidAction>>()); }

expected<HealthConfig> parse_health_config(std::string_view text, const std::string &name)
{
	HealthConfig c;
	auto claimed = std::make_shared<std::map<int, XidAction>>();
	ConfigSchema s = schema(c, claimed);
	if (auto st = s.parse_text(text, name); !st)
		return unexpected(st.error());
	static const char *reasons[] = {"hw_slowdown", "hw_thermal", "hw_power_brake", "sw_thermal", "sw_power_cap"};
	for (const auto &r : c.throttle_suspect) {
		bool known = false;
		for (const char *k : reasons)
			known |= r == k;
		if (!known)
			return unexpected(name, "key 'throttle_suspect': unknown throttle reason '" + r + "'");
	}
	if (c.gpu_temp_drain < c.gpu_temp_suspect)
		return unexpected(name, "gpu_temp_drain (" + std::to_string(c.gpu_temp_drain) +
						") is below gpu_temp_suspect (" + std::to_string(c.gpu_temp_suspect) +
						")");
	if (c.link_flaps_drain && c.link_flaps_suspect && c.link_flaps_drain < c.link_flaps_suspect)
		return unexpected(name, "link_flaps_drain is below link_flaps_suspect");
	for (const auto &[counter, drain] : c.ib_hw_counters_drain)
		if (auto it = c.ib_hw_counters_suspect.find(counter);
		    it != c.ib_hw_counters_suspect.end() && drain < it->second)
			return unexpected(name, "ib_hw_counters_drain: " + counter + " drains at " +
							std::to_string(drain) + ", below its suspect limit " +
							std::to_string(it->second) +
							" (lower that too, or set it to 0 in ib_hw_counters_suspect)");
	if (c.probe_allreduce_size < (uint64_t(1) << 20) || c.probe_allreduce_size > (uint64_t(64) << 30) ||
	    c.probe_allreduce_size % 4 != 0)
		return unexpected(name, "probe_allreduce_size (" + std::to_string(c.probe_allreduce_size) +
						") must be between 1M and 64G and a multiple of 4 (floats)");
	return c;
}

IbHwCounterKind ib_hw_counter_kind(std::string_view name)
{
	for (const auto &h : hw_counters)
		if (name == h.name)
			return h.kind;
	return IbHwCounterKind::unknown;
}

std::map<std::string, int64_t> ib_hw_counters_suspect_default()
{
	std::map<std::string, int64_t> m;
	for (const auto &h : hw_counters)
		if (h.suspect > 0)
			m[h.name] = h.suspect;
	return m;
}

expected<HealthConfig> load_health_config(const std::string &path)
{
	auto text = read_file(path, 1 << 20);
	if (!text)
		return unexpected(text.error());
	return parse_health_config(*text, path);
}

std::string describe_health_config()
{
	HealthConfig c;
	return schema(c, std::make_shared<std::map<int, XidAction>>()).describe();
}

} // namespace loom::health
