// loom topo: its subcommands' options, one table each (loom_topo_args.hpp).
#include "tools/loom_topo_args.hpp"

#include "tools/command.hpp"

#include "lib/topo/build.hpp"
#include "lib/topo/model.hpp"
#include "lib/util/config.hpp"

#include <algorithm>

namespace loom::tool {

const char topo_formats[] =
	"formats in:  json, topology.conf, block (topology.conf of topology/block), topology.yaml, ibnetdiscover,\n"
	"             hwloc, nccl\n"
	"formats out: json, topology.conf, block, topology.yaml (Slurm 25.05+), gres.conf, nccl";

bool TopoArgs::has(const std::string &option) const
{
	return std::find(given.begin(), given.end(), option) != given.end();
}

namespace {

const char *const subcommands[] = {"discover", "build", "show", "check", "ranks", "convert"};

Setter set_placeholders(topo::ReadOptions &ro)
{
	return [&ro](const std::string &v) {
		if (v != "skip" && v != "guid")
			return std::string("expected skip or guid");
		ro.ib.placeholders_by_guid = v == "guid";
		return std::string();
	};
}

Setter set_level_names(std::vector<std::string> &out)
{
	return [&out](const std::string &v) {
		out.clear();
		for (size_t p = 0; p <= v.size();) {
			size_t c = v.find(',', p);
			std::string w = v.substr(p, c == std::string::npos ? std::string::npos : c - p);
			if (w.empty() || w == topo::nvlink_kind || w.find_first_of(" \t:=") != std::string::npos)
				return std::string("expected names like leaf,su,spine (not empty, not nvlink, no "
						   "spaces, ':' or '=')");
			out.push_back(w);
			if (c == std::string::npos)
				break;
			p = c + 1;
		}
		return std::string();
	};
}

Setter set_from_format(topo::Format &out)
{
	return [&out](const std::string &v) {
		out = topo::parse_format_name(v);
		return out == topo::Format::unknown ? "unknown input format (" + topo::readable_formats() + ")"
						    : std::string();
	};
}

Setter take_positional(TopoArgs &a)
{
	return [&a](const std::string &v) {
		a.pos.push_back(v);
		return std::string();
	};
}

void add_reading(OptionTable &t, TopoArgs &a)
{
	t.add("--placeholders", "skip|guid",
	      "HCAs whose node description names no host: left out (skip, reported) or kept\n"
	      "as one node per HCA named hca-<GUID> (guid)",
	      noted(a.given, "--placeholders", set_placeholders(a.read)))
		.add("--level-names", "A,B", "kinds by height (leaf first) where the file names none: leaf,su,spine",
		     noted(a.given, "--level-names", set_level_names(a.level_names)))
		.add("-o", "FILE", "write here (default: standard output)", noted(a.given, "-o", set_string(a.out)));
}

OptionTable discover_options(TopoArgs &a)
{
	OptionTable t("loom topo discover", "[--root DIR] [--hwloc-xml FILE] [--hostname NAME] [--json] [-o FILE]",
		      "This node's GPUs, NICs and NUMA nodes (hwloc, NVML when present, sysfs).");
	t.add("--root", "DIR", "read /sys and /proc under DIR (a recorded node)", set_string(a.root))
		.add("--hwloc-xml", "FILE", "hwloc's XML of the node instead of asking hwloc", set_string(a.hwloc_xml))
		.add("--hostname", "NAME", "the node's name (default: the host name)", set_string(a.hostname))
		.add("--json", "", "the node as a loom cluster file", set_flag(a.json))
		.add("-o", "FILE", "write the cluster file here", noted(a.given, "-o", set_string(a.out)));
	return t;
}

OptionTable build_options(TopoArgs &a)
{
	OptionTable t(
		"loom topo build",
		"--fabric FILE [--from-format F] [--placeholders skip|guid] [--level-names A,B] [-o FILE] NODEFILE...",
		"The cluster file: the fabric from FILE, each node's hardware from its NODEFILE\n"
		"(loom topo discover --json).");
	t.add("--fabric", "FILE", "the fabric (any format in)", noted(a.given, "--fabric", set_string(a.fabric)))
		.add("--from-format", "F", "its format (default: from the content)", set_from_format(a.from_format));
	add_reading(t, a);
	t.positional(take_positional(a)).epilog(topo_formats);
	return t;
}

OptionTable convert_options(TopoArgs &a)
{
	OptionTable t("loom topo convert", "--from FILE [--from-format F] --to FORMAT [-o FILE|DIR] [OPTION]...",
		      "One format to another; a node's GPUs from Slurm's files or the options below.");
	t.add("--from", "FILE", "the input", noted(a.given, "--from", set_string(a.from)))
		.add("--from-format", "F", "its format (default: from the content)", set_from_format(a.from_format))
		.add("--to", "FORMAT", "the output format",
		     noted(a.given, "--to",
			   set_choice(a.to, {"json", "topology.conf", "block", "topology.yaml", "gres.conf", "nccl"})))
		.add("--node", "NAME", "--to nccl: that node only", noted(a.given, "--node", set_string(a.node)))
		.add("--gpus-per-node", "N", "GPUs of a node the input does not describe",
		     noted(a.given, "--gpus-per-node",
			   set_int(a.gpus_per_node, 0, static_cast<int64_t>(topo::max_gpus_per_node))))
		.add("--gpu-model", "M", "their model", set_string(a.gpu_model))
		.add("--node-features", "FILE", "slurm.conf or a NodeName= file: each node's Gres and Features",
		     noted(a.given, "--node-features", set_string(a.node_features)))
		.add("--class-features", "A,B", "the Features that name a GPU class", set_string(a.class_features))
		.add("--name", "NAME", "the cluster's name", noted(a.given, "--name", set_string(a.name)));
	add_reading(t, a);
	t.epilog(topo_formats);
	return t;
}

OptionTable ranks_options(TopoArgs &a)
{
	OptionTable t("loom topo ranks", "[--hostfile] CLUSTER NODELIST",
		      "The rank order spank_place gives a job on NODELIST, and what a ring over it crosses.");
	t.add("--hostfile", "", "the nodes in rank order, one per line (LOOM_HOSTFILE)", set_flag(a.hostfile))
		.positional(take_positional(a));
	return t;
}

OptionTable show_options(TopoArgs &a)
{
	OptionTable t("loom topo show", "[--json] [--depth N] CLUSTER", "The cluster's domains, nodes and GPUs.");
	t.add("--json", "", "machine-readable output", set_flag(a.json))
		.add("--depth", "N", "levels of domains to show", set_int(a.depth, 0, 64))
		.positional(take_positional(a));
	return t;
}

OptionTable check_options(TopoArgs &a)
{
	OptionTable t("loom topo check", "--slurm-conf FILE CLUSTER | --fabric IBNETDISCOVER_OUTPUT",
		      "Every Slurm node placed once in the cluster file; HCAs of a fabric that name no host.");
	t.add("--slurm-conf", "FILE", "slurm.conf (its NodeName= lines)", set_string(a.slurm_conf))
		.add("--fabric", "FILE", "ibnetdiscover's output", set_string(a.fabric))
		.positional(take_positional(a));
	return t;
}

} // namespace

OptionTable topo_options(const std::string &sub, TopoArgs &a)
{
	if (sub == "discover")
		return discover_options(a);
	if (sub == "build")
		return build_options(a);
	if (sub == "convert")
		return convert_options(a);
	if (sub == "ranks")
		return ranks_options(a);
	if (sub == "show")
		return show_options(a);
	return check_options(a);
}

void topo_usage(FILE *out)
{
	bool first = true;
	for (const char *sub : subcommands) {
		TopoArgs a;
		OptionTable t = topo_options(sub, a);
		std::fprintf(out, "%s%s %s\n", first ? "usage: " : "       ", t.cmd().c_str(), t.synopsis().c_str());
		first = false;
	}
	std::fprintf(out, "%s\nexit codes: 0 ok, 1 problems found, 2 bad usage\n", topo_formats);
}

} // namespace loom::tool
