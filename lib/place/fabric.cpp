// The fabric select/topo places on (fabric.hpp).
#include "lib/place/fabric.hpp"

#include "lib/place/topo_conf.hpp"
#include "lib/topo/build.hpp"
#include "lib/topo/formats.hpp"
#include "lib/topo/slurm_conf.hpp"
#include "lib/util/fs.hpp"

#include <algorithm>
#include <set>
#include <sys/stat.h>
#include <unordered_map>

namespace loom::place {
namespace {

bool exists(const std::string &path)
{
	struct stat st;
	return !path.empty() && ::stat(path.c_str(), &st) == 0;
}

std::string class_of(const SlurmNodeInfo &n, const std::vector<std::string> &class_features)
{
	for (const auto &f : n.features)
		if (std::find(class_features.begin(), class_features.end(), f) != class_features.end())
			return f;
	return {};
}

// A node known only from its Slurm record: GPUs on one NVSwitch, the class
// from its features.
void fill_from_slurm(topo::NodeSpec &spec, const SlurmNodeInfo &n, const std::vector<std::string> &class_features)
{
	std::string cls = class_of(n, class_features);
	if (spec.gpus.empty()) {
		for (int i = 0; i < n.gpus; i++) {
			topo::GpuSpec g;
			g.index = i;
			g.model = cls;
			g.perf_class = cls;
			g.nvswitch = n.gpus > 1;
			g.where = "slurm.conf node " + n.name;
			spec.gpus.push_back(std::move(g));
		}
	}
	if (spec.perf_class.empty())
		spec.perf_class = cls;
	std::set<std::string> have(spec.features.begin(), spec.features.end());
	for (const auto &f : n.features)
		if (have.insert(f).second)
			spec.features.push_back(f);
}

} // namespace

expected<Fabric> load_fabric(const std::string &cluster_file, const std::string &topology_conf,
			     const std::vector<SlurmNodeInfo> &slurm_nodes,
			     const std::vector<std::string> &class_features,
			     const std::vector<std::string> &level_names)
{
	Fabric out;
	topo::ClusterSpec spec;
	if (!cluster_file.empty()) {
		auto s = topo::read_spec_file(cluster_file);
		if (!s)
			return unexpected(s.error());
		spec = std::move(*s);
		out.source = cluster_file;
	} else if (exists(topology_conf)) {
		auto text = read_file(topology_conf);
		if (!text)
			return unexpected(text.error());
		// topology/tree's SwitchName= lines, topology/block's BlockName= lines,
		// or topology.yaml (25.05+).
		topo::Format f = topo::guess_format(*text, topology_conf);
		if (f != topo::Format::block_conf && f != topo::Format::topology_yaml)
			f = topo::Format::topology_conf;
		auto s = topo::read_spec(*text, topology_conf, f);
		if (!s)
			return unexpected(s.error());
		spec = std::move(*s);
		out.source = topology_conf;
	} else {
		out.source = "(no fabric file: every node on its own leaf)";
	}
	if (spec.name.empty())
		spec.name = "slurm";
	spec.level_names = level_names;

	std::unordered_map<std::string, size_t> by_name;
	for (size_t i = 0; i < spec.nodes.size(); i++)
		by_name.emplace(spec.nodes[i].name, i);
	std::set<std::string> in_slurm;
	for (const auto &n : slurm_nodes) {
		in_slurm.insert(n.name);
		auto it = by_name.find(n.name);
		if (it != by_name.end()) {
			fill_from_slurm(spec.nodes[it->second], n, class_features);
			continue;
		}
		// Not in the fabric: a leaf of its own (a domain needs a node list).
		topo::DomainSpec d;
		d.name = "alone:" + n.name;
		d.kind = "leaf";
		d.where = "slurm.conf node " + n.name;
		topo::NodeSpec ns;
		ns.name = n.name;
		ns.domain = d.name;
		ns.where = d.where;
		fill_from_slurm(ns, n, class_features);
		spec.domains.push_back(std::move(d));
		by_name.emplace(n.name, spec.nodes.size());
		spec.nodes.push_back(std::move(ns));
		out.alone.push_back(n.name);
	}
	for (const auto &n : spec.nodes)
		if (!in_slurm.count(n.name))
			out.unknown.push_back(n.name);
	auto c = topo::build_cluster(std::move(spec));
	if (!c)
		return unexpected(c.error().within(out.source));
	out.cluster = std::move(*c);
	return out;
}

std::string topology_file_in(const std::string &dir, bool yaml)
{
	std::string base = dir.empty() || dir.back() == '/' ? dir : dir + "/";
	if (yaml && exists(base + "topology.yaml"))
		return base + "topology.yaml";
	return base + "topology.conf";
}

expected<Fabric> load_fabric_in(const std::string &dir, bool yaml)
{
	std::string base = dir.empty() || dir.back() == '/' ? dir : dir + "/";
	auto cfg = read_topo_conf(base + "loom-topo.conf");
	if (!cfg)
		return unexpected(cfg.error());
	return load_fabric(cfg->cluster_file, topology_file_in(dir, yaml), {}, cfg->gpu_classes, cfg->level_names);
}

} // namespace loom::place
