#include "lib/topo/nccl_xml.hpp"

#include "lib/topo/xml.hpp"
#include "lib/util/fs.hpp"

#include <cctype>
#include <cstdlib>
#include <map>
#include <vector>

namespace loom::topo {

expected<std::string> cpulist_from_mask(std::string_view mask)
{
	// Comma-separated 32-bit words, most significant first (Linux, NCCL and
	// hwloc write them so; hwloc drops the zero padding and leaves a zero
	// word empty: "0x00000303,0x03030000,,0x0"). Without a comma: one number.
	auto bad = [&](const char *why) {
		return unexpected("bad CPU mask '" + std::string(mask.substr(0, 64)) + "': " + why);
	};
	std::vector<std::string_view> words;
	for (size_t p = 0;;) {
		size_t c = mask.find(',', p);
		words.push_back(mask.substr(p, c == std::string_view::npos ? std::string_view::npos : c - p));
		if (c == std::string_view::npos)
			break;
		p = c + 1;
	}
	if (words.size() > 2048)
		return bad("too long");
	std::vector<bool> bits; // least significant first
	for (size_t w = words.size(); w-- > 0;) {
		std::string_view word = trim(words[w]);
		if (word.size() >= 2 && word[0] == '0' && (word[1] == 'x' || word[1] == 'X'))
			word.remove_prefix(2);
		if (word == "f...f")
			return bad("an infinite set");
		if (words.size() > 1 && word.size() > 8)
			return bad("a word of more than 32 bits");
		if (words.size() == 1 && word.empty())
			return bad("empty");
		size_t width = words.size() > 1 ? 8 : word.size();
		for (size_t k = 0; k < width; k++) {
			size_t from_end = k; // digit k from the right
			char c = from_end < word.size() ? word[word.size() - 1 - from_end] : '0';
			int v = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
				: (c >= 'a' && c <= 'f')                    ? c - 'a' + 10
				: (c >= 'A' && c <= 'F')                    ? c - 'A' + 10
									    : -1;
			if (v < 0)
				return bad("not a hex digit");
			for (int b = 0; b < 4; b++)
				bits.push_back((v >> b) & 1);
		}
		if (bits.size() > 65536)
			return bad("too long");
	}
	std::string out;
	for (size_t i = 0; i < bits.size();) {
		if (!bits[i]) {
			i++;
			continue;
		}
		size_t j = i;
		while (j + 1 < bits.size() && bits[j + 1])
			j++;
		out += (out.empty() ? "" : ",") + std::to_string(i) + (j > i ? "-" + std::to_string(j) : "");
		i = j + 1;
	}
	return out;
}

std::string mask_from_cpulist(std::string_view cpus)
{
	std::vector<bool> bits;
	size_t p = 0;
	while (p < cpus.size()) {
		size_t comma = cpus.find(',', p);
		std::string part(cpus.substr(p, comma == std::string_view::npos ? std::string_view::npos : comma - p));
		long a = std::strtol(part.c_str(), nullptr, 10), b = a;
		if (size_t d = part.find('-'); d != std::string::npos)
			b = std::strtol(part.c_str() + d + 1, nullptr, 10);
		for (long k = a; k <= b && k >= 0 && k < 65536; k++) {
			if (bits.size() <= static_cast<size_t>(k))
				bits.resize(static_cast<size_t>(k) + 1);
			bits[static_cast<size_t>(k)] = true;
		}
		if (comma == std::string_view::npos)
			break;
		p = comma + 1;
	}
	size_t words = bits.empty() ? 1 : (bits.size() + 31) / 32;
	std::string out;
	for (size_t w = words; w-- > 0;) {
		unsigned v = 0;
		for (size_t b = 0; b < 32; b++)
			if (w * 32 + b < bits.size() && bits[w * 32 + b])
				v |= 1u << b;
		char buf[9];
		std::snprintf(buf, sizeof(buf), "%08x", v);
		out += (out.empty() ? "" : ",") + std::string(buf);
	}
	return out;
}

namespace {

struct Walk {
	NodeSpec n;
	int numa = -1;
	std::map<const XmlElement *, std::vector<size_t>> gpus_under, nics_under; // bridge -> items
};

// "32.0 GT/s PCIe" or "16 GT/s" -> 32 / 16; 0 when absent or unreadable.
double gts_of(const XmlElement &e)
{
	const std::string *v = e.attr("link_speed");
	if (!v)
		return 0;
	char *end = nullptr;
	double g = std::strtod(v->c_str(), &end);
	return end != v->c_str() && g > 0 && g <= 1024 ? g : 0;
}

int width_of(const XmlElement &e)
{
	const std::string *v = e.attr("link_width");
	int w = v ? std::atoi(v->c_str()) : 0;
	return w > 0 && w <= 64 ? w : 0;
}

bool class_is(const XmlElement &e, const char *prefix)
{
	const std::string *c = e.attr("class");
	return c && c->rfind(prefix, 0) == 0;
}

status walk(const XmlElement &e, const XmlElement *bridge, Walk &w, const std::string &source)
{
	std::string where = source + ":" + std::to_string(e.line);
	if (e.name == "cpu") {
		const std::string *id = e.attr("numaid");
		w.numa = id ? std::atoi(id->c_str()) : -1;
		NumaSpec m;
		m.id = w.numa < 0 ? 0 : w.numa;
		m.where = where;
		if (const std::string *aff = e.attr("affinity")) {
			auto cl = cpulist_from_mask(*aff);
			if (!cl)
				return unexpected(where, cl.error().message);
			m.cpus = *cl;
		}
		if (id)
			w.n.numas.push_back(m);
		if (const std::string *a = e.attr("arch"); a && w.n.cpu.arch.empty())
			w.n.cpu.arch = *a;
		if (const std::string *v = e.attr("vendor"); v && w.n.cpu.vendor.empty())
			w.n.cpu.vendor = *v;
		if (const std::string *f = e.attr("familyid"); f && w.n.cpu.family < 0)
			w.n.cpu.family = static_cast<int>(std::strtol(f->c_str(), nullptr, 0));
		if (const std::string *mo = e.attr("modelid"); mo && w.n.cpu.model < 0)
			w.n.cpu.model = static_cast<int>(std::strtol(mo->c_str(), nullptr, 0));
	} else if (e.name == "pci" && (class_is(e, "0x0302") || class_is(e, "0x0300"))) {
		GpuSpec g;
		g.index = static_cast<int>(w.n.gpus.size());
		g.pci_bus_id = e.attr("busid") ? *e.attr("busid") : "";
		g.numa = w.numa;
		g.where = where;
		g.pcie_gts = gts_of(e);
		g.pcie_width = width_of(e);
		w.gpus_under[bridge].push_back(w.n.gpus.size());
		w.n.gpus.push_back(g);
		return ok();
	} else if (e.name == "pci" && (class_is(e, "0x0207") || (class_is(e, "0x0200") && !e.children.empty()))) {
		NicSpec x;
		x.pci_bus_id = e.attr("busid") ? *e.attr("busid") : "";
		x.device = x.pci_bus_id.empty() ? "nic" + std::to_string(w.n.nics.size()) : x.pci_bus_id;
		x.link_layer = class_is(e, "0x0207") ? LinkLayer::infiniband : LinkLayer::ethernet;
		x.numa = w.numa;
		x.pcie_gts = gts_of(e);
		x.pcie_width = width_of(e);
		x.rail = static_cast<int>(w.n.nics.size());
		x.where = where;
		for (const auto &nic : e.children)
			for (const auto &net : nic.children)
				if (net.name == "net") {
					if (const std::string *nm = net.attr("name"))
						x.device = *nm;
					if (const std::string *sp = net.attr("speed"))
						x.rate_gbps = std::atof(sp->c_str()) / 1000.0;
					if (const std::string *pt = net.attr("port"))
						x.port = std::atoi(pt->c_str());
				}
		w.nics_under[bridge].push_back(w.n.nics.size());
		w.n.nics.push_back(x);
		return ok();
	}
	const XmlElement *b = e.name == "pci" ? &e : bridge;
	for (const auto &k : e.children)
		if (status st = walk(k, b, w, source); !st)
			return st;
	if (e.name == "cpu")
		w.numa = -1;
	return ok();
}

} // namespace

expected<NodeSpec> parse_nccl_topology(std::string_view text, const std::string &source)
{
	auto doc = parse_xml(text, source);
	if (!doc)
		return unexpected(doc.error());
	if (doc->name != "system")
		return unexpected(source + ":" + std::to_string(doc->line),
				  "expected <system>, found <" + doc->name + ">");
	Walk w;
	w.n.where = source;
	if (status st = walk(*doc, nullptr, w, source); !st)
		return unexpected(st.error());
	if (w.n.gpus.size() > max_gpus_per_node || w.n.nics.size() > max_nics_per_node)
		return unexpected(source, "too many GPUs or NICs");
	for (auto &[bridge, gs] : w.gpus_under) {
		auto it = w.nics_under.find(bridge);
		if (bridge == nullptr || it == w.nics_under.end() || it->second.empty())
			continue;
		for (size_t k = 0; k < gs.size(); k++)
			w.n.gpus[gs[k]].nic = w.n.nics[it->second[k % it->second.size()]].device;
	}
	return w.n;
}

namespace {

// NCCL's link_speed words (topo.cc kvDictPciGen): "8.0 GT/s PCIe", "2.5 GT/s PCIe".
std::string link_speed_text(double gts)
{
	char buf[32];
	std::snprintf(buf, sizeof buf, "%.1f GT/s PCIe", gts);
	return buf;
}

// The PCIe generation of a GPU whose file did not say, by its model: Pascal
// and Volta Gen3, Ampere Gen4, Hopper, Ada and Blackwell Gen5; 0 unknown.
double default_gts(const std::string &model)
{
	static const std::pair<const char *, double> gens[] = {
		{"P100", 8},  {"V100", 8},  {"A100", 16}, {"A30", 16},   {"A40", 16},   {"A10", 16},
		{"H100", 32}, {"H200", 32}, {"H20", 32},  {"H800", 32},  {"GH200", 32}, {"L40", 32},
		{"L4", 32},   {"B100", 32}, {"B200", 32}, {"GB200", 32}, {"B300", 32}};
	for (auto [name, gts] : gens)
		if (model.find(name) != std::string::npos)
			return gts;
	return 0;
}

} // namespace

expected<std::string> write_nccl_topology(const Cluster &c, Index node)
{
	const Node &n = c.nodes[node];
	// NCCL's loader requires arch= on every <cpu>, vendor= on x86_64, and
	// familyid=/modelid= for Intel (familyid= for AMD) [topo.cc ncclTopoAddCpu].
	std::string arch = n.cpu_arch == "aarch64" ? "arm64" : n.cpu_arch;
	auto cpu_unknown = [&](const char *what) {
		return unexpected(n.name,
				  std::string("the node's CPU ") + what +
					  " is unknown, and NCCL's topology file needs it (it comes from an hwloc "
					  "or NCCL XML of the node, or loom topo discover)");
	};
	if (arch.empty())
		return cpu_unknown("architecture");
	bool x86 = arch == "x86_64";
	if (x86 && n.cpu_vendor.empty())
		return cpu_unknown("vendor");
	bool intel = n.cpu_vendor == "GenuineIntel" || n.cpu_vendor.find("Shanghai") != std::string::npos ||
		     n.cpu_vendor == "CentaurHauls";
	if (x86 && (intel || n.cpu_vendor == "AuthenticAMD") && n.cpu_family < 0)
		return cpu_unknown("family");
	if (x86 && intel && n.cpu_model < 0)
		return cpu_unknown("model");
	std::string out = "<system version=\"1\">\n";
	std::map<int, std::vector<Index>> gpus_by_numa;
	for (uint16_t k = 0; k < n.gpu_count; k++) {
		const Gpu &g = c.gpus[n.gpu_begin + k];
		if (g.pci_bus_id.empty())
			return unexpected(n.name, "GPU " + std::to_string(g.index) + " has no PCI bus id");
		gpus_by_numa[g.numa].push_back(n.gpu_begin + k);
	}
	int bridge = 1;
	for (auto &[numa, gs] : gpus_by_numa) {
		out += "  <cpu numaid=\"" + std::to_string(numa < 0 ? 0 : numa) + "\"";
		for (uint16_t k = 0; k < n.numa_count; k++)
			if (c.numas[n.numa_begin + k].id == numa && !c.numas[n.numa_begin + k].cpus.empty())
				out += " affinity=\"" + mask_from_cpulist(c.numas[n.numa_begin + k].cpus) + "\"";
		out += " arch=\"" + xml_escape(arch) + "\"";
		if (!n.cpu_vendor.empty())
			out += " vendor=\"" + xml_escape(n.cpu_vendor) + "\"";
		if (n.cpu_family >= 0)
			out += " familyid=\"" + std::to_string(n.cpu_family) + "\"";
		if (n.cpu_model >= 0)
			out += " modelid=\"" + std::to_string(n.cpu_model) + "\"";
		out += ">\n";
		for (Index gi : gs) {
			const Gpu &g = c.gpus[gi];
			double gts = g.pcie_gts > 0 ? g.pcie_gts : default_gts(c.models.name(g.model));
			if (gts <= 0)
				return unexpected(n.name,
						  "GPU " + std::to_string(g.index) + " (" + c.models.name(g.model) +
							  "): its PCIe link speed is unknown, and NCCL's topology file "
							  "needs it");
			std::string width = std::to_string(g.pcie_width > 0 ? g.pcie_width : 16);
			std::string link = " link_speed=\"" + link_speed_text(gts) + "\" link_width=\"" + width + "\"";
			char busid[32];
			std::snprintf(busid, sizeof(busid), "ffff:ff:%02x.0", bridge++ & 0xff);
			out += "    <pci busid=\"" + std::string(busid) + "\" class=\"0x060400\"" + link + ">\n";
			out += "      <pci busid=\"" + xml_escape(g.pci_bus_id) + "\" class=\"0x030200\"" + link +
			       "/>\n";
			if (g.nic != none && !c.nics[g.nic].pci_bus_id.empty()) {
				const Nic &x = c.nics[g.nic];
				std::string nic_link =
					x.pcie_gts > 0
						? " link_speed=\"" + link_speed_text(x.pcie_gts) + "\" link_width=\"" +
							  std::to_string(x.pcie_width > 0 ? x.pcie_width : 16) + "\""
						: link;
				out += "      <pci busid=\"" + xml_escape(x.pci_bus_id) + "\" class=\"" +
				       (x.link_layer == LinkLayer::ethernet ? "0x020000" : "0x020700") + "\"" +
				       nic_link + "/>\n";
			}
			out += "    </pci>\n";
		}
		out += "  </cpu>\n";
	}
	out += "</system>\n";
	return out;
}

} // namespace loom::topo
