#include "lib/topo/formats.hpp"

#include "lib/topo/cluster_json.hpp"
#include "lib/topo/hwloc_xml.hpp"
#include "lib/topo/ibnetdiscover.hpp"
#include "lib/topo/nccl_xml.hpp"
#include "lib/topo/slurm_conf.hpp"
#include "lib/topo/try.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/log.hpp"

#include <algorithm>
#include <set>

namespace loom::topo {

const char *format_name(Format f)
{
	switch (f) {
	case Format::loom_json:
		return "json";
	case Format::topology_conf:
		return "topology.conf";
	case Format::block_conf:
		return "block";
	case Format::topology_yaml:
		return "topology.yaml";
	case Format::ibnetdiscover:
		return "ibnetdiscover";
	case Format::hwloc_xml:
		return "hwloc";
	case Format::nccl_xml:
		return "nccl";
	default:
		return "unknown";
	}
}

Format parse_format_name(std::string_view n)
{
	for (Format f : {Format::loom_json, Format::topology_conf, Format::block_conf, Format::topology_yaml,
			 Format::ibnetdiscover, Format::hwloc_xml, Format::nccl_xml})
		if (n == format_name(f))
			return f;
	return Format::unknown;
}

std::string readable_formats()
{
	return "json (loom's cluster file), topology.conf (topology/tree), block (topology.conf for topology/block), "
	       "topology.yaml (Slurm 25.05+), ibnetdiscover, hwloc (XML), nccl (NCCL topology XML)";
}

Format guess_format(std::string_view text, const std::string &path)
{
	std::string_view head = text.substr(0, 4096);
	std::string_view t = trim(head);
	if (!t.empty() && t[0] == '{')
		return Format::loom_json;
	if (head.find("<topology") != std::string_view::npos)
		return Format::hwloc_xml;
	if (head.find("<system") != std::string_view::npos)
		return Format::nccl_xml;
	if (head.find("switchguid=") != std::string_view::npos || head.find("caguid=") != std::string_view::npos ||
	    head.find("# Topology file") != std::string_view::npos)
		return Format::ibnetdiscover;
	if (head.find("SwitchName=") != std::string_view::npos || head.find("switchname=") != std::string_view::npos)
		return Format::topology_conf;
	// topology.yaml: a list of "- topology: NAME" entries.
	for (size_t p = 0; p < head.size();) {
		size_t e = head.find('\n', p);
		std::string_view l = trim(head.substr(p, e == std::string_view::npos ? std::string_view::npos : e - p));
		if (l.rfind("- topology:", 0) == 0 || l.rfind("topology:", 0) == 0)
			return Format::topology_yaml;
		if (e == std::string_view::npos)
			break;
		p = e + 1;
	}
	if (head.find("BlockName=") != std::string_view::npos || head.find("blockname=") != std::string_view::npos ||
	    head.find("BlockSizes=") != std::string_view::npos)
		return Format::block_conf;
	if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0)
		return Format::loom_json;
	return Format::unknown;
}

expected<ClusterSpec> read_spec(std::string_view text, const std::string &source, Format f, std::string *note,
				const ReadOptions &opt)
{
	if (f == Format::unknown)
		f = guess_format(text, source);
	switch (f) {
	case Format::loom_json: {
		// Another program's JSON (Topograph, NetQ, ...) is not a cluster file
		// with errors in it: say so before any JSON path.
		if (std::string_view t = trim(text.substr(0, 1 << 16));
		    !t.empty() && t[0] == '{' && t.find("\"version\"") == std::string_view::npos)
			return unexpected(source,
					  "unsupported format: JSON without loom's \"version\" field, so not a loom "
					  "cluster file (loom reads: " +
						  readable_formats() + ")");
		// Validate fully, then hand back the description.
		LOOM_TRY(c, read_cluster_json(text, source));
		return to_spec(c);
	}
	case Format::topology_conf:
		return parse_topology_conf(text, source);
	case Format::block_conf:
		return parse_block_conf(text, source);
	case Format::topology_yaml:
		return parse_topology_yaml(text, source);
	case Format::ibnetdiscover: {
		LOOM_TRY(fab, parse_ibnetdiscover(text, source, opt.ib));
		if (note)
			*note = fab.summary();
		return fab.spec;
	}
	case Format::nccl_xml:
	case Format::hwloc_xml: {
		auto n = f == Format::nccl_xml ? parse_nccl_topology(text, source) : parse_hwloc_xml(text, source);
		if (!n)
			return unexpected(n.error());
		// One machine: named after the file ("dgx2.xml" -> "dgx2").
		std::string base = source.substr(source.find_last_of('/') + 1);
		n->name = base.substr(0, base.find('.'));
		if (n->name.empty())
			n->name = "node";
		ClusterSpec s;
		s.nodes.push_back(std::move(*n));
		return s;
	}
	default:
		return unexpected(source, "unsupported format: this is none of the formats loom reads (" +
						  readable_formats() +
						  "); if it is one of them, give it with --from-format");
	}
}

expected<ClusterSpec> read_spec_file(const std::string &path, Format f, std::string *note, const ReadOptions &opt)
{
	LOOM_TRY(text, read_file(path));
	if (f == Format::unknown)
		f = guess_format(text, path);
	return read_spec(text, path, f, note, opt);
}

expected<std::map<std::string, NodeFacts>> read_node_facts(const std::string &path,
							   const std::vector<std::string> &class_features)
{
	LOOM_TRY(text, read_file(path));
	std::map<std::string, NodeFacts> out;
	auto classify = [&](NodeFacts &f) {
		for (const auto &feat : f.features)
			if (std::find(class_features.begin(), class_features.end(), feat) != class_features.end()) {
				if (f.gpu_model.empty())
					f.gpu_model = feat;
				f.perf_class = feat;
				break;
			}
		if (f.perf_class.empty())
			f.perf_class = f.gpu_model;
	};
	if (text.find("NodeName=") != std::string::npos || text.find("nodename=") != std::string::npos) {
		LOOM_TRY(nodes, parse_slurm_nodes(text, path));
		for (const auto &n : nodes) {
			NodeFacts f{n.gpus, n.gpu_type, "", n.features};
			classify(f);
			out[n.name] = f;
		}
		return out;
	}
	auto lines = split_lines(text);
	HostlistBudget node_names(max_cluster_nodes, "nodes");
	for (size_t i = 0; i < lines.size(); i++) {
		std::string l(trim(lines[i].substr(0, lines[i].find('#'))));
		if (l.empty())
			continue;
		std::string where = path + ":" + std::to_string(i + 1);
		size_t sp = l.find_first_of(" \t");
		auto names = node_names.expand(l.substr(0, sp));
		if (!names)
			return unexpected(where, names.error().message);
		NodeFacts f;
		std::string rest = sp == std::string::npos ? "" : std::string(trim(l.substr(sp)));
		for (size_t p = 0; p < rest.size();) {
			size_t c = rest.find(',', p);
			std::string w = rest.substr(p, c == std::string::npos ? std::string::npos : c - p);
			if (!w.empty())
				f.features.push_back(w);
			p = c == std::string::npos ? rest.size() : c + 1;
		}
		classify(f);
		for (auto &n : *names)
			out[n] = f;
	}
	return out;
}

void apply_node_facts(ClusterSpec &spec, const std::map<std::string, NodeFacts> &facts, const NodeFacts &fallback)
{
	for (auto &n : spec.nodes) {
		auto it = facts.find(n.name);
		NodeFacts f = it == facts.end() ? fallback : it->second;
		if (f.gpus < 0)
			f.gpus = fallback.gpus;
		if (f.gpu_model.empty())
			f.gpu_model = fallback.gpu_model;
		if (f.perf_class.empty())
			f.perf_class = fallback.perf_class.empty() ? f.gpu_model : fallback.perf_class;
		for (const auto &x : f.features)
			if (std::find(n.features.begin(), n.features.end(), x) == n.features.end())
				n.features.push_back(x);
		if (n.perf_class.empty())
			n.perf_class = f.perf_class;
		if (!n.gpus.empty() || f.gpus <= 0)
			continue;
		for (int k = 0; k < f.gpus && k < static_cast<int>(max_gpus_per_node); k++) {
			GpuSpec g;
			g.index = k;
			g.model = f.gpu_model;
			g.where = n.where;
			n.gpus.push_back(g);
		}
	}
}

} // namespace loom::topo
