// GPU checks: count, temperature, ECC, retired pages and row remapping,
// NVLink, throttling, PCIe replays, and the Xid table.
#include "lib/health/rules.hpp"

#include "lib/util/log.hpp"

#include <algorithm>
#include <map>

namespace loom::health {
namespace {

std::string gpu_name(const GpuState &g)
{
	std::string n = "GPU " + std::to_string(g.index);
	if (!g.pci_bus.empty())
		n += " (" + g.pci_bus + ")";
	return n;
}

void add(std::vector<Finding> &out, const char *check, Outcome sev, std::string evidence)
{
	out.push_back({check, sev, std::move(evidence)});
}

bool throttled(const GpuState &g, const std::string &reason)
{
	if (reason == "hw_slowdown")
		return g.hw_slowdown;
	if (reason == "hw_thermal")
		return g.hw_thermal_slowdown;
	if (reason == "hw_power_brake")
		return g.hw_power_brake;
	if (reason == "sw_thermal")
		return g.sw_thermal_slowdown;
	if (reason == "sw_power_cap")
		return g.sw_power_cap;
	return false;
}

} // namespace

void judge_gpus(const NodeSample &s, const HealthConfig &c, std::vector<Finding> &out,
		std::vector<std::string> &actions)
{
	if (c.gpu_count > 0 && static_cast<int64_t>(s.gpus.size()) != c.gpu_count && !s.gpu_source.empty())
		add(out, "gpu_count", Outcome::drain,
		    strprintf("%zu GPUs visible, %lld expected", s.gpus.size(), static_cast<long long>(c.gpu_count)));
	for (const auto &g : s.gpus) {
		const std::string name = gpu_name(g);
		if (g.temp_c && *g.temp_c >= c.gpu_temp_drain)
			add(out, "gpu_temp", Outcome::drain,
			    strprintf("%s at %.0f C (drain at %.0f C)", name.c_str(), *g.temp_c, c.gpu_temp_drain));
		else if (g.temp_c && *g.temp_c >= c.gpu_temp_suspect)
			add(out, "gpu_temp", Outcome::suspect,
			    strprintf("%s at %.0f C (limit %.0f C)", name.c_str(), *g.temp_c, c.gpu_temp_suspect));
		if (g.mem_temp_c && *g.mem_temp_c >= c.gpu_mem_temp_suspect)
			add(out, "gpu_mem_temp", Outcome::suspect,
			    strprintf("%s memory at %.0f C (limit %.0f C)", name.c_str(), *g.mem_temp_c,
				      c.gpu_mem_temp_suspect));
		int64_t uncorr = g.ecc_vol_dram_uncorr.value_or(0) + g.ecc_vol_sram_uncorr.value_or(0);
		if (c.ecc_uncorr_drain > 0 && uncorr >= c.ecc_uncorr_drain) {
			add(out, "gpu_ecc", Outcome::drain,
			    strprintf("%s: %lld uncorrectable ECC errors since driver load", name.c_str(),
				      static_cast<long long>(uncorr)));
			actions.push_back("reset_gpu " + std::to_string(g.index));
		}
		if (c.ecc_dram_corr_suspect > 0 && g.ecc_agg_dram_corr.value_or(0) >= c.ecc_dram_corr_suspect)
			add(out, "gpu_ecc", Outcome::suspect,
			    strprintf("%s: %lld correctable DRAM ECC errors (limit %lld)", name.c_str(),
				      static_cast<long long>(*g.ecc_agg_dram_corr),
				      static_cast<long long>(c.ecc_dram_corr_suspect)));
		if (c.ecc_sram_corr_suspect > 0 && g.ecc_agg_sram_corr.value_or(0) >= c.ecc_sram_corr_suspect)
			add(out, "gpu_ecc", Outcome::suspect,
			    strprintf("%s: %lld correctable SRAM ECC errors (limit %lld)", name.c_str(),
				      static_cast<long long>(*g.ecc_agg_sram_corr),
				      static_cast<long long>(c.ecc_sram_corr_suspect)));
		int64_t retired = g.retired_sbe.value_or(0) + g.retired_dbe.value_or(0);
		if (c.retired_pages_drain > 0 && retired >= c.retired_pages_drain)
			add(out, "gpu_retired_pages", Outcome::drain,
			    strprintf("%s: %lld retired pages (%lld single-bit, %lld double-bit; limit %lld)",
				      name.c_str(), static_cast<long long>(retired),
				      static_cast<long long>(g.retired_sbe.value_or(0)),
				      static_cast<long long>(g.retired_dbe.value_or(0)),
				      static_cast<long long>(c.retired_pages_drain)));
		if (c.remap_pending_drains && g.retired_pending.value_or(false)) {
			add(out, "gpu_retired_pages", Outcome::drain,
			    name + ": page retirement pending (reset the GPU)");
			actions.push_back("reset_gpu " + std::to_string(g.index));
		}
		if (c.remap_pending_drains && g.remap_pending.value_or(false)) {
			add(out, "gpu_row_remap", Outcome::drain, name + ": row remapping pending (reset the GPU)");
			actions.push_back("reset_gpu " + std::to_string(g.index));
		}
		if (g.remap_failure.value_or(false))
			add(out, "gpu_row_remap", Outcome::drain, name + ": row remapping failed");
		if (g.reset_required.value_or(false)) {
			add(out, "gpu_reset", Outcome::drain, name + ": the driver says a GPU reset is required");
			actions.push_back("reset_gpu " + std::to_string(g.index));
		}
		if (g.nvlink_reported) {
			int down = 0;
			for (const auto &l : g.nvlinks)
				down += !l.active;
			if (g.nvlinks.empty())
				add(out, "gpu_nvlink", Outcome::drain, name + ": all NVLinks inactive");
			else if (down)
				add(out, "gpu_nvlink", Outcome::drain,
				    strprintf("%s: %d of %zu NVLinks inactive", name.c_str(), down, g.nvlinks.size()));
			for (const auto &l : g.nvlinks) {
				int64_t e = l.replay_errors.value_or(0) + l.recovery_errors.value_or(0) +
					    l.crc_errors.value_or(0);
				if (c.nvlink_errors_suspect > 0 && e >= c.nvlink_errors_suspect)
					add(out, "gpu_nvlink", Outcome::suspect,
					    strprintf("%s link %d: %lld NVLink errors (limit %lld)", name.c_str(),
						      l.link, static_cast<long long>(e),
						      static_cast<long long>(c.nvlink_errors_suspect)));
			}
		}
		std::string reasons;
		for (const auto &r : c.throttle_suspect)
			if (throttled(g, r))
				reasons += (reasons.empty() ? "" : ",") + r;
		if (!reasons.empty())
			add(out, "gpu_throttle", Outcome::suspect, name + ": clocks throttled (" + reasons + ")");
		if (c.pcie_replays_suspect > 0 && g.pcie_replays.value_or(0) >= c.pcie_replays_suspect)
			add(out, "gpu_pcie", Outcome::suspect,
			    strprintf("%s: %lld PCIe replays (limit %lld)", name.c_str(),
				      static_cast<long long>(*g.pcie_replays),
				      static_cast<long long>(c.pcie_replays_suspect)));
	}
}

void judge_xids(const NodeSample &s, const HealthConfig &c, std::vector<Finding> &out,
		std::vector<std::string> &actions)
{
	// One finding per (GPU, Xid), with the count and the first message.
	struct Seen {
		int count = 0;
		const XidEvent *first = nullptr;
	};
	std::map<std::pair<std::string, int>, Seen> seen;
	for (const auto &x : s.xids) {
		auto &e = seen[{x.pci_bus, x.xid}];
		if (!e.first)
			e.first = &x;
		e.count++;
	}
	for (const auto &[key, e] : seen) {
		XidAction a = c.xids.action(key.second);
		if (a == XidAction::ignore)
			continue;
		const XidEvent &x = *e.first;
		std::string where = x.gpu_index >= 0 ? "GPU " + std::to_string(x.gpu_index) + " (" + x.pci_bus + ")"
						     : "PCI " + (x.pci_bus.empty() ? std::string("?") : x.pci_bus);
		std::string msg = x.message.substr(0, 80);
		std::string ev = strprintf("%s: Xid %d x%d: %s", where.c_str(), x.xid, e.count, xid_action_name(a));
		if (!msg.empty())
			ev += " (" + msg + ")";
		// The one mapping of an action to whom it blames (xid_table.hpp),
		// as job logs are judged: the application's is informational, a
		// suspect one suspect, the GPU's drains (with the hint the action names).
		Outcome sev = Outcome::ok;
		switch (xid_blame(a)) {
		case XidBlame::application:
			sev = Outcome::ok;
			break;
		case XidBlame::suspect:
			sev = Outcome::suspect;
			break;
		case XidBlame::gpu:
			sev = Outcome::drain;
			break;
		}
		if (a == XidAction::reset_gpu)
			actions.push_back(x.gpu_index >= 0 ? "reset_gpu " + std::to_string(x.gpu_index) : "reset_gpu");
		else if (a == XidAction::reboot)
			actions.push_back("reboot");
		out.push_back({"gpu_xid", sev, ev});
	}
}

} // namespace loom::health
