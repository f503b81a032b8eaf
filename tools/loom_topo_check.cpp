// loom topo show and loom topo check.
#include "tools/command.hpp"

#include "lib/topo/check.hpp"
#include "lib/topo/cluster_json.hpp"
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

int topo_show(int argc, char **argv)
{
	bool json = false;
	int depth = -1;
	std::string path;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		if (a == "--json")
			json = true;
		else if (a == "--depth" && i + 1 < argc)
			depth = std::atoi(argv[++i]);
		else if (a[0] != '-' && path.empty())
			path = a;
		else {
			std::fprintf(stderr, "loom topo show: bad argument '%s'\nusage: loom topo show [--json] [--depth N] CLUSTER\n", a.c_str());
			return exit_usage;
		}
	}
	if (path.empty()) {
		std::fprintf(stderr, "usage: loom topo show [--json] [--depth N] CLUSTER\n");
		return exit_usage;
	}
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
			vo.set("name", Json::string(v.name)).set("nodes", Json::integer(static_cast<int64_t>(v.nodes.size())));
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
		    c->name.empty() ? "(unnamed)" : c->name.c_str(), c->nodes.size(), static_cast<long long>(c->total_gpus()),
		    c->domains.size(), c->levels, c->nvlink_domains.size());
	std::printf("locality kinds: %s\n", join(locality_kinds(*c), ", ").c_str());
	for (Index d = 0; d < static_cast<Index>(c->domains.size()); d++)
		if (c->domains[d].parent == none)
			draw(*c, d, "  ", depth);
	for (const auto &v : c->nvlink_domains)
		std::printf("  nvlink %s: %zu nodes, %lld GPUs\n", v.name.c_str(), v.nodes.size(),
			    static_cast<long long>(v.gpu_count));
	return exit_ok;
}

int topo_check(int argc, char **argv)
{
	std::string cluster, slurm_conf;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		if (a == "--slurm-conf" && i + 1 < argc)
			slurm_conf = argv[++i];
		else if (a[0] != '-' && cluster.empty())
			cluster = a;
		else {
			std::fprintf(stderr, "loom topo check: bad argument '%s'\n", a.c_str());
			return exit_usage;
		}
	}
	if (cluster.empty() || slurm_conf.empty()) {
		std::fprintf(stderr, "usage: loom topo check --slurm-conf FILE CLUSTER\n");
		return exit_usage;
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
	auto problems = check_against_slurm(*spec, cluster, *slurm);
	for (const auto &p : problems)
		std::printf("%s\n", p.str().c_str());
	if (!problems.empty()) {
		std::fprintf(stderr, "loom topo check: %zu problems\n", problems.size());
		return exit_problems;
	}
	std::printf("ok: %zu Slurm nodes, each placed once in %s\n", slurm->size(), cluster.c_str());
	return exit_ok;
}

} // namespace loom::tool
