// loom topo show and loom topo check.
#include "tools/command.hpp"
#include "tools/loom_topo_args.hpp"

#include "lib/topo/check.hpp"
#include "lib/topo/cluster_json.hpp"
#include "lib/topo/ibnetdiscover.hpp"
#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace loom;
using namespace loom::topo;

namespace loom::tool {

namespace {

Json domain_json(const Cluster &c, Index d, int depth)
{
	const Domain &dom = c.domains[d];
	Json o = Json::object();
	o.set("name", Json::string(dom.name)).set("kind", Json::string(c.kinds.name(dom.kind)));
	o.set("nodes", Json::integer(dom.node_count())).set("gpus", Json::integer(dom.gpu_count));
	if (std::vector<Index> rails = c.rails_of(d); !rails.empty()) {
		Json a = Json::array();
		for (Index r : rails)
			a.push(Json::string(c.rails[r].name));
		o.set("rails", std::move(a));
	}
	if (depth != 0 && !dom.children.empty()) {
		Json kids = Json::array();
		for (Index k : dom.children)
			kids.push(domain_json(c, k, depth - 1));
		o.set("children", std::move(kids));
	}
	return o;
}

void draw(const Cluster &c, Index d, const std::string &indent, int depth)
{
	const Domain &dom = c.domains[d];
	std::printf("%s%s %s: %d nodes, %lld GPUs", indent.c_str(), c.kinds.name(dom.kind).c_str(), dom.name.c_str(),
		    dom.node_count(), static_cast<long long>(dom.gpu_count));
	if (dom.direct_end > dom.node_begin)
		std::printf(" (%d attached)", dom.direct_end - dom.node_begin);
	if (size_t rails = c.rails_of(d).size())
		std::printf(", a rail group of %zu rail switches", rails);
	std::printf("\n");
	if (depth == 0)
		return;
	for (Index k : dom.children)
		draw(c, k, indent + "  ", depth - 1);
}

} // namespace

int topo_show(const TopoArgs &a, const OptionTable &t)
{
	if (a.pos.size() != 1) {
		std::fprintf(stderr, "loom topo show: %s\n", a.pos.empty() ? "which CLUSTER?" : "one CLUSTER only");
		t.usage(stderr);
		return exit_usage;
	}
	const std::string &path = a.pos[0];
	const bool json = a.json;
	const int depth = static_cast<int>(a.depth);
	auto c = load_cluster_file(path);
	if (!c) {
		std::fprintf(stderr, "loom topo show: %s\n", c.error().str().c_str());
		return exit_problems;
	}
	if (json) {
		Json o = Json::object();
		o.set("name", Json::string(c->name)).set("nodes", Json::integer(static_cast<int64_t>(c->nodes.size())));
		o.set("gpus", Json::integer(c->total_gpus())).set("levels", Json::integer(c->levels));
		Json roots = Json::array();
		for (Index d = 0; d < static_cast<Index>(c->domains.size()); d++)
			if (c->domains[d].parent == none)
				roots.push(domain_json(*c, d, depth));
		o.set("domains", std::move(roots));
		Json nvl = Json::array();
		for (const auto &v : c->nvlink_domains) {
			Json vo = Json::object();
			vo.set("name", Json::string(v.name))
				.set("nodes", Json::integer(static_cast<int64_t>(v.nodes.size())));
			vo.set("gpus", Json::integer(v.gpu_count));
			nvl.push(std::move(vo));
		}
		o.set("nvlink_domains", std::move(nvl));
		Json kinds = Json::array();
		for (const std::string &k : locality_kinds(*c))
			kinds.push(Json::string(k));
		o.set("locality_kinds", std::move(kinds));
		std::fputs(o.dump().c_str(), stdout);
		return exit_ok;
	}
	std::printf("cluster %s: %zu nodes, %lld GPUs, %zu domains in %u levels, %zu NVLink domains\n",
		    c->name.empty() ? "(unnamed)" : c->name.c_str(), c->nodes.size(),
		    static_cast<long long>(c->total_gpus()), c->domains.size(), c->levels, c->nvlink_domains.size());
	std::printf("locality kinds: %s\n", join(locality_kinds(*c), ", ").c_str());
	for (Index d = 0; d < static_cast<Index>(c->domains.size()); d++)
		if (c->domains[d].parent == none)
			draw(*c, d, "  ", depth);
	for (const auto &v : c->nvlink_domains)
		std::printf("  nvlink %s: %zu nodes, %lld GPUs\n", v.name.c_str(), v.nodes.size(),
			    static_cast<long long>(v.gpu_count));
	return exit_ok;
}

namespace {

// The HCAs of an ibnetdiscover file that are no compute node, one per line.
// Placeholders (a node whose description was never set) are problems: a
// machine Slurm should know is hidden behind them. Aggregation nodes and
// management servers are listed for the record.
int check_fabric(const std::string &path, size_t &problems)
{
	auto text = read_file(path, 1ull << 30);
	if (!text) {
		std::fprintf(stderr, "loom topo check: %s\n", text.error().str().c_str());
		return exit_problems;
	}
	auto f = parse_ibnetdiscover(*text, path);
	if (!f) {
		std::fprintf(stderr, "loom topo check: %s\n", f.error().str().c_str());
		return exit_problems;
	}
	std::printf("%s: %s\n", path.c_str(), f->summary().c_str());
	for (const IbLeftOut &l : f->left_out) {
		bool problem = l.why == IbLeftOut::Why::placeholder || l.why == IbLeftOut::Why::unnamed;
		problems += problem;
		std::printf("%s: HCA %s \"%s\" on %s port %d: %s%s\n", path.c_str(), l.guid.c_str(),
			    shown(l.desc, 60).c_str(), l.sw.empty() ? "no switch" : l.sw.c_str(), l.sw_port,
			    left_out_name(l.why),
			    problem ? " (set its node description, or convert with --placeholders guid)"
				    : ", not a compute node");
	}
	return exit_ok;
}

} // namespace

int topo_check(const TopoArgs &a, const OptionTable &t)
{
	const std::string &slurm_conf = a.slurm_conf, &fabric = a.fabric;
	std::string cluster = a.pos.size() == 1 ? a.pos[0] : "";
	if (a.pos.size() > 1 || (cluster.empty() != slurm_conf.empty()) || (cluster.empty() && fabric.empty())) {
		std::fprintf(stderr, "loom topo check: give --slurm-conf FILE CLUSTER, --fabric FILE, or both\n");
		t.usage(stderr);
		return exit_usage;
	}
	size_t problems = 0;
	if (!fabric.empty()) {
		if (int rc = check_fabric(fabric, problems); rc != exit_ok)
			return rc;
		if (cluster.empty()) {
			if (problems) {
				std::fprintf(stderr, "loom topo check: %zu HCAs whose node description names no host\n",
					     problems);
				return exit_problems;
			}
			return exit_ok;
		}
	}
	auto text = read_file(cluster, 1ull << 30);
	if (!text) {
		std::fprintf(stderr, "loom topo check: %s\n", text.error().str().c_str());
		return exit_problems;
	}
	// The model must build (names, references, cycles) before anything else.
	auto built = read_cluster_json(*text, cluster);
	if (!built) {
		std::fprintf(stderr, "loom topo check: %s\n", built.error().str().c_str());
		return exit_problems;
	}
	auto spec = parse_cluster_json(*text, cluster);
	auto conf = read_file(slurm_conf);
	if (!spec || !conf) {
		std::fprintf(stderr, "loom topo check: %s\n", (!spec ? spec.error() : conf.error()).str().c_str());
		return exit_problems;
	}
	auto slurm = parse_slurm_nodes(*conf, slurm_conf);
	if (!slurm) {
		std::fprintf(stderr, "loom topo check: %s\n", slurm.error().str().c_str());
		return exit_problems;
	}
	auto found = check_against_slurm(*spec, cluster, *slurm);
	for (const auto &p : found)
		std::printf("%s\n", p.str().c_str());
	problems += found.size();
	if (problems) {
		std::fprintf(stderr, "loom topo check: %zu problems\n", problems);
		return exit_problems;
	}
	std::printf("ok: %zu Slurm nodes, each placed once in %s\n", slurm->size(), cluster.c_str());
	return exit_ok;
}

} // namespace loom::tool
