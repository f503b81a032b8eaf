#include "lib/health/config.hpp"

#include "lib/util/fs.hpp"

#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>

namespace loom::health {
namespace {

ConfigSchema::Setter number(double *out, double min, double max)
{
	return [=](std::string_view v) -> status {
		std::string s(v);
		char *end = nullptr;
		double d = std::strtod(s.c_str(), &end);
		if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(d))
			return unexpected("expected a number");
		if (d < min || d > max)
			return unexpected("expected a number between " + std::to_string(min) + " and " +
					  std::to_string(max));
		*out = d;
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
			std::string w(trim(std::string_view(s).substr(start, comma == std::string::npos ? std::string::npos
												   : comma - start)));
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
		.choice("gpu_source", &c.gpu_source, {"auto", "nvml", "nvidia-smi", "none"}, "where GPU state comes from")
		.string("nvml_library", &c.nvml_library, "NVML library for dlopen (default libnvidia-ml.so.1)")
		.integer("gpu_count", &c.gpu_count, 0, 1024, "GPUs the node must show (0: not checked)")
		.add("gpu_temp_suspect", "GPU temperature (C) that makes the node suspect",
		     number(&c.gpu_temp_suspect, 0, 200))
		.add("gpu_temp_drain", "GPU temperature (C) that drains", number(&c.gpu_temp_drain, 0, 200))
		.add("gpu_mem_temp_suspect", "HBM temperature (C) that makes the node suspect",
		     number(&c.gpu_mem_temp_suspect, 0, 200))
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
		      std::string("comma-separated Xids whose action is ") + xid_action_name(a), xid_list(&c, a, claimed));
	s.integer("ib_port_count", &c.ib_port_count, 0, 1024, "InfiniBand/RoCE ports the node must show (0: not checked)")
		.add("ib_rate_min", "lowest acceptable port rate in Gb/s (0: off)", number(&c.ib_rate_min, 0, 100000))
		.integer("ib_errors_suspect", &c.ib_errors_suspect, 0, INT64_MAX,
			 "sum of ib_error_counters per port that makes the node suspect (0: off)")
		.list("ib_error_counters", &c.ib_error_counters, "counters summed by ib_errors_suspect")
		.integer("link_flaps_suspect", &c.link_flaps_suspect, 0, 100000,
			 "carrier losses per interface in the logs that make the node suspect (0: off)")
		.integer("link_flaps_drain", &c.link_flaps_drain, 0, 100000,
			 "carrier losses per interface in the logs that drain (0: off)")
		.list("eth_carrier_required", &c.eth_carrier_required, "interfaces that must have carrier")
		.integer("edac_ce_suspect", &c.edac_ce_suspect, 0, INT64_MAX,
			 "corrected memory errors per controller that make the node suspect (0: off)")
		.boolean("edac_ue_drains", &c.edac_ue_drains, "an uncorrected memory error drains")
		.boolean("mce_suspect", &c.mce_suspect, "a machine-check (Hardware Error) line makes the node suspect")
		.choice("collector_error", &c.collector_error, {"ok", "suspect", "drain"},
			"outcome when a collector cannot read its source")
		.duration("hold_down", &c.hold_down, 0, 30 * 86400,
			  "how long a node loom drained must stay healthy before loom resumes it")
		.string("state_dir", &c.state_dir, "directory for hold-down state, the suspect flag and history")
		.string("scontrol", &c.scontrol, "scontrol command used by --drain")
		.duration("scontrol_timeout", &c.scontrol_timeout, 1, 600, "time limit for one scontrol call")
		.integer("history_len", &c.history_len, 3, 1000, "samples the predictor keeps per node")
		.duration("predict_horizon", &c.predict_horizon, 60, 7 * 86400,
			  "how far ahead a trend may reach a threshold before the node turns suspect");
	return s;
}

} // namespace

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
						") is below gpu_temp_suspect (" + std::to_string(c.gpu_temp_suspect) + ")");
	if (c.link_flaps_drain && c.link_flaps_suspect && c.link_flaps_drain < c.link_flaps_suspect)
		return unexpected(name, "link_flaps_drain is below link_flaps_suspect");
	return c;
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
