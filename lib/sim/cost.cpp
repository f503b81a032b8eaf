// loom sim: communication and class cost of a placement.
#include "lib/sim/cost.hpp"

#include "lib/place/search.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace loom::sim {

const char *comm_model_name(CommModel m) { return m == CommModel::ring ? "ring" : "share"; }

expected<CommModel> parse_comm_model(std::string_view s)
{
	if (s == "share")
		return CommModel::share;
	if (s == "ring")
		return CommModel::ring;
	return unexpected("unknown communication model '" + std::string(s) + "': expected share or ring");
}

namespace {

// Names with their digit runs compared as numbers.
bool name_less(const std::string &a, const std::string &b)
{
	size_t i = 0, j = 0;
	while (i < a.size() && j < b.size()) {
		bool da = a[i] >= '0' && a[i] <= '9', db = b[j] >= '0' && b[j] <= '9';
		if (da && db) {
			size_t ie = i, je = j;
			while (ie < a.size() && a[ie] >= '0' && a[ie] <= '9')
				ie++;
			while (je < b.size() && b[je] >= '0' && b[je] <= '9')
				je++;
			size_t ia = i, jb = j; // skip leading zeros
			while (ia + 1 < ie && a[ia] == '0')
				ia++;
			while (jb + 1 < je && b[jb] == '0')
				jb++;
			if (ie - ia != je - jb)
				return ie - ia < je - jb;
			int cmp = a.compare(ia, ie - ia, b, jb, je - jb);
			if (cmp)
				return cmp < 0;
			i = ie;
			j = je;
			continue;
		}
		if (a[i] != b[j])
			return a[i] < b[j];
		i++;
		j++;
	}
	if ((a.size() - i) != (b.size() - j))
		return a.size() - i < b.size() - j;
	return a < b;
}

double uplink(const topo::Cluster &c, const CostModel &m, topo::Index d)
{
	double f = static_cast<size_t>(d) < m.uplink_factor.size() ? m.uplink_factor[static_cast<size_t>(d)] : 1;
	return c.domains[static_cast<size_t>(d)].uplink_gbps * f;
}

double crossing_at(const CostModel &m, topo::Index d)
{
	return static_cast<size_t>(d) < m.crossing->size() ? (*m.crossing)[static_cast<size_t>(d)] : 0;
}

// The ring model's bottleneck over the domains below 'low' (see cost.hpp).
double ring_bottleneck(const topo::Cluster &c, const std::vector<topo::Index> &nodes, topo::Index low,
		       const CostModel &m, double ref, int &leaf_edges)
{
	std::vector<topo::Index> order = nodes;
	if (m.rank_order) {
		std::vector<place::Pick> picks;
		picks.reserve(order.size());
		for (topo::Index n : order)
			picks.push_back({n, c.nodes[static_cast<size_t>(n)].gpu_count});
		place::rank_order(c, picks);
		for (size_t i = 0; i < picks.size(); i++)
			order[i] = picks[i].node;
	} else if (!m.slurm_rank.empty()) { // Slurm's: the node table's order
		std::sort(order.begin(), order.end(), [&](topo::Index x, topo::Index y) {
			return m.slurm_rank[static_cast<size_t>(x)] < m.slurm_rank[static_cast<size_t>(y)];
		});
	} else {
		std::sort(order.begin(), order.end());
	}
	std::unordered_map<topo::Index, double> gpus_in;  // the job's GPUs under a domain
	std::unordered_map<topo::Index, int64_t> leaving; // ring edges leaving it
	for (topo::Index n : order) {
		const topo::Node &node = c.nodes[static_cast<size_t>(n)];
		for (topo::Index d = node.leaf; d != topo::none && d != low;
		     d = c.domains[static_cast<size_t>(d)].parent)
			gpus_in[d] += node.gpu_count;
	}
	leaf_edges = 0;
	for (size_t i = 0; i < order.size(); i++) {
		const topo::Node &a = c.nodes[static_cast<size_t>(order[i])];
		const topo::Node &b = c.nodes[static_cast<size_t>(order[(i + 1) % order.size()])];
		if (a.leaf == b.leaf || (a.nvlink_domain != topo::none && a.nvlink_domain == b.nvlink_domain))
			continue;
		leaf_edges++;
		topo::Index common = c.common_domain(order[i], order[(i + 1) % order.size()]);
		for (topo::Index d = a.leaf; d != topo::none && d != common;
		     d = c.domains[static_cast<size_t>(d)].parent)
			leaving[d]++;
	}
	int g = 0;
	for (topo::Index n : order)
		g = std::max<int>(g, c.nodes[static_cast<size_t>(n)].gpu_count);
	double b = ref;
	for (const auto &[d, x] : leaving) {
		const topo::Domain &dom = c.domains[static_cast<size_t>(d)];
		double up = uplink(c, m, d);
		if (up <= 0 || dom.gpu_count <= 0)
			continue;                                                // not limiting, or unknown
		double others = static_cast<double>(dom.gpu_count) - gpus_in[d]; // a full domain
		if (m.crossing)
			others = std::min(others, std::max(0.0, crossing_at(m, d)));
		double share = up * gpus_in[d] / (gpus_in[d] + std::max(0.0, others));
		b = std::min(b, share / (static_cast<double>(x) * std::max(1, g)));
	}
	return b;
}

// A node's class speed (1 when its class has none).
double class_speed(const topo::Cluster &c, const CostModel &m, const topo::Node &node)
{
	if (node.perf_class < c.classes.size()) {
		auto it = m.class_speed.find(c.classes.name(node.perf_class));
		if (it != m.class_speed.end())
			return it->second;
	}
	return 1;
}

// The lowest domain holding every node (none: the whole cluster). The
// common_domain of the first node with each in turn: the lowest over all is
// the one of smallest level.
topo::Index lowest_common(const topo::Cluster &c, const std::vector<topo::Index> &nodes)
{
	topo::Index low = topo::none;
	for (topo::Index n : nodes) {
		topo::Index d = c.common_domain(nodes[0], n);
		if (d == topo::none)
			return topo::none;
		if (low == topo::none ||
		    c.domains[static_cast<size_t>(d)].level < c.domains[static_cast<size_t>(low)].level)
			low = d;
	}
	return low;
}

// The domains below 'low' whose uplinks the job crosses, with its GPUs under
// each, by domain.
std::vector<std::pair<topo::Index, double>> crossed(const topo::Cluster &c, const std::vector<topo::Index> &nodes,
						    topo::Index low)
{
	std::unordered_map<topo::Index, double> under;
	for (topo::Index n : nodes) {
		const topo::Node &node = c.nodes[static_cast<size_t>(n)];
		for (topo::Index d = node.leaf; d != topo::none && d != low;
		     d = c.domains[static_cast<size_t>(d)].parent)
			under[d] += node.gpu_count;
	}
	std::vector<std::pair<topo::Index, double>> out(under.begin(), under.end());
	std::sort(out.begin(), out.end());
	return out;
}

// The share model's bottleneck: each crossed uplink shared by every GPU
// under it (or, with contention, by those that send across it).
double share_bottleneck(const topo::Cluster &c, const CostModel &m, const Span &s, double ref)
{
	double b = ref;
	for (const auto &[d, g] : s.crossing) {
		const topo::Domain &dom = c.domains[static_cast<size_t>(d)];
		if (dom.uplink_gbps <= 0 || dom.gpu_count <= 0)
			continue;                                    // not limiting, or unknown
		double senders = static_cast<double>(dom.gpu_count); // a full domain
		if (m.crossing)
			senders = std::min(senders, g + std::max(0.0, crossing_at(m, d)));
		b = std::min(b, uplink(c, m, d) / std::max(senders, 1.0));
	}
	return b;
}

} // namespace

std::vector<uint32_t> slurm_order(const topo::Cluster &c)
{
	std::vector<uint32_t> idx(c.nodes.size());
	for (size_t i = 0; i < idx.size(); i++)
		idx[i] = static_cast<uint32_t>(i);
	std::stable_sort(idx.begin(), idx.end(),
			 [&](uint32_t x, uint32_t y) { return name_less(c.nodes[x].name, c.nodes[y].name); });
	std::vector<uint32_t> rank(c.nodes.size());
	for (size_t i = 0; i < idx.size(); i++)
		rank[idx[i]] = static_cast<uint32_t>(i);
	return rank;
}

Span placement_cost(const topo::Cluster &c, const std::vector<topo::Index> &nodes, place::Comm comm, const CostModel &m)
{
	Span s;
	if (nodes.empty())
		return s;
	std::unordered_set<topo::Index> leaves, nvl;
	bool all_nvl = true;
	double speed = 1e300;
	for (topo::Index n : nodes) {
		const topo::Node &node = c.nodes[static_cast<size_t>(n)];
		leaves.insert(node.leaf);
		if (node.nvlink_domain != topo::none)
			nvl.insert(node.nvlink_domain);
		else
			all_nvl = false;
		speed = std::min(speed, class_speed(c, m, node));
	}
	topo::Index low = lowest_common(c, nodes);
	s.leaves = static_cast<int>(leaves.size());
	if (!m.uplink_factor.empty())
		for (topo::Index l : leaves)
			if (l != topo::none && static_cast<size_t>(l) < m.uplink_factor.size() &&
			    m.uplink_factor[static_cast<size_t>(l)] < 1)
				s.degraded_leaves++;
	s.nvlink_domains = static_cast<int>(nvl.size());
	s.common_level = low == topo::none ? -1 : c.domains[static_cast<size_t>(low)].level;
	s.speed = speed > 0 && speed < 1e300 ? speed : 1;
	const topo::Node &first = c.nodes[static_cast<size_t>(nodes[0])];
	double ref = first.gpu_count ? first.nic_gbps / first.gpu_count : 0;
	if (nodes.size() == 1 || ref <= 0) {
		s.bottleneck_gbps = ref;
		return s;
	}
	bool one_nvl = all_nvl && nvl.size() == 1;
	if (leaves.size() > 1 && !one_nvl)
		s.crossing = crossed(c, nodes, low);
	double b = ref;
	if (one_nvl) {
		double g = c.nvlink_domains[static_cast<size_t>(*nvl.begin())].gbps;
		b = g > 0 ? g : ref;
	} else if (leaves.size() > 1 && m.model == CommModel::ring) {
		b = ring_bottleneck(c, nodes, low, m, ref, s.ring_leaf_edges);
	} else if (leaves.size() > 1) {
		b = share_bottleneck(c, m, s, ref);
	}
	s.bottleneck_gbps = b;
	double f = comm == place::Comm::heavy   ? m.comm_heavy
		   : comm == place::Comm::light ? m.comm_light
						: m.comm_normal;
	s.step_factor = (1 - f) + f * ref / b;
	return s;
}

} // namespace loom::sim
