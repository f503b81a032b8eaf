// Reading the loom cluster file.
#include "lib/topo/cluster_json.hpp"
#include "lib/topo/try.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"

#include <json-c/json.h>
#include <map>

namespace loom::topo {

namespace {

using Obj = json_object *;

// Calls fn(element, path) for each element of an optional array field.
template <typename Fn>
status each(ObjectReader &r, const char *key, Fn fn)
{
	LOOM_TRY(arr, r.array_or_null(key));
	if (!arr)
		return ok();
	std::string base = r.field_path(key);
	size_t n = json_object_array_length(arr);
	for (size_t i = 0; i < n; i++)
		LOOM_CHECK(fn(json_object_array_get_idx(arr, i), ObjectReader::index_path(base, i)));
	return ok();
}

expected<LinkLayer> link_layer(const std::string &s, const std::string &where)
{
	if (s == "infiniband")
		return LinkLayer::infiniband;
	if (s == "ethernet")
		return LinkLayer::ethernet;
	if (s == "unknown")
		return LinkLayer::unknown;
	return unexpected(where, "link_layer must be infiniband, ethernet or unknown, not '" + s + "'");
}

expected<GpuSpec> parse_gpu(Obj o, const std::string &path)
{
	ObjectReader r(o, path);
	GpuSpec g;
	g.where = path;
	LOOM_TRY(index, r.integer("index", 0, max_gpus_per_node - 1));
	g.index = static_cast<int>(index);
	LOOM_TRY(pci, r.str_or("pci_bus_id", ""));
	LOOM_TRY(model, r.str_or("model", ""));
	LOOM_TRY(cls, r.str_or("perf_class", ""));
	LOOM_TRY(mem, r.integer_or("memory_mib", 0, 0, INT64_MAX));
	LOOM_TRY(numa, r.integer_or("numa", -1, -1, 32767));
	LOOM_TRY(nic, r.str_or("nic", ""));
	LOOM_TRY(nvswitch, r.boolean_or("nvswitch", false));
	LOOM_TRY(nvlinks, r.integer_or("nvlinks", 0, 0, 65535));
	LOOM_TRY(nvbw, r.number_or("nvlink_gbps", 0));
	LOOM_TRY(gts, r.number_or("pcie_gts", 0));
	LOOM_TRY(width, r.integer_or("pcie_width", 0, 0, 64));
	if (gts < 0 || gts > 1024)
		return unexpected(r.field_path("pcie_gts"), "expected 0 to 1024 GT/s");
	g.pcie_gts = gts;
	g.pcie_width = static_cast<int>(width);
	g.pci_bus_id = pci;
	g.model = model;
	g.perf_class = cls;
	g.memory_mib = static_cast<uint64_t>(mem);
	g.numa = static_cast<int>(numa);
	g.nic = nic;
	g.nvswitch = nvswitch;
	g.nvlinks = static_cast<int>(nvlinks);
	g.nvlink_gbps = nvbw;
	if (nvbw < 0)
		return unexpected(r.field_path("nvlink_gbps"), "negative bandwidth");
	LOOM_CHECK(each(r, "peers", [&](Obj p, const std::string &pp) -> status {
		ObjectReader pr(p, pp);
		LOOM_TRY(gpu, pr.integer("gpu", 0, max_gpus_per_node - 1));
		LOOM_TRY(links, pr.integer("links", 1, 65535));
		LOOM_CHECK(pr.finish());
		g.peers.push_back(NvlinkPeer{static_cast<uint16_t>(gpu), static_cast<uint16_t>(links)});
		return ok();
	}));
	LOOM_CHECK(r.finish());
	return g;
}

expected<NicSpec> parse_nic(Obj o, const std::string &path)
{
	ObjectReader r(o, path);
	NicSpec x;
	x.where = path;
	LOOM_TRY(dev, r.str("device"));
	LOOM_TRY(port, r.integer_or("port", 1, 0, 255));
	LOOM_TRY(ll, r.str_or("link_layer", "unknown"));
	LOOM_TRY(layer, link_layer(ll, r.field_path("link_layer")));
	LOOM_TRY(rate, r.number_or("rate_gbps", 0));
	LOOM_TRY(rail, r.integer_or("rail", -1, -1, 32767));
	LOOM_TRY(numa, r.integer_or("numa", -1, -1, 32767));
	LOOM_TRY(pci, r.str_or("pci_bus_id", ""));
	LOOM_TRY(guid, r.str_or("guid", ""));
	LOOM_TRY(rail_switch, r.str_or("switch", ""));
	LOOM_TRY(gts, r.number_or("pcie_gts", 0));
	LOOM_TRY(width, r.integer_or("pcie_width", 0, 0, 64));
	LOOM_CHECK(r.finish());
	if (gts < 0 || gts > 1024)
		return unexpected(r.field_path("pcie_gts"), "expected 0 to 1024 GT/s");
	x.pcie_gts = gts;
	x.pcie_width = static_cast<int>(width);
	x.rail_switch = rail_switch;
	if (rate < 0)
		return unexpected(r.field_path("rate_gbps"), "negative rate");
	x.device = dev;
	x.port = static_cast<int>(port);
	x.link_layer = layer;
	x.rate_gbps = rate;
	x.rail = static_cast<int>(rail);
	x.numa = static_cast<int>(numa);
	x.pci_bus_id = pci;
	x.guid = guid;
	return x;
}

// The hardware fields shared by nodes and "hardware" entries.
status parse_hardware(ObjectReader &r, NodeSpec &n)
{
	LOOM_TRY(cpu, r.object_or_null("cpu"));
	if (cpu) {
		ObjectReader cr(cpu, r.field_path("cpu"));
		LOOM_TRY(arch, cr.str_or("arch", ""));
		LOOM_TRY(vendor, cr.str_or("vendor", ""));
		LOOM_TRY(family, cr.integer_or("family", -1, 0, 32767));
		LOOM_TRY(model, cr.integer_or("model", -1, 0, 32767));
		LOOM_CHECK(cr.finish());
		n.cpu = CpuSpec{arch, vendor, static_cast<int>(family), static_cast<int>(model)};
	}
	LOOM_CHECK(each(r, "gpus", [&](Obj o, const std::string &p) -> status {
		LOOM_TRY(g, parse_gpu(o, p));
		n.gpus.push_back(std::move(g));
		return n.gpus.size() > max_gpus_per_node ? status(unexpected(p, "too many GPUs")) : ok();
	}));
	LOOM_CHECK(each(r, "nics", [&](Obj o, const std::string &p) -> status {
		LOOM_TRY(x, parse_nic(o, p));
		n.nics.push_back(std::move(x));
		return n.nics.size() > max_nics_per_node ? status(unexpected(p, "too many NICs")) : ok();
	}));
	LOOM_CHECK(each(r, "numa", [&](Obj o, const std::string &p) -> status {
		ObjectReader mr(o, p);
		LOOM_TRY(id, mr.integer("id", 0, 32767));
		LOOM_TRY(cpus, mr.str_or("cpus", ""));
		LOOM_TRY(mem, mr.integer_or("memory_mib", 0, 0, INT64_MAX));
		LOOM_CHECK(mr.finish());
		n.numas.push_back(NumaSpec{static_cast<int>(id), cpus, static_cast<uint64_t>(mem), p});
		return ok();
	}));
	return ok();
}

bool has_hardware_fields(const ObjectReader &r)
{
	return r.has("cpu") || r.has("gpus") || r.has("nics") || r.has("numa");
}

// "domains", "nvlink_domains" and "rails".
status parse_switches(ObjectReader &top, ClusterSpec &s)
{
	LOOM_CHECK(each(top, "domains", [&](Obj o, const std::string &p) -> status {
		ObjectReader r(o, p);
		LOOM_TRY(dn, r.str("name"));
		LOOM_TRY(kind, r.str_or("kind", ""));
		LOOM_TRY(parent, r.str_or("parent", ""));
		LOOM_TRY(up, r.number_or("uplink_gbps", 0));
		LOOM_CHECK(r.finish());
		s.domains.push_back(DomainSpec{dn, kind, parent, up, p});
		return ok();
	}));
	LOOM_CHECK(each(top, "nvlink_domains", [&](Obj o, const std::string &p) -> status {
		ObjectReader r(o, p);
		LOOM_TRY(vn, r.str("name"));
		LOOM_TRY(bw, r.number_or("gbps", 0));
		LOOM_CHECK(r.finish());
		s.nvlink_domains.push_back(NvlinkDomainSpec{vn, bw, p});
		return ok();
	}));
	return each(top, "rails", [&](Obj o, const std::string &p) -> status {
		ObjectReader r(o, p);
		LOOM_TRY(rn, r.str("name"));
		LOOM_TRY(group, r.str("group"));
		LOOM_TRY(index, r.integer("rail", 0, 32767));
		LOOM_TRY(up, r.number_or("uplink_gbps", 0));
		LOOM_CHECK(r.finish());
		s.rails.push_back(RailSpec{rn, group, static_cast<int>(index), up, p});
		return ok();
	});
}

// "hardware": shared hardware entries by name.
expected<std::map<std::string, NodeSpec>> parse_hardware_table(ObjectReader &top)
{
	std::map<std::string, NodeSpec> hardware;
	LOOM_TRY(hw, top.object_or_null("hardware"));
	if (hw) {
		json_object_object_foreach(hw, key, val)
		{
			std::string p = top.field_path("hardware") + "." + key;
			ObjectReader r(val, p);
			NodeSpec h;
			LOOM_CHECK(parse_hardware(r, h));
			LOOM_CHECK(r.finish());
			hardware.emplace(key, std::move(h));
		}
	}
	return hardware;
}

// One of "nodes": its hardware its own or a "hardware" entry's, not both.
expected<NodeSpec> parse_node(Obj o, const std::string &p, const std::map<std::string, NodeSpec> &hardware)
{
	ObjectReader r(o, p);
	NodeSpec n;
	n.where = p;
	LOOM_TRY(nn, r.str("name"));
	LOOM_TRY(dom, r.str_or("domain", ""));
	LOOM_TRY(nvl, r.str_or("nvlink_domain", ""));
	LOOM_TRY(cls, r.str_or("perf_class", ""));
	LOOM_TRY(hwname, r.str_or("hardware", ""));
	n.name = nn;
	n.domain = dom;
	n.nvlink_domain = nvl;
	n.perf_class = cls;
	LOOM_CHECK(each(r, "features", [&](Obj f, const std::string &fp) -> status {
		if (json_object_get_type(f) != json_type_string || json_object_get_string_len(f) == 0)
			return unexpected(fp, "expected a non-empty string");
		n.features.emplace_back(json_object_get_string(f));
		return ok();
	}));
	if (!hwname.empty()) {
		if (has_hardware_fields(r))
			return unexpected(p, "give either \"hardware\" or gpus/nics/numa, not both");
		auto it = hardware.find(hwname);
		if (it == hardware.end())
			return unexpected(r.field_path("hardware"), "no hardware entry '" + hwname + "'");
		n.cpu = it->second.cpu;
		n.gpus = it->second.gpus;
		n.nics = it->second.nics;
		n.numas = it->second.numas;
	} else {
		LOOM_CHECK(parse_hardware(r, n));
	}
	LOOM_CHECK(r.finish());
	return n;
}

} // namespace

expected<ClusterSpec> parse_cluster_json(std::string_view text, const std::string &source)
{
	LOOM_TRY(doc, json_parse(text, source));
	ClusterSpec s;
	ObjectReader top(doc.get(), "$");
	LOOM_TRY(version, top.integer("version"));
	if (version != cluster_format_version)
		return unexpected(top.field_path("version"),
				  "unsupported version " + std::to_string(version) + " (this loom reads version 1)");
	LOOM_TRY(name, top.str_or("name", ""));
	LOOM_TRY(pcie, top.number_or("pcie_gbps", 256));
	s.name = name;
	s.pcie_gbps = pcie;
	LOOM_CHECK(parse_switches(top, s));
	LOOM_TRY(hardware, parse_hardware_table(top));
	LOOM_CHECK(each(top, "nodes", [&](Obj o, const std::string &p) -> status {
		LOOM_TRY(n, parse_node(o, p, hardware));
		s.nodes.push_back(std::move(n));
		return ok();
	}));
	LOOM_CHECK(top.finish());
	return s;
}

expected<Cluster> read_cluster_json(std::string_view text, const std::string &source)
{
	auto parsed = parse_cluster_json(text, source);
	if (!parsed) {
		const Error &e = parsed.error();
		// JSON-path errors get the file name; parse errors carry it already.
		return unexpected(e.where.rfind("$", 0) == 0 ? e.within(source) : e);
	}
	ClusterSpec spec = std::move(*parsed);
	auto c = build_cluster(std::move(spec));
	if (!c)
		return unexpected(c.error().within(source));
	return c;
}

expected<Cluster> load_cluster_file(const std::string &path)
{
	LOOM_TRY(text, read_file(path, 1ull << 30));
	return read_cluster_json(text, path);
}

} // namespace loom::topo
