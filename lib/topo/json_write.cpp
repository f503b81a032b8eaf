// Writing the loom cluster file.
#include "lib/topo/cluster_json.hpp"
#include "lib/util/json.hpp"

#include <map>

namespace loom::topo {

namespace {

Json gpu_json(const GpuSpec &g)
{
	Json o = Json::object();
	o.set("index", Json::integer(g.index));
	if (!g.pci_bus_id.empty())
		o.set("pci_bus_id", Json::string(g.pci_bus_id));
	if (!g.model.empty())
		o.set("model", Json::string(g.model));
	if (!g.perf_class.empty())
		o.set("perf_class", Json::string(g.perf_class));
	if (g.memory_mib)
		o.set("memory_mib", Json::integer(static_cast<int64_t>(g.memory_mib)));
	if (g.numa >= 0)
		o.set("numa", Json::integer(g.numa));
	if (!g.nic.empty())
		o.set("nic", Json::string(g.nic));
	if (g.nvswitch)
		o.set("nvswitch", Json::boolean(true));
	if (g.nvlinks)
		o.set("nvlinks", Json::integer(g.nvlinks));
	if (g.nvlink_gbps > 0)
		o.set("nvlink_gbps", Json::number(g.nvlink_gbps));
	if (g.pcie_gts > 0)
		o.set("pcie_gts", Json::number(g.pcie_gts));
	if (g.pcie_width > 0)
		o.set("pcie_width", Json::integer(g.pcie_width));
	if (!g.peers.empty()) {
		Json peers = Json::array();
		for (const auto &p : g.peers) {
			Json po = Json::object();
			po.set("gpu", Json::integer(p.gpu)).set("links", Json::integer(p.links));
			peers.push(std::move(po));
		}
		o.set("peers", std::move(peers));
	}
	return o;
}

Json nic_json(const NicSpec &x)
{
	Json o = Json::object();
	o.set("device", Json::string(x.device));
	o.set("port", Json::integer(x.port));
	o.set("link_layer", Json::string(link_layer_name(x.link_layer)));
	if (x.rate_gbps > 0)
		o.set("rate_gbps", Json::number(x.rate_gbps));
	if (x.rail >= 0)
		o.set("rail", Json::integer(x.rail));
	if (x.numa >= 0)
		o.set("numa", Json::integer(x.numa));
	if (!x.pci_bus_id.empty())
		o.set("pci_bus_id", Json::string(x.pci_bus_id));
	if (!x.guid.empty())
		o.set("guid", Json::string(x.guid));
	if (!x.rail_switch.empty())
		o.set("switch", Json::string(x.rail_switch));
	if (x.pcie_gts > 0)
		o.set("pcie_gts", Json::number(x.pcie_gts));
	if (x.pcie_width > 0)
		o.set("pcie_width", Json::integer(x.pcie_width));
	return o;
}

// Adds "cpu", "gpus", "nics", "numa" of a node to o; returns false if it had none.
bool add_hardware(Json &o, const NodeSpec &n)
{
	bool cpu = n.cpu != CpuSpec{};
	if (cpu) {
		Json c = Json::object();
		if (!n.cpu.arch.empty())
			c.set("arch", Json::string(n.cpu.arch));
		if (!n.cpu.vendor.empty())
			c.set("vendor", Json::string(n.cpu.vendor));
		if (n.cpu.family >= 0)
			c.set("family", Json::integer(n.cpu.family));
		if (n.cpu.model >= 0)
			c.set("model", Json::integer(n.cpu.model));
		o.set("cpu", std::move(c));
	}
	if (!n.gpus.empty()) {
		Json a = Json::array();
		for (const auto &g : n.gpus)
			a.push(gpu_json(g));
		o.set("gpus", std::move(a));
	}
	if (!n.nics.empty()) {
		Json a = Json::array();
		for (const auto &x : n.nics)
			a.push(nic_json(x));
		o.set("nics", std::move(a));
	}
	if (!n.numas.empty()) {
		Json a = Json::array();
		for (const auto &m : n.numas) {
			Json mo = Json::object();
			mo.set("id", Json::integer(m.id));
			if (!m.cpus.empty())
				mo.set("cpus", Json::string(m.cpus));
			if (m.memory_mib)
				mo.set("memory_mib", Json::integer(static_cast<int64_t>(m.memory_mib)));
			a.push(std::move(mo));
		}
		o.set("numa", std::move(a));
	}
	return cpu || !n.gpus.empty() || !n.nics.empty() || !n.numas.empty();
}

std::string hardware_name(const NodeSpec &n, std::map<std::string, int> &used)
{
	std::string base = n.gpus.empty() ? "cpu" : std::to_string(n.gpus.size()) + "x" + n.gpus[0].model;
	for (char &ch : base)
		if (ch == ' ' || ch == '"' || ch == '\\')
			ch = '-';
	int k = ++used[base];
	return k == 1 ? base : base + "-" + std::to_string(k);
}

Json domains_json(const Cluster &c)
{
	Json a = Json::array();
	for (const Domain &d : c.domains) {
		Json o = Json::object();
		o.set("name", Json::string(d.name)).set("kind", Json::string(c.kinds.name(d.kind)));
		if (d.parent != none)
			o.set("parent", Json::string(c.domains[d.parent].name));
		if (d.uplink_gbps > 0)
			o.set("uplink_gbps", Json::number(d.uplink_gbps));
		a.push(std::move(o));
	}
	return a;
}

Json nvlink_domains_json(const Cluster &c)
{
	Json a = Json::array();
	for (const NvlinkDomain &v : c.nvlink_domains) {
		Json o = Json::object();
		o.set("name", Json::string(v.name));
		if (v.gbps > 0)
			o.set("gbps", Json::number(v.gbps));
		a.push(std::move(o));
	}
	return a;
}

Json rails_json(const Cluster &c)
{
	Json a = Json::array();
	for (const Rail &r : c.rails) {
		Json o = Json::object();
		o.set("name", Json::string(r.name)).set("group", Json::string(c.domains[r.group].name));
		o.set("rail", Json::integer(r.index));
		if (r.uplink_gbps > 0)
			o.set("uplink_gbps", Json::number(r.uplink_gbps));
		a.push(std::move(o));
	}
	return a;
}

// A node's names and features; its hardware is added by the caller.
Json node_json(const NodeSpec &n)
{
	Json o = Json::object();
	o.set("name", Json::string(n.name));
	if (!n.domain.empty())
		o.set("domain", Json::string(n.domain));
	if (!n.nvlink_domain.empty())
		o.set("nvlink_domain", Json::string(n.nvlink_domain));
	if (!n.perf_class.empty())
		o.set("perf_class", Json::string(n.perf_class));
	if (!n.features.empty()) {
		Json f = Json::array();
		for (const auto &s : n.features)
			f.push(Json::string(s));
		o.set("features", std::move(f));
	}
	return o;
}

// The "hardware" entries: one per distinct hardware, which nodes name.
struct HardwareTable {
	Json entries = Json::object();
	std::map<std::string, std::string> by_content; // compact hardware JSON -> entry name
	std::map<std::string, int> used;

	// Names n's entry (added when new) as o's "hardware"; nothing when n has no hardware.
	void refer(Json &o, const NodeSpec &n)
	{
		Json h = Json::object();
		if (!add_hardware(h, n))
			return;
		std::string key = h.dump(false);
		auto it = by_content.find(key);
		if (it == by_content.end()) {
			std::string hn = hardware_name(n, used);
			it = by_content.emplace(key, hn).first;
			entries.set(hn.c_str(), std::move(h));
		}
		o.set("hardware", Json::string(it->second));
	}
};

} // namespace

std::string write_cluster_json(const Cluster &c, const JsonWriteOptions &opt)
{
	Json top = Json::object();
	top.set("version", Json::integer(cluster_format_version));
	if (!c.name.empty())
		top.set("name", Json::string(c.name));
	if (c.pcie_gbps != 256)
		top.set("pcie_gbps", Json::number(c.pcie_gbps));
	if (!c.domains.empty())
		top.set("domains", domains_json(c));
	if (!c.nvlink_domains.empty())
		top.set("nvlink_domains", nvlink_domains_json(c));
	if (!c.rails.empty())
		top.set("rails", rails_json(c));
	HardwareTable hardware;
	Json nodes = Json::array();
	for (size_t i = 0; i < c.nodes.size(); i++) {
		NodeSpec n = node_spec(c, static_cast<Index>(i));
		Json o = node_json(n);
		if (opt.share_hardware)
			hardware.refer(o, n);
		else
			add_hardware(o, n);
		nodes.push(std::move(o));
	}
	if (!hardware.by_content.empty())
		top.set("hardware", std::move(hardware.entries));
	top.set("nodes", std::move(nodes));
	return top.dump(opt.pretty);
}

} // namespace loom::topo
