#include "lib/place/ranks.hpp"

#include "lib/place/search.hpp"
#include "lib/util/hostlist.hpp"

#include <algorithm>

#include <charconv>
#include <unordered_map>
#include <unordered_set>

namespace loom::place {

expected<std::vector<std::string>> rank_order(const topo::Cluster &c, const std::vector<std::string> &hosts)
{
	std::unordered_set<std::string_view> seen;
	std::vector<Pick> picks;
	std::vector<std::string> unknown;
	for (const std::string &h : hosts) {
		if (!seen.insert(h).second)
			return unexpected("host '" + h + "' is named twice");
		topo::Index n = c.find_node(h);
		if (n == topo::none)
			unknown.push_back(h);
		else
			picks.push_back({n, 0});
	}
	place::rank_order(c, picks);
	std::vector<std::string> out;
	out.reserve(hosts.size());
	for (const Pick &p : picks)
		out.push_back(c.nodes[p.node].name);
	for (std::string &h : unknown)
		out.push_back(std::move(h));
	return out;
}

RingCrossings ring_crossings(const topo::Cluster &c, const std::vector<std::string> &order)
{
	RingCrossings r;
	size_t n = order.size();
	if (n < 2)
		return r;
	// Per host: (leaf, NVLink domain); an unknown host or a node of no domain
	// gets an id of its own past every real one.
	std::vector<std::pair<int64_t, int64_t>> at(n);
	int64_t own = static_cast<int64_t>(c.domains.size());
	for (size_t i = 0; i < n; i++) {
		topo::Index m = c.find_node(order[i]);
		if (m == topo::none) {
			at[i] = {own, own};
			own++;
			continue;
		}
		const topo::Node &nd = c.nodes[m];
		int64_t leaf = nd.leaf == topo::none ? own++ : static_cast<int64_t>(nd.leaf);
		int64_t nvl = nd.nvlink_domain == topo::none ? own++ : static_cast<int64_t>(nd.nvlink_domain);
		at[i] = {leaf, nvl};
	}
	r.hops = n == 2 ? 1 : n; // two hosts: one edge, not two
	for (size_t i = 0; i < r.hops; i++) {
		const auto &a = at[i], &b = at[(i + 1) % n];
		r.leaf += a.first != b.first;
		r.nvlink += a.second != b.second;
	}
	return r;
}

expected<std::vector<int>> tasks_per_node(std::string_view text, size_t nodes)
{
	std::vector<int> out;
	std::string_view rest = text;
	if (rest.empty())
		return unexpected("tasks per node: empty");
	while (!rest.empty()) {
		size_t comma = rest.find(',');
		std::string_view part = rest.substr(0, comma);
		rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
		if (comma != std::string_view::npos && rest.empty())
			return unexpected("tasks per node '" + std::string(text) + "': ends with a comma");
		int tasks = 0;
		long times = 1;
		auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), tasks);
		if (ec != std::errc() || tasks < 0)
			return unexpected("tasks per node '" + std::string(text) + "': '" + std::string(part) +
					  "' is not a count or count(xN)");
		std::string_view tail(p, static_cast<size_t>(part.data() + part.size() - p));
		if (!tail.empty()) {
			if (tail.size() < 4 || tail.substr(0, 2) != "(x" || tail.back() != ')')
				return unexpected("tasks per node '" + std::string(text) + "': '" + std::string(part) +
						  "' is not a count or count(xN)");
			std::string_view num = tail.substr(2, tail.size() - 3);
			auto [q, ec2] = std::from_chars(num.data(), num.data() + num.size(), times);
			if (ec2 != std::errc() || q != num.data() + num.size() || times < 1)
				return unexpected("tasks per node '" + std::string(text) + "': '" + std::string(part) +
						  "' has a bad repeat count");
		}
		if (out.size() + static_cast<size_t>(times) > nodes)
			return unexpected("tasks per node '" + std::string(text) + "' names more than the " +
					  std::to_string(nodes) + " nodes");
		out.insert(out.end(), static_cast<size_t>(times), tasks);
	}
	if (out.size() != nodes)
		return unexpected("tasks per node '" + std::string(text) + "' names " + std::to_string(out.size()) +
				  " nodes, the step has " + std::to_string(nodes));
	return out;
}

} // namespace loom::place

namespace loom::place {

expected<StepRanks> step_ranks(const topo::Cluster &c, std::string_view nodelist, std::string_view this_node,
			       std::string_view tasks)
{
	auto hosts = hostlist_expand(nodelist);
	if (!hosts)
		return unexpected("node list '" + std::string(nodelist) + "': " + hosts.error().str());
	if (hosts->empty())
		return unexpected("node list is empty");
	auto order = rank_order(c, *hosts);
	if (!order)
		return unexpected("node list '" + std::string(nodelist) + "': " + order.error().str());
	StepRanks r;
	r.order = std::move(*order);
	auto at = std::find(r.order.begin(), r.order.end(), this_node);
	if (at == r.order.end())
		return unexpected("this node '" + std::string(this_node) + "' is not in the node list '" +
				  std::string(nodelist) + "'");
	r.node_rank = static_cast<size_t>(at - r.order.begin());
	if (!tasks.empty()) {
		auto counts = tasks_per_node(tasks, hosts->size());
		if (!counts)
			return unexpected(counts.error());
		std::unordered_map<std::string_view, int> of;
		for (size_t i = 0; i < hosts->size(); i++)
			of[(*hosts)[i]] = (*counts)[i];
		for (const std::string &h : r.order)
			r.task_hosts.insert(r.task_hosts.end(), static_cast<size_t>(of[h]), h);
	}
	return r;
}

} // namespace loom::place
