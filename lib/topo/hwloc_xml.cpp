// hwloc XML files (any version, including 3.0 that the system hwloc 2.x
// cannot import), read with loom's small XML reader: NUMA nodes, NVIDIA
// GPUs on PCI, HCAs and the NVLinkBandwidth matrix.
#include "lib/topo/hwloc_xml.hpp"

#include "lib/topo/discover.hpp"
#include "lib/topo/nccl_xml.hpp"
#include "lib/topo/xml.hpp"

#include <cstdlib>
#include <map>
#include <sstream>

namespace loom::topo {

namespace {

struct Walk {
	NodeSpec n;
	std::string error, error_where;        // the first bad value met
	std::map<std::string, int> gpu_of_ref; // "OSDev:802" / "PCIDev:449" -> GPU index
	const XmlElement *nvlink = nullptr;
};

std::string info(const XmlElement &e, const char *name)
{
	for (const auto &k : e.children)
		if (k.name == "info" && k.attr("name") && *k.attr("name") == name && k.attr("value"))
			return *k.attr("value");
	return {};
}

// hwloc bitmaps ("0x03000003", "0x00000303,0x03030000,,0x0"): a single set
// bit gives its index, else -1.
int single_bit(const std::string &mask)
{
	auto list = cpulist_from_mask(mask);
	if (!list || list->empty() || list->find_first_of(",-") != std::string::npos)
		return -1;
	return std::atoi(list->c_str());
}

// hwloc's pci_link_speed is the link's GB/s (lanes x per-lane rate after
// encoding). With the usual x16 of GPUs and HCAs, the per-lane rate gives the
// generation: 0.25, 0.5, 0.985, 1.969, 3.938, 7.563 GB/s for 2.5 to 64 GT/s.
double gts_from_hwloc(const std::string *speed)
{
	if (!speed)
		return 0;
	double lane = std::strtod(speed->c_str(), nullptr) / 16;
	static const std::pair<double, double> gens[] = {{0.25, 2.5}, {0.5, 5},    {0.985, 8},
							 {1.969, 16}, {3.938, 32}, {7.563, 64}};
	for (auto [gbs, gts] : gens)
		if (lane > gbs * 0.9 && lane < gbs * 1.1)
			return gts;
	return 0;
}

// The bandwidth of one NVLink in MB/s, one direction, as hwloc's
// NVLinkBandwidth counts it: 20000 for NVLink 1 (P100), 50000 for NVLink 5
// (Blackwell), 25000 for the generations between.
uint64_t nvlink_mbps(const std::string &model)
{
	if (model.find("P100") != std::string::npos)
		return 20000;
	for (const char *b : {"B100", "B200", "B300", "GB200", "GB300"})
		if (model.find(b) != std::string::npos)
			return 50000;
	return 25000;
}

void unexpected_walk(Walk &w, const std::string &where, const std::string &what)
{
	if (w.error.empty()) {
		w.error = what;
		w.error_where = where;
	}
}

std::string ref(const XmlElement &e)
{
	const std::string *t = e.attr("type"), *g = e.attr("gp_index");
	return t && g ? *t + ":" + *g : std::string();
}

void walk(const XmlElement &e, int numa, Walk &w, const std::string &source)
{
	if (e.name == "distances2hetero" || e.name == "distances2") {
		if (const std::string *nm = e.attr("name"); nm && *nm == "NVLinkBandwidth")
			w.nvlink = &e;
		return;
	}
	if (e.name != "object" && e.name != "topology")
		return;
	const std::string type = e.attr("type") ? *e.attr("type") : "";
	if (const std::string *ns = e.attr("nodeset"); ns && type != "NUMANode")
		numa = single_bit(*ns);
	if (type == "Package") {
		if (std::string v = info(e, "CPUVendor"); !v.empty() && w.n.cpu.vendor.empty())
			w.n.cpu.vendor = v;
		if (std::string f = info(e, "CPUFamilyNumber"); !f.empty() && w.n.cpu.family < 0)
			w.n.cpu.family = std::atoi(f.c_str());
		if (std::string m = info(e, "CPUModelNumber"); !m.empty() && w.n.cpu.model < 0)
			w.n.cpu.model = std::atoi(m.c_str());
	}
	if (type == "NUMANode") {
		NumaSpec m;
		m.id = e.attr("os_index") ? std::atoi(e.attr("os_index")->c_str()) : 0;
		if (const std::string *cs = e.attr("cpuset")) {
			auto list = cpulist_from_mask(*cs);
			if (!list)
				return unexpected_walk(w, source + ":" + std::to_string(e.line),
						       "cpuset: " + list.error().message);
			m.cpus = *list;
		}
		if (const std::string *mem = e.attr("local_memory"))
			m.memory_mib = std::strtoull(mem->c_str(), nullptr, 10) >> 20;
		m.where = source + ":" + std::to_string(e.line);
		w.n.numas.push_back(m);
	} else if (type == "PCIDev") {
		const std::string *pt = e.attr("pci_type");
		// "0302 [10de:1db8] [10de:12ab] a1 00": class, then [vendor:device]
		if (pt && pt->size() >= 11 && pt->compare(6, 4, "10de") == 0 &&
		    (pt->compare(0, 4, "0302") == 0 || pt->compare(0, 4, "0300") == 0)) {
			GpuSpec g;
			g.index = static_cast<int>(w.n.gpus.size());
			g.pci_bus_id = e.attr("pci_busid") ? *e.attr("pci_busid") : "";
			g.numa = numa;
			g.where = source + ":" + std::to_string(e.line);
			g.pcie_gts = gts_from_hwloc(e.attr("pci_link_speed"));
			g.pcie_width = g.pcie_gts > 0 ? 16 : 0;
			w.gpu_of_ref[ref(e)] = g.index;
			for (const auto &k : e.children)
				if (k.name == "object") {
					if (std::string m = info(k, "GPUModel"); !m.empty())
						g.model = m;
					w.gpu_of_ref[ref(k)] = g.index;
				}
			w.n.gpus.push_back(g);
			return;
		}
		for (const auto &k : e.children)
			if (k.name == "object" && k.attr("type") && *k.attr("type") == "OSDev" &&
			    !info(k, "NodeGUID").empty()) {
				NicSpec x;
				x.device = k.attr("name") ? *k.attr("name") : "hca" + std::to_string(w.n.nics.size());
				x.pci_bus_id = e.attr("pci_busid") ? *e.attr("pci_busid") : "";
				x.link_layer = pt && pt->compare(0, 4, "0200") == 0 ? LinkLayer::ethernet
										    : LinkLayer::infiniband;
				x.guid = "0x" + info(k, "NodeGUID");
				x.numa = numa;
				x.pcie_gts = gts_from_hwloc(e.attr("pci_link_speed"));
				x.pcie_width = x.pcie_gts > 0 ? 16 : 0;
				x.where = source + ":" + std::to_string(k.line);
				w.n.nics.push_back(x);
			}
	}
	for (const auto &k : e.children)
		walk(k, numa, w, source);
}

std::vector<std::string> words(const XmlElement &e, const char *child)
{
	std::vector<std::string> out;
	for (const auto &k : e.children)
		if (k.name == child) {
			std::istringstream in(k.text);
			for (std::string t; in >> t;)
				out.push_back(t);
		}
	return out;
}

} // namespace

expected<NodeSpec> parse_hwloc_xml(std::string_view text, const std::string &source)
{
	auto doc = parse_xml(text, source, 256);
	if (!doc)
		return unexpected(doc.error());
	if (doc->name != "topology")
		return unexpected(source, "expected an hwloc <topology>, found <" + doc->name + ">");
	Walk w;
	w.n.where = source;
	// The machine's architecture: <info name="Architecture"> of the topology
	// (x86_64, ppc64le, aarch64), as NCCL's arch= takes it.
	if (std::string a = info(*doc, "Architecture"); !a.empty())
		w.n.cpu.arch = a;
	walk(*doc, -1, w, source);
	if (!w.error.empty())
		return unexpected(w.error_where, w.error);
	if (w.n.gpus.size() > max_gpus_per_node || w.n.nics.size() > max_nics_per_node)
		return unexpected(source, "too many GPUs or NICs");
	if (w.nvlink) {
		auto refs = words(*w.nvlink, "indexes");
		auto vals = words(*w.nvlink, "u64values");
		size_t n = refs.size();
		if (n == 0 || n > 4096 || vals.size() != n * n)
			return unexpected(source + ":" + std::to_string(w.nvlink->line),
					  "NVLinkBandwidth matrix has " + std::to_string(vals.size()) + " values for " +
						  std::to_string(n) + " objects");
		// The other end of a GPU's NVLinks: another GPU, a CPU package
		// (POWER8/9, Grace: not part of the GPUs' fabric), or an NVSwitch.
		auto is_cpu = [](const std::string &r) {
			for (const char *t : {"Package:", "NUMANode:", "Machine:", "Group:", "Die:"})
				if (r.rfind(t, 0) == 0)
					return true;
			return false;
		};
		for (size_t i = 0; i < n; i++) {
			auto gi = w.gpu_of_ref.find(refs[i]);
			if (gi == w.gpu_of_ref.end())
				continue;
			GpuSpec &g = w.n.gpus[static_cast<size_t>(gi->second)];
			uint64_t per_link = nvlink_mbps(g.model);
			for (size_t j = 0; j < n; j++) {
				uint64_t bw = std::strtoull(vals[i * n + j].c_str(), nullptr, 10);
				if (i == j || bw == 0 || bw > (1ull << 40) || is_cpu(refs[j]))
					continue;
				auto gj = w.gpu_of_ref.find(refs[j]);
				if (gj != w.gpu_of_ref.end() && gj->second == gi->second)
					continue; // another OS device of the same GPU
				int links = static_cast<int>(std::max<uint64_t>(1, (bw + per_link / 2) / per_link));
				g.nvlinks = std::min(65535, g.nvlinks + links);
				g.nvlink_gbps += static_cast<double>(bw) * 8 / 1000;
				if (gj == w.gpu_of_ref.end())
					g.nvswitch = true;
				else
					g.peers.push_back(NvlinkPeer{static_cast<uint16_t>(gj->second),
								     static_cast<uint16_t>(std::min(links, 65535))});
			}
		}
	}
	return w.n;
}

} // namespace loom::topo
