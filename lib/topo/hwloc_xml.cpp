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

// hwloc bitmaps: "0x03000003" or "0xffffffff,0x0000000f"; a single set bit gives its index.
int single_bit(const std::string &mask)
{
	std::string hex;
	for (size_t p = 0; p < mask.size();) {
		size_t c = mask.find(',', p);
		std::string w = mask.substr(p, c == std::string::npos ? std::string::npos : c - p);
		if (w.rfind("0x", 0) == 0)
			w = w.substr(2);
		hex += w;
		p = c == std::string::npos ? mask.size() : c + 1;
	}
	auto list = cpulist_from_mask(hex);
	if (!list || list->empty() || list->find_first_of(",-") != std::string::npos)
		return -1;
	return std::atoi(list->c_str());
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
	if (type == "NUMANode") {
		NumaSpec m;
		m.id = e.attr("os_index") ? std::atoi(e.attr("os_index")->c_str()) : 0;
		if (const std::string *cs = e.attr("cpuset")) {
			std::string hex;
			for (char c : *cs)
				if (c != 'x' && c != ',')
					hex += c;
			auto list = cpulist_from_mask(hex);
			// "0x" prefixes leave a leading 0 digit per word; harmless for the value.
			if (list)
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
			if (k.name == "object" && k.attr("type") && *k.attr("type") == "OSDev" && !info(k, "NodeGUID").empty()) {
				NicSpec x;
				x.device = k.attr("name") ? *k.attr("name") : "hca" + std::to_string(w.n.nics.size());
				x.pci_bus_id = e.attr("pci_busid") ? *e.attr("pci_busid") : "";
				x.link_layer = pt && pt->compare(0, 4, "0200") == 0 ? LinkLayer::ethernet : LinkLayer::infiniband;
				x.guid = "0x" + info(k, "NodeGUID");
				x.numa = numa;
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
	walk(*doc, -1, w, source);
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
		for (size_t i = 0; i < n; i++) {
			auto gi = w.gpu_of_ref.find(refs[i]);
			if (gi == w.gpu_of_ref.end())
				continue;
			GpuSpec &g = w.n.gpus[static_cast<size_t>(gi->second)];
			for (size_t j = 0; j < n; j++) {
				uint64_t bw = std::strtoull(vals[i * n + j].c_str(), nullptr, 10);
				if (i == j || bw == 0 || bw > (1ull << 40))
					continue;
				int links = static_cast<int>(std::max<uint64_t>(1, (bw + 12500) / 25000));
				g.nvlinks = std::min(65535, g.nvlinks + links);
				g.nvlink_gbps += static_cast<double>(bw) * 8 / 1000;
				auto gj = w.gpu_of_ref.find(refs[j]);
				if (gj == w.gpu_of_ref.end())
					g.nvswitch = true;
				else if (gj->second != gi->second)
					g.peers.push_back(NvlinkPeer{static_cast<uint16_t>(gj->second), static_cast<uint16_t>(std::min(links, 65535))});
			}
		}
	}
	return w.n;
}

} // namespace loom::topo
