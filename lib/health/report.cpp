#include "lib/health/report.hpp"

#include "lib/util/json.hpp"
#include "lib/util/log.hpp"

#include <map>

namespace loom::health {
namespace {

// Prometheus label values: backslash, double quote and newline escaped.
std::string esc(const std::string &v)
{
	std::string o;
	for (char c : v) {
		if (c == '\\' || c == '"')
			o += '\\';
		if (c == '\n') {
			o += "\\n";
			continue;
		}
		o += c;
	}
	return o;
}

} // namespace

std::string verdict_json(const std::string &node, const NodeSample &s, const Verdict &v)
{
	Json o = Json::object();
	o.set("node", Json::string(node));
	o.set("outcome", Json::string(outcome_name(v.outcome)));
	o.set("exit_code", Json::integer(v.exit_code()));
	o.set("reason", Json::string(v.reason()));
	Json actions = Json::array();
	for (const auto &a : v.actions)
		actions.push(Json::string(a));
	o.set("actions", std::move(actions));
	Json findings = Json::array();
	for (const auto &f : v.findings) {
		Json j = Json::object();
		j.set("check", Json::string(f.check));
		j.set("severity", Json::string(outcome_name(f.severity)));
		j.set("evidence", Json::string(f.evidence));
		findings.push(std::move(j));
	}
	o.set("findings", std::move(findings));
	Json seen = Json::object();
	seen.set("gpu_source", Json::string(s.gpu_source));
	seen.set("gpus", Json::integer(static_cast<int64_t>(s.gpus.size())));
	seen.set("xid_events", Json::integer(static_cast<int64_t>(s.xids.size())));
	seen.set("ib_ports", Json::integer(static_cast<int64_t>(s.ib_ports.size())));
	seen.set("hwmon_sensors", Json::integer(static_cast<int64_t>(s.hwmon.size())));
	seen.set("edac_controllers", Json::integer(static_cast<int64_t>(s.edac.size())));
	o.set("gathered", std::move(seen));
	Json errs = Json::array();
	for (const auto &e : s.errors) {
		Json j = Json::object();
		j.set("collector", Json::string(e.collector));
		j.set("message", Json::string(e.message));
		errs.push(std::move(j));
	}
	o.set("collector_errors", std::move(errs));
	Json ms = Json::object();
	for (const auto &[k, t] : s.collect_ms)
		ms.set(k.c_str(), Json::number(t));
	o.set("collect_ms", std::move(ms));
	return o.dump();
}

std::string verdict_prometheus(const std::string &node, const NodeSample &s, const Verdict &v)
{
	std::string n = "node=\"" + esc(node) + "\"";
	std::string out;
	out += "# HELP loom_health_outcome Node health, as the exit code: 0 ok, 1 suspect, 2 drain, 3 unknown (cannot "
	       "judge).\n# TYPE loom_health_outcome gauge\n";
	out += strprintf("loom_health_outcome{%s} %d\n", n.c_str(), v.exit_code());
	std::map<std::pair<std::string, std::string>, int> counts;
	for (const auto &f : v.findings)
		counts[{f.check, outcome_name(f.severity)}]++;
	out += "# HELP loom_health_findings Findings of the last check by check and severity.\n# TYPE "
	       "loom_health_findings gauge\n";
	for (const auto &[k, c] : counts)
		out += strprintf("loom_health_findings{%s,check=\"%s\",severity=\"%s\"} %d\n", n.c_str(),
				 esc(k.first).c_str(), k.second.c_str(), c);
	out += "# HELP loom_health_gpu_temperature_celsius GPU temperature.\n# TYPE "
	       "loom_health_gpu_temperature_celsius gauge\n";
	for (const auto &g : s.gpus)
		if (g.temp_c)
			out += strprintf("loom_health_gpu_temperature_celsius{%s,gpu=\"%d\"} %g\n", n.c_str(), g.index,
					 *g.temp_c);
	out += "# HELP loom_health_gpu_ecc_errors GPU ECC error counters.\n# TYPE loom_health_gpu_ecc_errors gauge\n";
	for (const auto &g : s.gpus) {
		auto put = [&](const char *type, const Count &c) {
			if (c)
				out += strprintf("loom_health_gpu_ecc_errors{%s,gpu=\"%d\",type=\"%s\"} %lld\n",
						 n.c_str(), g.index, type, static_cast<long long>(*c));
		};
		put("volatile_dram_uncorrectable", g.ecc_vol_dram_uncorr);
		put("volatile_sram_uncorrectable", g.ecc_vol_sram_uncorr);
		put("aggregate_dram_correctable", g.ecc_agg_dram_corr);
		put("aggregate_sram_correctable", g.ecc_agg_sram_corr);
	}
	out += "# HELP loom_health_xid_events Xid events in the kernel log by GPU and Xid.\n# TYPE "
	       "loom_health_xid_events gauge\n";
	std::map<std::pair<int, int>, int> xids;
	for (const auto &x : s.xids)
		xids[{x.gpu_index, x.xid}]++;
	for (const auto &[k, c] : xids)
		out += strprintf("loom_health_xid_events{%s,gpu=\"%d\",xid=\"%d\"} %d\n", n.c_str(), k.first, k.second,
				 c);
	out += "# HELP loom_health_ib_port_active InfiniBand/RoCE port state (1 ACTIVE and LinkUp).\n# TYPE "
	       "loom_health_ib_port_active gauge\n";
	for (const auto &p : s.ib_ports)
		out += strprintf("loom_health_ib_port_active{%s,device=\"%s\",port=\"%d\"} %d\n", n.c_str(),
				 esc(p.device).c_str(), p.port,
				 p.state == "ACTIVE" && (p.phys_state.empty() || p.phys_state == "LinkUp"));
	out += "# HELP loom_health_link_flaps Carrier losses per interface in the logs.\n# TYPE loom_health_link_flaps "
	       "gauge\n";
	for (const auto &f : s.flaps)
		out += strprintf("loom_health_link_flaps{%s,iface=\"%s\"} %d\n", n.c_str(), esc(f.iface).c_str(),
				 f.lost);
	out += "# HELP loom_health_collect_seconds Time each collector took.\n# TYPE loom_health_collect_seconds "
	       "gauge\n";
	for (const auto &[k, t] : s.collect_ms)
		out += strprintf("loom_health_collect_seconds{%s,collector=\"%s\"} %.6f\n", n.c_str(), k.c_str(),
				 t / 1000.0);
	out += "# HELP loom_health_collector_errors Collectors that could not read their source.\n# TYPE "
	       "loom_health_collector_errors gauge\n";
	out += strprintf("loom_health_collector_errors{%s} %zu\n", n.c_str(), s.errors.size());
	return out;
}

} // namespace loom::health
