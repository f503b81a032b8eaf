// The free-capacity index: per-node state and per-domain counts kept in O(depth).
#include "lib/place/state.hpp"

#include "lib/util/log.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>

namespace loom::place {

NodeMask::NodeMask(size_t nodes, bool all) : w_((nodes + 63) / 64, all ? ~uint64_t(0) : 0), n_(nodes)
{
	if (all && (nodes & 63))
		w_.back() = (uint64_t(1) << (nodes & 63)) - 1;
}

void NodeMask::set(Index i, bool on)
{
	if (i < 0 || static_cast<size_t>(i) >= n_)
		return;
	uint64_t bit = uint64_t(1) << (i & 63);
	if (on)
		w_[static_cast<size_t>(i) >> 6] |= bit;
	else
		w_[static_cast<size_t>(i) >> 6] &= ~bit;
}

size_t NodeMask::count() const
{
	size_t k = 0;
	for (uint64_t w : w_)
		k += static_cast<size_t>(std::popcount(w));
	return k;
}

int32_t Capacity::with_free(int g) const
{
	int32_t k = 0;
	for (int b = std::clamp(g, 0, buckets - 1); b < buckets; b++)
		k += by_free[b];
	return k;
}

double Capacity::occupancy() const
{
	return total_gpus > 0 ? 1.0 - static_cast<double>(free_gpus) / static_cast<double>(total_gpus) : 0.0;
}

int count_cpulist(const std::string &cpus)
{
	int total = 0;
	size_t i = 0;
	while (i < cpus.size()) {
		size_t end = cpus.find(',', i);
		if (end == std::string::npos)
			end = cpus.size();
		std::string part = cpus.substr(i, end - i);
		i = end + 1;
		if (part.empty())
			continue;
		char *rest = nullptr;
		long a = std::strtol(part.c_str(), &rest, 10);
		long b = a;
		if (*rest == '-')
			b = std::strtol(rest + 1, &rest, 10);
		if (*rest != '\0' || a < 0 || b < a || b - a > 1 << 20)
			return 0;
		total += static_cast<int>(b - a + 1);
	}
	return total;
}

State::State(const topo::Cluster &cluster)
	: c_(&cluster), nodes_(cluster.nodes.size()), dom_(cluster.domains.size() + 1),
	  nvl_(cluster.nvlink_domains.size()), classes_(cluster.domains.size() + 1, 0),
	  nvl_classes_(cluster.nvlink_domains.size(), 0)
{
	for (size_t i = 0; i < nodes_.size(); i++) {
		Index n = static_cast<Index>(i);
		const topo::Node &node = cluster.nodes[i];
		NodeState &s = nodes_[i];
		if (node.leaf == topo::none)
			loose_.push_back(n);
		s.total_gpus = s.free_gpus = node.gpu_count;
		s.total_cores = s.free_cores = model_cores(n);
		max_gpus_ = std::max<int>(max_gpus_, node.gpu_count);
		uint64_t bit = class_bit(node.perf_class);
		classes_.back() |= bit;
		for (unsigned l = 0; l < cluster.levels; l++) {
			Index d = cluster.ancestor(n, l);
			if (d != topo::none)
				classes_[static_cast<size_t>(d)] |= bit;
		}
		if (node.nvlink_domain != topo::none)
			nvl_classes_[static_cast<size_t>(node.nvlink_domain)] |= bit;
		account(n, +1);
	}
	for (size_t d = 0; d < cluster.domains.size(); d++)
		if (cluster.domains[d].parent == topo::none)
			roots_.push_back(static_cast<Index>(d));
}

int State::model_cores(Index n) const
{
	const topo::Node &node = c_->nodes[static_cast<size_t>(n)];
	int cores = 0;
	for (uint16_t k = 0; k < node.numa_count; k++)
		cores += count_cpulist(c_->numas[static_cast<size_t>(node.numa_begin + k)].cpus);
	return cores;
}

bool State::idle(Index n) const
{
	const NodeState &s = nodes_[static_cast<size_t>(n)];
	return s.available && s.free_gpus == s.total_gpus && s.free_cores == s.total_cores;
}

// Add (sign +1) or remove (-1) a node's contribution to every count above it.
void State::account(Index n, int sign)
{
	const NodeState &s = nodes_[static_cast<size_t>(n)];
	auto apply = [&](Capacity &k) {
		k.total_gpus += sign * s.total_gpus;
		if (!s.available)
			return;
		k.nodes += sign;
		k.idle += sign * (s.free_gpus == s.total_gpus && s.free_cores == s.total_cores);
		k.suspect += sign * s.suspect;
		k.by_free[std::min<int>(s.free_gpus, Capacity::buckets - 1)] += sign;
		k.free_gpus += sign * s.free_gpus;
		k.free_cores += sign * s.free_cores;
	};
	apply(dom_.back());
	for (unsigned l = 0; l < c_->levels; l++) {
		Index d = c_->ancestor(n, l);
		if (d != topo::none)
			apply(dom_[static_cast<size_t>(d)]);
	}
	Index v = c_->nodes[static_cast<size_t>(n)].nvlink_domain;
	if (v != topo::none)
		apply(nvl_[static_cast<size_t>(v)]);
}

status State::check_node(Index n) const
{
	if (n < 0 || static_cast<size_t>(n) >= nodes_.size())
		return unexpected("node index " + std::to_string(n) + " is not in the cluster");
	return ok();
}

status State::set_capacity(Index n, int gpus, int cores)
{
	if (auto st = check_node(n); !st)
		return st;
	if (gpus < 0 || gpus > 65535 || cores < 0)
		return unexpected(c_->nodes[n].name, strprintf("bad capacity: %d GPUs, %d cores", gpus, cores));
	NodeState &s = nodes_[n];
	account(n, -1);
	// Keep what is in use; what is free follows the new capacity.
	int used_g = s.total_gpus - s.free_gpus, used_c = s.total_cores - s.free_cores;
	s.total_gpus = static_cast<uint16_t>(gpus);
	max_gpus_ = std::max(max_gpus_, gpus);
	s.total_cores = cores;
	s.free_gpus = static_cast<uint16_t>(std::max(0, gpus - used_g));
	s.free_cores = std::max(0, cores - used_c);
	account(n, +1);
	return ok();
}

status State::set_node_free(Index n, int free_gpus, int free_cores)
{
	if (auto st = check_node(n); !st)
		return st;
	NodeState &s = nodes_[n];
	if (free_gpus < 0 || free_gpus > s.total_gpus || free_cores < 0 || free_cores > s.total_cores)
		return unexpected(c_->nodes[n].name, strprintf("free %d GPUs and %d cores out of %d and %d", free_gpus,
							       free_cores, s.total_gpus, s.total_cores));
	account(n, -1);
	s.free_gpus = static_cast<uint16_t>(free_gpus);
	s.free_cores = free_cores;
	account(n, +1);
	return ok();
}

status State::allocate(Index n, int gpus, int cores)
{
	if (auto st = check_node(n); !st)
		return st;
	const NodeState &s = nodes_[n];
	if (gpus < 0 || cores < 0 || gpus > s.free_gpus || cores > s.free_cores)
		return unexpected(c_->nodes[n].name, strprintf("cannot allocate %d GPUs and %d cores: %d and %d free",
							       gpus, cores, s.free_gpus, s.free_cores));
	return set_node_free(n, s.free_gpus - gpus, s.free_cores - cores);
}

status State::release(Index n, int gpus, int cores)
{
	if (auto st = check_node(n); !st)
		return st;
	const NodeState &s = nodes_[n];
	if (gpus < 0 || cores < 0 || s.free_gpus + gpus > s.total_gpus || s.free_cores + cores > s.total_cores)
		return unexpected(c_->nodes[n].name,
				  strprintf("cannot release %d GPUs and %d cores: only %d and %d in use", gpus, cores,
					    s.total_gpus - s.free_gpus, s.total_cores - s.free_cores));
	return set_node_free(n, s.free_gpus + gpus, s.free_cores + cores);
}

status State::set_health(Index n, double weight, bool suspect)
{
	if (auto st = check_node(n); !st)
		return st;
	if (!(weight >= 0 && weight <= 1))
		return unexpected(c_->nodes[n].name, strprintf("health weight %g is not between 0 and 1", weight));
	account(n, -1);
	nodes_[n].health = static_cast<float>(weight);
	nodes_[n].suspect = suspect;
	account(n, +1);
	return ok();
}

double node_health(double history_weight, bool suspect)
{
	return suspect && history_weight > suspect_health_cap ? suspect_health_cap : history_weight;
}

bool update_health(State &state, Index node, double history_weight, bool suspect)
{
	double w = node_health(history_weight, suspect);
	if (suspect == state.suspect(node) && w == state.health(node))
		return false;
	return state.set_health(node, w, suspect).has_value();
}

status State::set_link_suspect(Index n, bool suspect)
{
	if (auto st = check_node(n); !st)
		return st;
	if (nodes_[n].link_suspect == suspect)
		return ok();
	nodes_[n].link_suspect = suspect;
	Index leaf = c_->nodes[n].leaf;
	if (leaf != topo::none) {
		if (link_suspects_.size() < c_->domains.size())
			link_suspects_.assign(c_->domains.size(), 0);
		link_suspects_[static_cast<size_t>(leaf)] += suspect ? 1 : -1;
	}
	return ok();
}

double State::link_degradation(Index leaf) const
{
	if (leaf == topo::none || static_cast<size_t>(leaf) >= link_suspects_.size())
		return 0;
	Index n = c_->domains[leaf].node_count();
	return n > 0 ? static_cast<double>(link_suspects_[static_cast<size_t>(leaf)]) / n : 0;
}

status State::set_available(Index n, bool available)
{
	if (auto st = check_node(n); !st)
		return st;
	account(n, -1);
	nodes_[n].available = available;
	account(n, +1);
	return ok();
}

} // namespace loom::place
