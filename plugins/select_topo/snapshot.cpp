#include "plugins/select_topo/snapshot.hpp"

#include "lib/util/hostlist.hpp"
#include "plugins/select_topo/history.hpp"
#include "plugins/select_topo/slurm_view.hpp"

#include <atomic>
#include <unistd.h>

namespace loom::select_topo {
namespace {

// Bumped by every forwarded call that can change what jobs hold.
std::atomic<uint64_t> g_change{1};

std::string conf_path(const char *name)
{
	char *p = get_extra_conf_path(const_cast<char *>(name));
	std::string s = p ? p : "";
	xfree(p);
	return s;
}

// Slurm 25.05+ reads topology.yaml instead of topology.conf when it exists: so does select/topo.
std::string topology_file()
{
	std::string file = conf_path("topology.conf");
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
	if (std::string yaml = conf_path("topology.yaml"); ::access(yaml.c_str(), F_OK) == 0)
		file = yaml;
#endif
	return file;
}

void map_nodes(Snapshot &s)
{
	const topo::Cluster &c = s.fabric.cluster;
	s.slurm_of.assign(c.nodes.size(), -1);
	node_record_t *node;
	for (int i = 0; (node = next_node(&i)); i++) {
		if (static_cast<size_t>(i) >= s.model_of.size())
			s.model_of.resize(static_cast<size_t>(i) + 1, topo::none);
		topo::Index m = c.find_node(node->name);
		s.model_of[static_cast<size_t>(i)] = m;
		if (m != topo::none)
			s.slurm_of[static_cast<size_t>(m)] = i;
	}
	// Fabric nodes Slurm does not have are never offered.
	for (size_t m = 0; m < c.nodes.size(); m++)
		if (s.slurm_of[m] < 0)
			(void)s.state->set_available(static_cast<topo::Index>(m), false);
}

} // namespace

topo::Index Snapshot::model(int64_t slurm_index) const
{
	return slurm_index >= 0 && static_cast<size_t>(slurm_index) < model_of.size()
		       ? model_of[static_cast<size_t>(slurm_index)]
		       : topo::none;
}

std::string Snapshot::names(const std::vector<topo::Index> &nodes) const
{
	std::vector<std::string> out;
	for (topo::Index m : nodes)
		out.push_back(fabric.cluster.nodes[static_cast<size_t>(m)].name);
	return hostlist_compress(out);
}

expected<std::unique_ptr<Snapshot>> load_snapshot()
{
	auto s = std::make_unique<Snapshot>();
	auto cfg = read_config(conf_path("loom-topo.conf"));
	if (!cfg)
		return unexpected(cfg.error());
	s->config = std::move(*cfg);
	if (!s->config.weights_file.empty()) {
		auto w = place::load_weights_file(s->config.weights_file);
		if (!w)
			return unexpected(w.error());
		s->weights = *w;
	}
	auto fabric = load_fabric(s->config.cluster_file, topology_file(), slurm_nodes(), s->config.gpu_classes,
				  s->config.level_names);
	if (!fabric)
		return unexpected(fabric.error());
	s->fabric = std::move(*fabric);
	s->kinds = topo::locality_kinds(s->fabric.cluster);
	s->state = std::make_unique<place::State>(s->fabric.cluster);
	map_nodes(*s);
	return s;
}

void snapshot_note_change() noexcept { g_change.fetch_add(1, std::memory_order_release); }

// An allocation change (g_change, exact) or a node record update
// (last_node_update, in whole seconds: an update in the same second as the
// last read counts as a change, so none is missed).
bool refresh(Snapshot &s)
{
	uint64_t change = g_change.load(std::memory_order_acquire);
	time_t node_update = last_node_update;
	auto weights = history_weights();
	if (change == s.seen_change && weights->generation == s.seen_weights && node_update == s.seen_node_update &&
	    node_update < s.refreshed_at)
		return false;
	s.seen_change = change;
	s.seen_weights = weights->generation;
	s.seen_node_update = node_update;
	s.refreshed_at = std::time(nullptr);
	node_record_t *node;
	for (int i = 0; (node = next_node(&i)); i++) {
		if (static_cast<size_t>(i) >= s.model_of.size())
			break;
		topo::Index m = s.model_of[static_cast<size_t>(i)];
		if (m == topo::none)
			continue;
		NodeGpus g = node_gpus(node);
		if (g.total != s.state->total_gpus(m))
			(void)s.state->set_capacity(m, g.total, 0);
		if (g.free != s.state->free_gpus(m))
			(void)s.state->set_node_free(m, g.free, 0);
		double history = 1.0;
		if (!weights->weight.empty())
			if (auto it = weights->weight.find(node->name); it != weights->weight.end())
				history = it->second;
		(void)place::update_health(*s.state, m, history, node_suspect(node));
	}
	return true;
}

Offered offered_nodes(const Snapshot &s, bitstr_t *bitmap, bool weights, bool run_now)
{
	Offered o{place::Allowed(s.fabric.cluster.nodes.size()), {}, 0};
	if (weights)
		o.weight.assign(s.fabric.cluster.nodes.size(), 0);
	for (int64_t i = 0; i < bit_size(bitmap); i++) {
		if (!bit_test(bitmap, i))
			continue;
		o.count++;
		topo::Index m = s.model(i);
		if (m == topo::none)
			continue;
		o.allowed.set(m);
		if (weights)
			o.weight[static_cast<size_t>(m)] = node_sched_weight(static_cast<int>(i), run_now);
	}
	return o;
}

bitstr_t *bitmap_of(const Snapshot &s, const std::vector<topo::Index> &nodes, int64_t bitmap_size, bitstr_t *within)
{
	bitstr_t *b = bit_alloc(bitmap_size);
	for (topo::Index m : nodes) {
		int i = s.slurm_of[static_cast<size_t>(m)];
		if (i >= 0 && i < bitmap_size && (!within || bit_test(within, i)))
			bit_set(b, i);
	}
	return b;
}

bool debug_on() { return slurm_conf.debug_flags & DEBUG_FLAG_SELECT_TYPE; }

std::string explain_dir(const Snapshot &s)
{
	if (!s.config.explain_dir.empty())
		return s.config.explain_dir;
	if (!debug_on() || !slurm_conf.state_save_location)
		return {};
	return std::string(slurm_conf.state_save_location) + "/loom-place";
}

} // namespace loom::select_topo
