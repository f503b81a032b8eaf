// loom topo: discover, build, show, check, convert (see loom-topo(1)).
#include "tools/command.hpp"
#include "tools/loom_topo_args.hpp"

#include "lib/place/ranks.hpp"
#include "lib/topo/build.hpp"
#include "lib/topo/cluster_json.hpp"
#include "lib/topo/discover.hpp"
#include "lib/topo/formats.hpp"
#include "lib/topo/nccl_xml.hpp"
#include "lib/topo/slurm_conf.hpp"
#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/json.hpp"

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace loom::tool {
int topo_check(const TopoArgs &a, const OptionTable &t);
int topo_show(const TopoArgs &a, const OptionTable &t);
} // namespace loom::tool

using namespace loom;
using namespace loom::topo;

namespace {

std::string g_sub; // the subcommand being run, for messages

int fail(const Error &e)
{
	std::fprintf(stderr, "loom topo %s: %s\n", g_sub.c_str(), e.str().c_str());
	return tool::exit_problems;
}

int bad_usage(const tool::OptionTable &t, const std::string &msg)
{
	std::fprintf(stderr, "%s: %s\n", t.cmd().c_str(), msg.c_str());
	t.usage(stderr);
	return tool::exit_usage;
}

int write_out(const std::string &path, const std::string &text)
{
	if (path.empty() || path == "-") {
		std::fwrite(text.data(), 1, text.size(), stdout);
		return tool::exit_ok;
	}
	if (status st = write_file_atomic(path, text); !st)
		return fail(st.error());
	return tool::exit_ok;
}

int discover(const tool::TopoArgs &a)
{
	DiscoverOptions o;
	o.root = a.root;
	o.hwloc_xml = a.hwloc_xml;
	o.hostname = a.hostname;
	auto d = discover_node(o);
	if (!d)
		return fail(d.error());
	for (const auto &n : d->notes)
		std::fprintf(stderr, "loom topo discover: %s\n", n.c_str());
	ClusterSpec s;
	if (!d->nvlink_domain.empty())
		s.nvlink_domains.push_back(NvlinkDomainSpec{d->nvlink_domain, 0, ""});
	s.nodes.push_back(d->node);
	auto c = build_cluster(std::move(s));
	if (!c)
		return fail(c.error());
	if (a.json || a.has("-o"))
		return write_out(a.out, write_cluster_json(*c, {true, false}));
	const Node &n = c->nodes[0];
	std::printf("node %s: %u GPUs, %u NICs, %u NUMA nodes; hwloc %s, NVML %s\n", n.name.c_str(), n.gpu_count,
		    n.nic_count, n.numa_count, d->hwloc_loaded ? "loaded" : "not used",
		    d->nvml_loaded ? "loaded" : "not found");
	for (uint16_t k = 0; k < n.gpu_count; k++) {
		const Gpu &g = c->gpus[n.gpu_begin + k];
		std::printf("  gpu %u %s %s numa %d nvlinks %u%s nic %s\n", g.index, g.pci_bus_id.c_str(),
			    c->models.name(g.model).c_str(), g.numa, g.nvlinks, g.nvswitch ? " (nvswitch)" : "",
			    g.nic == none ? "-" : c->nics[g.nic].device.c_str());
	}
	for (uint16_t k = 0; k < n.nic_count; k++) {
		const Nic &x = c->nics[n.nic_begin + k];
		std::printf("  nic %s port %u %s %g Gb/s rail %d numa %d\n", x.device.c_str(), x.port,
			    link_layer_name(x.link_layer), x.rate_gbps, x.rail, x.numa);
	}
	return tool::exit_ok;
}

int build(const tool::TopoArgs &a)
{
	std::string note;
	auto fabric = read_spec_file(a.fabric, a.from_format, &note, a.read);
	if (!fabric)
		return fail(fabric.error());
	fabric->level_names.insert(fabric->level_names.end(), a.level_names.begin(), a.level_names.end());
	std::map<std::string, size_t> at;
	for (size_t i = 0; i < fabric->nodes.size(); i++)
		at[fabric->nodes[i].name] = i;
	int problems = 0;
	for (const auto &path : a.pos) {
		auto node = read_spec_file(path, Format::loom_json);
		if (!node)
			return fail(node.error());
		for (auto &n : node->nodes) {
			auto it = at.find(n.name);
			if (it == at.end()) {
				std::fprintf(stderr, "loom topo build: %s: node '%s' is not in the fabric file\n",
					     path.c_str(), n.name.c_str());
				problems++;
				continue;
			}
			NodeSpec &f = fabric->nodes[it->second];
			f.gpus = n.gpus;
			f.numas = n.numas;
			if (!n.nics.empty())
				f.nics = n.nics; // the node knows its PCI and NUMA placement best
			f.features = n.features;
			f.perf_class = n.perf_class;
			if (!n.nvlink_domain.empty()) {
				f.nvlink_domain = n.nvlink_domain;
				bool known = false;
				for (const auto &v : fabric->nvlink_domains)
					known = known || v.name == n.nvlink_domain;
				if (!known)
					fabric->nvlink_domains.push_back(NvlinkDomainSpec{n.nvlink_domain, 0, path});
			}
		}
	}
	auto c = build_cluster(std::move(*fabric));
	if (!c)
		return fail(c.error());
	int rc = write_out(a.out, write_cluster_json(*c));
	return problems ? tool::exit_problems : rc;
}

// The node facts of --node-features and --gpus-per-node/--gpu-model, applied.
int apply_facts(const tool::TopoArgs &a, ClusterSpec &spec)
{
	NodeFacts fallback;
	if (a.has("--gpus-per-node"))
		fallback.gpus = static_cast<int>(a.gpus_per_node);
	fallback.gpu_model = a.gpu_model;
	std::map<std::string, NodeFacts> facts;
	if (a.has("--node-features")) {
		std::vector<std::string> classes;
		const std::string &cf = a.class_features;
		for (size_t p = 0; p < cf.size();) {
			size_t c = cf.find(',', p);
			classes.push_back(cf.substr(p, c == std::string::npos ? std::string::npos : c - p));
			p = c == std::string::npos ? cf.size() : c + 1;
		}
		auto f = read_node_facts(a.node_features, classes);
		if (!f)
			return fail(f.error());
		facts = std::move(*f);
	}
	apply_node_facts(spec, facts, fallback);
	return -1;
}

// --to nccl: one node to -o FILE / stdout, or every node into -o DIR.
int write_nccl(const tool::TopoArgs &a, const tool::OptionTable &t, const Cluster &c)
{
	if (a.has("--node") || c.nodes.size() == 1) {
		Index n = a.has("--node") ? c.find_node(a.node) : 0;
		if (n == none)
			return fail(Error(a.from, "no node '" + a.node + "'"));
		auto x = write_nccl_topology(c, n);
		return x ? write_out(a.out, *x) : fail(x.error());
	}
	if (!a.has("-o"))
		return bad_usage(t, "--to nccl with several nodes needs --node NAME or -o DIR");
	for (Index n = 0; n < static_cast<Index>(c.nodes.size()); n++) {
		auto x = write_nccl_topology(c, n);
		if (!x)
			return fail(x.error());
		if (int rc = write_out(path_join(a.out, c.nodes[n].name + ".xml"), *x); rc)
			return rc;
	}
	return tool::exit_ok;
}

int write_as(const tool::TopoArgs &a, const tool::OptionTable &t, const Cluster &c)
{
	const std::string &to = a.to;
	if (to == "json")
		return write_out(a.out, write_cluster_json(c));
	if (to == "topology.conf") {
		if (c.domains.empty())
			return fail(Error(a.from, "no switches to write: the input has no fabric"));
		return write_out(a.out, write_topology_conf(c));
	}
	if (to == "block") {
		auto x = write_block_conf(c);
		return x ? write_out(a.out, *x) : fail(x.error().within(a.from));
	}
	if (to == "topology.yaml")
		return write_out(a.out, write_topology_yaml(c));
	if (to == "gres.conf") {
		std::string out;
		for (Index n = 0; n < static_cast<Index>(c.nodes.size()); n++)
			out += write_gres_conf(c, n);
		return write_out(a.out, out);
	}
	return write_nccl(a, t, c);
}

int convert(const tool::TopoArgs &a, const tool::OptionTable &t)
{
	if (!a.pos.empty())
		return bad_usage(t, "convert takes options only");
	if (!a.has("--from") || !a.has("--to"))
		return bad_usage(t, "convert needs --from FILE and --to FORMAT");
	std::string note;
	auto spec = read_spec_file(a.from, a.from_format, &note, a.read);
	if (!spec)
		return fail(spec.error());
	if (!note.empty())
		std::fprintf(stderr, "loom topo convert: %s\n", note.c_str());
	if (int rc = apply_facts(a, *spec); rc >= 0)
		return rc;
	spec->level_names.insert(spec->level_names.end(), a.level_names.begin(), a.level_names.end());
	if (a.has("--name"))
		spec->name = a.name;
	auto c = build_cluster(std::move(*spec));
	if (!c)
		return fail(c.error());
	return write_as(a, t, *c);
}

// The rank order of a node list (spank_place's LOOM_NODE_RANK and
// LOOM_HOSTFILE), and what a ring over it crosses in Slurm's order (the
// list as given) and in loom's.
int ranks(const tool::TopoArgs &a, const tool::OptionTable &t)
{
	if (a.pos.size() != 2)
		return bad_usage(t, "expected CLUSTER and NODELIST");
	auto spec = read_spec_file(a.pos[0]);
	if (!spec)
		return fail(spec.error());
	auto c = build_cluster(std::move(*spec));
	if (!c)
		return fail(c.error());
	auto hosts = hostlist_expand(a.pos[1]);
	if (!hosts)
		return fail(Error("node list '" + a.pos[1] + "': " + hosts.error().str()));
	auto order = place::rank_order(*c, *hosts);
	if (!order)
		return fail(order.error());
	if (a.hostfile) {
		for (const std::string &h : *order)
			std::printf("%s\n", h.c_str());
		return tool::exit_ok;
	}
	auto where = [&](const std::string &h) {
		Index n = c->find_node(h);
		if (n == none)
			return std::make_pair(std::string("(not in the fabric)"), std::string("-"));
		const Node &nd = c->nodes[n];
		return std::make_pair(nd.leaf == none ? std::string("-") : c->domains[nd.leaf].name,
				      nd.nvlink_domain == none ? std::string("-")
							       : c->nvlink_domains[nd.nvlink_domain].name);
	};
	std::printf("%-5s %-20s %-20s %s\n", "rank", "node", "leaf", "nvlink");
	for (size_t i = 0; i < order->size(); i++) {
		auto [leaf, nvl] = where((*order)[i]);
		std::printf("%-5zu %-20s %-20s %s\n", i, (*order)[i].c_str(), leaf.c_str(), nvl.c_str());
	}
	place::RingCrossings slurm = place::ring_crossings(*c, *hosts), loom = place::ring_crossings(*c, *order);
	std::printf("ring neighbours on different leaves: %zu of %zu in Slurm's order, %zu in loom's\n", slurm.leaf,
		    slurm.hops, loom.leaf);
	if (!c->nvlink_domains.empty())
		std::printf("ring neighbours in different NVLink domains: %zu of %zu in Slurm's order, %zu in loom's\n",
			    slurm.nvlink, slurm.hops, loom.nvlink);
	return tool::exit_ok;
}

int run(const std::string &sub, const tool::TopoArgs &a, const tool::OptionTable &t)
{
	if (sub == "discover")
		return a.pos.empty() ? discover(a) : bad_usage(t, "discover takes no positional arguments");
	if (sub == "build")
		return a.has("--fabric") ? build(a) : bad_usage(t, "build needs --fabric FILE");
	if (sub == "convert")
		return convert(a, t);
	if (sub == "show")
		return tool::topo_show(a, t);
	if (sub == "check")
		return tool::topo_check(a, t);
	return ranks(a, t);
}

int topo_main(int argc, char **argv)
{
	std::string sub = argc > 1 ? argv[1] : "";
	if (sub == "--help" || sub == "-h" || sub == "help") {
		tool::topo_usage(stdout);
		return tool::exit_ok;
	}
	if (sub != "discover" && sub != "build" && sub != "convert" && sub != "show" && sub != "check" &&
	    sub != "ranks") {
		std::fprintf(stderr, "loom topo: %s\n",
			     sub.empty() ? "missing subcommand" : ("unknown subcommand '" + sub + "'").c_str());
		tool::topo_usage(stderr);
		return tool::exit_usage;
	}
	g_sub = sub;
	tool::TopoArgs a;
	tool::OptionTable t = tool::topo_options(sub, a);
	if (int rc = t.parse(argc - 1, argv + 1); rc >= 0)
		return rc;
	return run(sub, a, t);
}

const tool::Command topo_command{"topo", "fabric topology: discover, build, show, check, convert, ranks", topo_main};

} // namespace
