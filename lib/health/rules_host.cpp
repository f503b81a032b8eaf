// Network and host checks: InfiniBand/RoCE ports, link flaps, Ethernet
// carrier, hwmon sensors, EDAC memory errors, kernel events.
#include "lib/health/rules.hpp"

#include "lib/util/log.hpp"

#include <algorithm>

namespace loom::health {
namespace {

// The hw_counters that count a bad link or HCA (lost or corrupted packets,
// transport retries), against absolute limits like the port counters: they
// run from the driver's load, and the predictor watches their trend.
void judge_ib_hw_counters(const IbPort &p, const std::string &name, const HealthConfig &c, std::vector<Finding> &out)
{
	for (const auto &[counter, value] : p.hw_counters) {
		auto d = c.ib_hw_counters_drain.find(counter);
		auto s = c.ib_hw_counters_suspect.find(counter);
		Outcome sev = Outcome::ok;
		int64_t limit = 0;
		if (d != c.ib_hw_counters_drain.end() && value >= static_cast<uint64_t>(d->second)) {
			sev = Outcome::drain;
			limit = d->second;
		} else if (s != c.ib_hw_counters_suspect.end() && value >= static_cast<uint64_t>(s->second)) {
			sev = Outcome::suspect;
			limit = s->second;
		}
		if (sev != Outcome::ok)
			out.push_back(
				{"ib_hw_counter", sev,
				 strprintf("%s: %s %llu (limit %lld)", name.c_str(), counter.c_str(),
					   static_cast<unsigned long long>(value), static_cast<long long>(limit))});
	}
}

} // namespace

// Its check names are exchange::is_link_check's list (lib/exchange/suspect_mark.cpp).
void judge_network(const NodeSample &s, const HealthConfig &c, std::vector<Finding> &out)
{
	if (c.ib_port_count > 0 && static_cast<int64_t>(s.ib_ports.size()) != c.ib_port_count)
		out.push_back({"ib_port_count", Outcome::drain,
			       strprintf("%zu InfiniBand/RoCE ports, %lld expected", s.ib_ports.size(),
					 static_cast<long long>(c.ib_port_count))});
	for (const auto &p : s.ib_ports) {
		std::string name = p.device + "/" + std::to_string(p.port);
		if (p.state != "ACTIVE" || (!p.phys_state.empty() && p.phys_state != "LinkUp")) {
			out.push_back(
				{"ib_port", Outcome::drain,
				 name + ": state " + p.state + (p.phys_state.empty() ? "" : ", " + p.phys_state)});
			continue;
		}
		if (c.ib_rate_min > 0 && p.link_layer == "InfiniBand" && p.rate_gbps && *p.rate_gbps < c.ib_rate_min)
			out.push_back({"ib_rate", Outcome::drain,
				       strprintf("%s: %.0f Gb/s, below %.0f Gb/s", name.c_str(), *p.rate_gbps,
						 c.ib_rate_min)});
		if (c.ib_errors_suspect > 0) {
			uint64_t sum = 0;
			std::string worst;
			uint64_t worst_v = 0;
			for (const auto &k : c.ib_error_counters) {
				auto it = p.counters.find(k);
				if (it == p.counters.end())
					continue;
				sum += it->second;
				if (it->second > worst_v) {
					worst_v = it->second;
					worst = k;
				}
			}
			if (sum >= static_cast<uint64_t>(c.ib_errors_suspect))
				out.push_back({"ib_errors", Outcome::suspect,
					       strprintf("%s: %llu port errors (%s %llu; limit %lld)", name.c_str(),
							 static_cast<unsigned long long>(sum), worst.c_str(),
							 static_cast<unsigned long long>(worst_v),
							 static_cast<long long>(c.ib_errors_suspect))});
		}
		judge_ib_hw_counters(p, name, c, out);
	}
	for (const auto &f : s.flaps) {
		Outcome sev = Outcome::ok;
		if (c.link_flaps_drain > 0 && f.lost >= c.link_flaps_drain)
			sev = Outcome::drain;
		else if (c.link_flaps_suspect > 0 && f.lost >= c.link_flaps_suspect)
			sev = Outcome::suspect;
		if (sev != Outcome::ok)
			out.push_back({"link_flaps", sev,
				       strprintf("%s lost carrier %d times (%s .. %s)", f.iface.c_str(), f.lost,
						 f.first_time.c_str(), f.last_time.c_str())});
	}
	for (const auto &want : c.eth_carrier_required) {
		auto it = std::find_if(s.net.begin(), s.net.end(), [&](const NetIface &n) { return n.name == want; });
		if (it == s.net.end())
			out.push_back({"eth_carrier", Outcome::drain, want + ": no such interface"});
		else if (!it->carrier.value_or(false))
			out.push_back({"eth_carrier", Outcome::drain, want + ": no carrier (" + it->operstate + ")"});
	}
}

void judge_host(const NodeSample &s, const HealthConfig &c, std::vector<Finding> &out)
{
	for (const auto &h : s.hwmon) {
		std::string name = h.chip + " " + h.label;
		if (h.kind == "temp" && h.crit && h.value >= *h.crit)
			out.push_back({"hwmon", Outcome::drain,
				       strprintf("%s at %.1f C, critical %.1f C", name.c_str(), h.value, *h.crit)});
		else if (h.kind == "temp" && h.max && h.value >= *h.max)
			out.push_back({"hwmon", Outcome::suspect,
				       strprintf("%s at %.1f C, max %.1f C", name.c_str(), h.value, *h.max)});
		else if (h.alarm)
			out.push_back({"hwmon", Outcome::suspect,
				       strprintf("%s %s alarm (reads %g)", name.c_str(), h.kind.c_str(), h.value)});
	}
	for (const auto &m : s.edac) {
		if (c.edac_ue_drains && m.uncorrected.value_or(0) > 0)
			out.push_back({"edac", Outcome::drain,
				       strprintf("%s: %lld uncorrected memory errors", m.name.c_str(),
						 static_cast<long long>(*m.uncorrected))});
		if (c.edac_ce_suspect > 0 && m.corrected.value_or(0) >= c.edac_ce_suspect)
			out.push_back({"edac", Outcome::suspect,
				       strprintf("%s: %lld corrected memory errors (limit %lld)", m.name.c_str(),
						 static_cast<long long>(*m.corrected),
						 static_cast<long long>(c.edac_ce_suspect))});
	}
	int mce = 0, ue = 0, oom = 0;
	for (const auto &e : s.kernel_events) {
		mce += e.kind == "mce";
		ue += e.kind == "edac_ue";
		oom += e.kind == "oom_kill";
	}
	if (c.mce_suspect && mce)
		out.push_back({"mce", Outcome::suspect, strprintf("%d machine-check lines in the kernel log", mce)});
	if (c.edac_ue_drains && ue)
		out.push_back(
			{"edac", Outcome::drain, strprintf("%d uncorrected memory error lines in the kernel log", ue)});
	if (oom)
		out.push_back({"oom", Outcome::ok,
			       strprintf("%d OOM kills in the kernel log (a job's, not the node's)", oom)});
}

} // namespace loom::health
