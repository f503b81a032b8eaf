// loom topo: discover, build, show, check, convert (see loom-topo(1)).
#include "tools/command.hpp"

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
int topo_check(int argc, char **argv);
int topo_show(int argc, char **argv);
} // namespace loom::tool

using namespace loom;
using namespace loom::topo;

namespace {

std::string g_sub; // the subcommand being run, for messages ("" before one is known)

const char usage_text[] =
	"usage: loom topo discover [--root DIR] [--hwloc-xml FILE] [--hostname NAME] [--json] [-o FILE]\n"
	"       loom topo build --fabric FILE [--from-format F] [--placeholders skip|guid] [--level-names A,B]\n"
	"                 [-o FILE] NODEFILE...\n"
	"       loom topo show [--json] [--depth N] CLUSTER\n"
	"       loom topo check --slurm-conf FILE CLUSTER | --fabric IBNETDISCOVER_OUTPUT\n"
	"       loom topo ranks [--hostfile] CLUSTER NODELIST  (the rank order spank_place gives a job)\n"
	"       loom topo convert --from FILE [--from-format F] --to FORMAT [-o FILE|DIR] [--node NAME]\n"
	"                 [--gpus-per-node N] [--gpu-model M] [--node-features FILE] [--class-features A,B]\n"
	"                 [--placeholders skip|guid]  (HCAs whose node description names no host)\n"
	"                 [--level-names leaf,su,spine]  (kinds by height where the file names none)\n"
	"formats in:  json, topology.conf, block (topology.conf of topology/block), topology.yaml, ibnetdiscover,\n"
	"             hwloc, nccl\n"
	"formats out: json, topology.conf, block, topology.yaml (Slurm 25.05+), gres.conf, nccl\n"
	"exit codes: 0 ok, 1 problems found, 2 bad usage\n";

int bad_usage(const std::string &msg)
{
	std::fprintf(stderr, "loom topo%s%s: %s\n%s", g_sub.empty() ? "" : " ", g_sub.c_str(), msg.c_str(), usage_text);
	return tool::exit_usage;
}

int fail(const Error &e)
{
	std::fprintf(stderr, "loom topo%s%s: %s\n", g_sub.empty() ? "" : " ", g_sub.c_str(), e.str().c_str());
	return tool::exit_problems;
}

// Options "--key value" and positional words; flags listed in 'flags' take no value.
struct Args {
	std::map<std::string, std::string> opt;
	std::vector<std::string> pos;
	std::string error;
	Args(int argc, char **argv, std::initializer_list<const char *> valued, std::initializer_list<const char *> flags)
	{
		for (int i = 1; i < argc; i++) {
			std::string a = argv[i];
			if (a.size() < 2 || a[0] != '-') {
				pos.push_back(a);
				continue;
			}
			bool known = false;
			for (const char *f : flags)
				if (a == f) {
					opt[a] = "1";
					known = true;
				}
			for (const char *v : valued)
				if (a == v) {
					if (i + 1 >= argc) {
						error = a + " needs a value";
						return;
					}
					opt[a] = argv[++i];
					known = true;
				}
			if (!known) {
				error = "unknown option '" + a + "'";
				return;
			}
		}
	}
	bool has(const char *k) const { return opt.count(k) != 0; }
	std::string get(const char *k, std::string fallback = {}) const
	{
		auto it = opt.find(k);
		return it == opt.end() ? fallback : it->second;
	}
};

// --placeholders skip|guid: HCAs whose node description names no host are
// left out (reported), or kept as one node per HCA named hca-<GUID>.
int placeholders_option(const Args &a, ReadOptions &ro)
{
	if (!a.has("--placeholders"))
		return tool::exit_ok;
	std::string v = a.get("--placeholders");
	if (v != "skip" && v != "guid")
		return bad_usage("--placeholders '" + shown(v) + "': expected skip or guid");
	ro.ib.placeholders_by_guid = v == "guid";
	return tool::exit_ok;
}

// --level-names A,B,C: kinds by height (leaf level first).
int level_names_option(const Args &a, ClusterSpec &spec)
{
	if (!a.has("--level-names"))
		return tool::exit_ok;
	std::string v = a.get("--level-names");
	for (size_t p = 0; p <= v.size();) {
		size_t c = v.find(',', p);
		std::string w = v.substr(p, c == std::string::npos ? std::string::npos : c - p);
		if (w.empty() || w == nvlink_kind || w.find_first_of(" \t:=") != std::string::npos)
			return bad_usage("--level-names '" + shown(v) + "': expected names like leaf,su,spine (not empty, not "
					 "nvlink, no spaces, ':' or '=')");
		spec.level_names.push_back(w);
		if (c == std::string::npos)
			break;
		p = c + 1;
	}
	return tool::exit_ok;
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

int discover(int argc, char **argv)
{
	Args a(argc, argv, {"--root", "--hwloc-xml", "--hostname", "-o"}, {"--json"});
	if (!a.error.empty() || !a.pos.empty())
		return bad_usage(a.error.empty() ? "discover takes no positional arguments" : a.error);
	DiscoverOptions o;
	o.root = a.get("--root", "/");
	o.hwloc_xml = a.get("--hwloc-xml");
	o.hostname = a.get("--hostname");
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
	if (a.has("--json") || a.has("-o"))
		return write_out(a.get("-o"), write_cluster_json(*c, {true, false}));
	const Node &n = c->nodes[0];
	std::printf("node %s: %u GPUs, %u NICs, %u NUMA nodes; hwloc %s, NVML %s\n", n.name.c_str(), n.gpu_count,
		    n.nic_count, n.numa_count, d->hwloc_loaded ? "loaded" : "not used", d->nvml_loaded ? "loaded" : "not found");
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

int build(int argc, char **argv)
{
	Args a(argc, argv, {"--fabric", "--from-format", "-o", "--placeholders", "--level-names"}, {});
	if (!a.error.empty())
		return bad_usage(a.error);
	if (!a.has("--fabric"))
		return bad_usage("build needs --fabric FILE");
	std::string note;
	ReadOptions ro;
	if (int rc = placeholders_option(a, ro); rc != tool::exit_ok)
		return rc;
	auto fabric = read_spec_file(a.get("--fabric"), parse_format_name(a.get("--from-format")), &note, ro);
	if (!fabric)
		return fail(fabric.error());
	if (int rc = level_names_option(a, *fabric); rc != tool::exit_ok)
		return rc;
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
				std::fprintf(stderr, "loom topo build: %s: node '%s' is not in the fabric file\n", path.c_str(),
					     n.name.c_str());
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
	int rc = write_out(a.get("-o"), write_cluster_json(*c));
	return problems ? tool::exit_problems : rc;
}

int convert(int argc, char **argv)
{
	Args a(argc, argv,
	       {"--from", "--from-format", "--to", "-o", "--node", "--gpus-per-node", "--gpu-model", "--node-features",
		"--class-features", "--name", "--placeholders", "--level-names"},
	       {});
	if (!a.error.empty() || !a.pos.empty())
		return bad_usage(a.error.empty() ? "convert takes options only" : a.error);
	// Values first: a bad one is named even when something else is missing.
	int64_t gpus_per_node = 0;
	if (a.has("--gpus-per-node")) {
		auto n = parse_int(a.get("--gpus-per-node"), 0, static_cast<int64_t>(max_gpus_per_node));
		if (!n)
			return tool::bad_value("loom topo convert", "--gpus-per-node", a.get("--gpus-per-node"), n.error().message);
		gpus_per_node = *n;
	}
	if (!a.has("--from") || !a.has("--to"))
		return bad_usage("convert needs --from FILE and --to FORMAT");
	Format from = parse_format_name(a.get("--from-format"));
	if (a.has("--from-format") && from == Format::unknown)
		return bad_usage("unknown input format '" + a.get("--from-format") + "'");
	std::string to = a.get("--to");
	if (to != "json" && to != "topology.conf" && to != "block" && to != "topology.yaml" && to != "gres.conf" &&
	    to != "nccl")
		return bad_usage("unknown output format '" + to +
				 "' (json, topology.conf, block, topology.yaml, gres.conf or nccl)");
	std::string note;
	ReadOptions ro;
	if (int rc = placeholders_option(a, ro); rc != tool::exit_ok)
		return rc;
	auto spec = read_spec_file(a.get("--from"), from, &note, ro);
	if (!spec)
		return fail(spec.error());
	if (!note.empty())
		std::fprintf(stderr, "loom topo convert: %s\n", note.c_str());
	NodeFacts fallback;
	if (a.has("--gpus-per-node"))
		fallback.gpus = static_cast<int>(gpus_per_node);
	fallback.gpu_model = a.get("--gpu-model");
	std::map<std::string, NodeFacts> facts;
	if (a.has("--node-features")) {
		std::vector<std::string> classes;
		std::string cf = a.get("--class-features");
		for (size_t p = 0; p < cf.size();) {
			size_t c = cf.find(',', p);
			classes.push_back(cf.substr(p, c == std::string::npos ? std::string::npos : c - p));
			p = c == std::string::npos ? cf.size() : c + 1;
		}
		auto f = read_node_facts(a.get("--node-features"), classes);
		if (!f)
			return fail(f.error());
		facts = std::move(*f);
	}
	apply_node_facts(*spec, facts, fallback);
	if (int rc = level_names_option(a, *spec); rc != tool::exit_ok)
		return rc;
	if (a.has("--name"))
		spec->name = a.get("--name");
	auto c = build_cluster(std::move(*spec));
	if (!c)
		return fail(c.error());
	if (to == "json")
		return write_out(a.get("-o"), write_cluster_json(*c));
	if (to == "topology.conf") {
		if (c->domains.empty())
			return fail(Error(a.get("--from"), "no switches to write: the input has no fabric"));
		return write_out(a.get("-o"), write_topology_conf(*c));
	}
	if (to == "block") {
		auto x = write_block_conf(*c);
		return x ? write_out(a.get("-o"), *x) : fail(x.error().within(a.get("--from")));
	}
	if (to == "topology.yaml")
		return write_out(a.get("-o"), write_topology_yaml(*c));
	if (to == "gres.conf") {
		std::string out;
		for (Index n = 0; n < static_cast<Index>(c->nodes.size()); n++)
			out += write_gres_conf(*c, n);
		return write_out(a.get("-o"), out);
	}
	// nccl: one node to -o FILE / stdout, or every node into -o DIR.
	if (a.has("--node") || c->nodes.size() == 1) {
		Index n = a.has("--node") ? c->find_node(a.get("--node")) : 0;
		if (n == none)
			return fail(Error(a.get("--from"), "no node '" + a.get("--node") + "'"));
		auto x = write_nccl_topology(*c, n);
		return x ? write_out(a.get("-o"), *x) : fail(x.error());
	}
	if (!a.has("-o"))
		return bad_usage("--to nccl with several nodes needs --node NAME or -o DIR");
	for (Index n = 0; n < static_cast<Index>(c->nodes.size()); n++) {
		auto x = write_nccl_topology(*c, n);
		if (!x)
			return fail(x.error());
		if (int rc = write_out(path_join(a.get("-o"), c->nodes[n].name + ".xml"), *x); rc)
			return rc;
	}
	return tool::exit_ok;
}

// The rank order of a node list (spank_place's LOOM_NODE_RANK and
// LOOM_HOSTFILE), and what a ring over it crosses in Slurm's order (the
// list as given) and in loom's.
int ranks(int argc, char **argv)
{
	Args a(argc, argv, {}, {"--hostfile"});
	if (!a.error.empty())
		return bad_usage(a.error);
	if (a.pos.size() != 2)
		return bad_usage("expected CLUSTER and NODELIST");
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
	if (a.has("--hostfile")) {
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
				      nd.nvlink_domain == none ? std::string("-") : c->nvlink_domains[nd.nvlink_domain].name);
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

int topo_main(int argc, char **argv)
{
	if (argc < 2)
		return bad_usage("missing subcommand");
	std::string sub = argv[1];
	if (sub == "--help" || sub == "-h" || sub == "help") {
		std::fputs(usage_text, stdout);
		return tool::exit_ok;
	}
	if (sub == "discover" || sub == "build" || sub == "convert" || sub == "ranks")
		g_sub = sub;
	bool known = sub == "discover" || sub == "build" || sub == "convert" || sub == "show" || sub == "check" ||
		     sub == "ranks";
	if (known && tool::asks_help(argc - 1, argv + 1)) {
		std::fputs(usage_text, stdout);
		return tool::exit_ok;
	}
	if (sub == "discover")
		return discover(argc - 1, argv + 1);
	if (sub == "build")
		return build(argc - 1, argv + 1);
	if (sub == "convert")
		return convert(argc - 1, argv + 1);
	if (sub == "show")
		return tool::topo_show(argc - 1, argv + 1);
	if (sub == "check")
		return tool::topo_check(argc - 1, argv + 1);
	if (sub == "ranks")
		return ranks(argc - 1, argv + 1);
	return bad_usage("unknown subcommand '" + sub + "'");
}

const tool::Command topo_command{"topo", "fabric topology: discover, build, show, check, convert, ranks", topo_main};

} // namespace
