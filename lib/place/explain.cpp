// Decisions as text and JSON, for `loom place --explain` and decision dumps.
#include "lib/place/explain.hpp"

#include "lib/util/hostlist.hpp"
#include "lib/util/json.hpp"
#include "lib/util/log.hpp"

namespace loom::place {

namespace {

std::vector<std::string> names(const topo::Cluster &c, const std::vector<Index> &nodes)
{
	std::vector<std::string> out;
	for (Index n : nodes)
		out.push_back(c.nodes[static_cast<size_t>(n)].name);
	return out;
}

Json score_json(const topo::Cluster &c, const Score &s)
{
	Json o = Json::object();
	o.set("common", Json::string(s.common == topo::none ? "" : c.domains[s.common].name));
	o.set("level", Json::integer(s.level));
	o.set("height", Json::integer(s.height));
	o.set("leaves", Json::integer(s.leaves));
	o.set("nvlink_domains", Json::integer(s.nvlink_domains));
	o.set("idle_nodes_broken", Json::integer(s.idle_nodes_broken));
	o.set("idle_leaves_broken", Json::integer(s.idle_leaves_broken));
	o.set("stranded", Json::number(s.stranded));
	o.set("faster_nodes", Json::integer(s.faster_nodes));
	o.set("classes", Json::integer(s.classes));
	o.set("suspect_nodes", Json::integer(s.suspect_nodes));
	o.set("health", Json::number(s.health));
	o.set("load", Json::number(s.load));
	o.set("locality", Json::number(s.locality));
	o.set("fragmentation", Json::number(s.fragmentation));
	o.set("class_penalty", Json::number(s.class_penalty));
	o.set("health_penalty", Json::number(s.health_penalty));
	o.set("load_penalty", Json::number(s.load_penalty));
	o.set("total", Json::number(s.total));
	return o;
}

} // namespace

std::string format_decision(const topo::Cluster &c, const Request &r, const Decision &d)
{
	std::string out = "request:   " + format_request(r) + "\n";
	if (!d.placed())
		return out + "pending:   " + d.reason + "\n";
	if (!d.tier.empty())
		out += "tier:      " + d.tier + "\n";
	for (size_t i = 0; i < d.candidates.size(); i++) {
		const Candidate &k = d.candidates[i];
		auto list = names(c, k.nodes);
		out += strprintf("%-10s %s\n",
				 i == 0   ? "chosen:"
				 : i == 1 ? "runner-up:"
					  : strprintf("#%zu:", i + 1).c_str(),
				 hostlist_compress(list).c_str());
		std::string ranks;
		for (size_t j = 0; j < list.size(); j++)
			ranks += strprintf("%s%zu=%s:%d", j ? " " : "", j, list[j].c_str(), k.gpus[j]);
		out += "  ranks:   " + ranks + "\n";
		out += "  why:     " + k.why + "\n";
		if (k.price_per_h >= 0) {
			int gpus = 0;
			for (int g : k.gpus)
				gpus += g;
			out += strprintf("  price:   %.2f per hour (%d GPUs)\n", k.price_per_h, gpus);
		}
	}
	if (d.class_pass == 2)
		out += "note:      the class asked for is full; a faster class is used\n";
	return out;
}

std::string decision_json(const topo::Cluster &c, const Request &r, const Decision &d, bool pretty)
{
	Json o = Json::object();
	o.set("request", Json::string(format_request(r)));
	o.set("placed", Json::boolean(d.placed()));
	o.set("reason", Json::string(d.reason));
	o.set("class_pass", Json::integer(d.class_pass));
	o.set("tier", Json::string(d.tier));
	o.set("gpu_class", Json::string(d.gpu_class));
	o.set("domains_examined", Json::integer(static_cast<int64_t>(d.domains_examined)));
	o.set("nodes_examined", Json::integer(static_cast<int64_t>(d.nodes_examined)));
	Json cands = Json::array();
	for (const Candidate &k : d.candidates) {
		Json e = Json::object();
		Json nodes = Json::array(), gpus = Json::array();
		for (size_t j = 0; j < k.nodes.size(); j++) {
			nodes.push(Json::string(c.nodes[static_cast<size_t>(k.nodes[j])].name));
			gpus.push(Json::integer(k.gpus[j]));
		}
		e.set("nodes", std::move(nodes));
		e.set("gpus", std::move(gpus));
		e.set("why", Json::string(k.why));
		if (k.price_per_h >= 0)
			e.set("price_per_h", Json::number(k.price_per_h));
		e.set("score", score_json(c, k.score));
		cands.push(std::move(e));
	}
	o.set("candidates", std::move(cands));
	return o.dump(pretty);
}

} // namespace loom::place
