#include "plugins/select_topo/snapshot.hpp"

#include "lib/exchange/spare_file.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/log.hpp"
#include "plugins/select_topo/explain.hpp"
#include "plugins/select_topo/history.hpp"
#include "plugins/select_topo/slurm_view.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <unistd.h>

namespace loom::select_topo {
namespace {

// What the forwarded calls changed since the last refresh. slurmctld makes
// them, and job_test, holding its node write lock, but not the placer's
// lock: a short lock of its own.
struct Pending {
	std::mutex mu;
	std::vector<int> nodes;      // Slurm node indexes, each once
	std::vector<uint8_t> marked; // by Slurm node index: in nodes
};
Pending g_pending;
std::atomic<bool> g_all{true}; // anything may have changed: read every node

void mark(int i) // g_pending.mu held
{
	if (i < 0)
		return;
	size_t k = static_cast<size_t>(i);
	if (k >= g_pending.marked.size())
		g_pending.marked.resize(k + 1, 0);
	if (!g_pending.marked[k]) {
		g_pending.marked[k] = 1;
		g_pending.nodes.push_back(i);
	}
}

node_record_t *node_at(int i) { return i >= 0 && i < node_record_count ? node_record_table_ptr[i] : nullptr; }

// One node from Slurm's node table into the engine's State; true when
// anything differed.
bool read_node(Snapshot &s, topo::Index m, node_record_t *node, const HealthWeights &weights)
{
	bool changed = false;
	NodeGpus g = node_gpus(node);
	if (g.total != s.state->total_gpus(m))
		changed |= s.state->set_capacity(m, g.total, 0).has_value();
	if (g.free != s.state->free_gpus(m))
		changed |= s.state->set_node_free(m, g.free, 0).has_value();
	double history = 1.0;
	if (!weights.weight.empty())
		if (auto it = weights.weight.find(node->name); it != weights.weight.end())
			history = it->second;
	changed |= place::update_health(*s.state, m, history, node_suspect(node));
	if (bool link = node_link_suspect(node); link != s.state->link_suspect(m)) {
		(void)s.state->set_link_suspect(m, link);
		changed = true;
	}
	return changed;
}

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
	std::string dir = file.substr(0, file.find_last_of('/') + 1);
	return place::topology_file_in(dir, SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0));
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
	auto cfg = place::read_topo_conf(conf_path("loom-topo.conf"));
	if (!cfg)
		return unexpected(cfg.error());
	s->config = std::move(*cfg);
	if (!s->config.weights_file.empty()) {
		auto w = place::load_weights_file(s->config.weights_file);
		if (!w)
			return unexpected(w.error());
		s->weights = *w;
	}
	if (!s->config.tiers.empty())
		s->weights.tiers = std::make_shared<const place::TierTable>(s->config.tiers);
	auto fabric = place::load_fabric(s->config.cluster_file, topology_file(), slurm_nodes(), s->config.gpu_classes,
					 s->config.level_names);
	if (!fabric)
		return unexpected(fabric.error());
	s->fabric = std::move(*fabric);
	s->kinds = topo::locality_kinds(s->fabric.cluster);
	auto spares = place::parse_spares(s->config.spares);
	if (!spares)
		return unexpected(s->config.path, spares.error().str());
	if (status st = place::check_spare_kinds(*spares, s->kinds); !st)
		return unexpected(s->config.path, st.error().str());
	s->spare_spec = std::move(*spares);
	s->spare_spec.lend_max_s = s->config.spare_lend_s;
	s->spare_file = s->config.spare_file;
	if (s->spare_file.empty() && slurm_conf.state_save_location)
		s->spare_file = std::string(slurm_conf.state_save_location) + "/loom-spares.json";
	s->state = std::make_unique<place::State>(s->fabric.cluster);
	map_nodes(*s);
	return s;
}

void snapshot_note_change() noexcept { g_all.store(true, std::memory_order_release); }

void snapshot_note_job(const job_record_t *job) noexcept
{
	if (!job || !job->node_bitmap) {
		g_all.store(true, std::memory_order_release);
		return;
	}
	try {
		bitstr_t *b = job->node_bitmap;
		int64_t first = bit_ffs(b);
		if (first < 0)
			return;
		int64_t last = bit_fls(b);
		std::lock_guard<std::mutex> g(g_pending.mu);
		for (int64_t i = first; i <= last; i++)
			if (bit_test(b, i))
				mark(static_cast<int>(i));
	} catch (...) {
		g_all.store(true, std::memory_order_release);
	}
}

void snapshot_note_node(int index) noexcept
{
	try {
		std::lock_guard<std::mutex> g(g_pending.mu);
		mark(index);
	} catch (...) {
		g_all.store(true, std::memory_order_release);
	}
}

// Every node when anything may have changed (a forwarded call said so, or the
// health weights changed); else the nodes the forwarded calls named, and,
// once node_sweep has passed since the last sweep began and a node record
// changed (last_node_update has whole seconds, so an update in the second the
// last sweep began counts as one), a sweep: sweep_slice nodes per job_test,
// in index order, until every node has been read once. What only the sweep
// picks up is never needed for a decision's own nodes: Slurm offers no
// drained or down node, and recheck() reads a decision's nodes before they
// are given.
Refresh refresh(Snapshot &s)
{
	Refresh r;
	auto weights = history_weights();
	time_t node_update = last_node_update;
	time_t now = std::time(nullptr);
	std::vector<int> nodes;
	{
		std::lock_guard<std::mutex> g(g_pending.mu);
		nodes.swap(g_pending.nodes);
		for (int i : nodes)
			g_pending.marked[static_cast<size_t>(i)] = 0;
	}
	bool all = g_all.exchange(false, std::memory_order_acq_rel);
	bool node_records = node_update != s.seen_node_update || node_update >= s.swept_at;
	if (!s.sweeping && node_records && now - s.swept_at >= s.config.node_sweep_s) {
		s.sweeping = true;
		s.sweep_next = 0;
		s.seen_node_update = node_update;
		s.swept_at = now;
	}
	if (all || weights->generation != s.seen_weights) {
		s.seen_weights = weights->generation;
		s.seen_node_update = node_update;
		s.swept_at = now;
		s.sweeping = false; // this read is the sweep
		r.full = true;
		node_record_t *node;
		for (int i = 0; (node = next_node(&i)); i++) {
			if (static_cast<size_t>(i) >= s.model_of.size())
				break;
			topo::Index m = s.model_of[static_cast<size_t>(i)];
			if (m == topo::none)
				continue;
			(void)read_node(s, m, node, *weights);
			r.nodes++;
		}
		return r;
	}
	for (int i : nodes) {
		topo::Index m = s.model(i);
		node_record_t *node = node_at(i);
		if (m == topo::none || !node)
			continue;
		(void)read_node(s, m, node, *weights);
		r.nodes++;
	}
	if (s.sweeping) {
		size_t end = std::min(s.model_of.size(), s.sweep_next + sweep_slice);
		for (size_t i = s.sweep_next; i < end; i++) {
			topo::Index m = s.model_of[i];
			node_record_t *node = node_at(static_cast<int>(i));
			if (m == topo::none || !node)
				continue;
			(void)read_node(s, m, node, *weights);
			r.swept++;
			r.nodes++;
		}
		s.sweep_next = end;
		s.sweeping = end < s.model_of.size();
	}
	return r;
}

void refresh_spares(Snapshot &s)
{
	if (s.spare_spec.empty())
		return;
	time_t update = last_node_update, now = std::time(nullptr);
	if (s.pool_ready && (update == s.pool_seen_update || now == s.pool_at))
		return;
	s.pool_seen_update = update;
	s.pool_at = now;
	const topo::Cluster &c = s.fabric.cluster;
	std::vector<place::SpareNodeState> st(c.nodes.size(), place::SpareNodeState::unusable);
	for (size_t m = 0; m < c.nodes.size(); m++)
		if (node_record_t *node = node_at(s.slurm_of[m]); node)
			st[m] = spare_node_state(node);
	place::SparePool pool = place::choose_spares(c, s.spare_spec, st);
	bool changed = !s.pool_ready || pool.spare != s.pool.spare;
	s.pool = std::move(pool);
	s.pool_ready = true;
	if (!changed)
		return;
	exchange::SpareFile f = place::spare_file_of(c, s.pool, s.spare_spec.lend_max_s, static_cast<int64_t>(now));
	size_t want = 0, have = 0;
	std::vector<std::string> short_of;
	for (const place::SpareDomain &d : s.pool.domains) {
		want += static_cast<size_t>(d.want);
		have += d.spares.size();
		if (static_cast<int>(d.spares.size()) < d.want)
			short_of.push_back(d.name);
	}
	std::string shortage;
	for (size_t i = 0; i < short_of.size() && i < 8; i++)
		shortage += (i ? "," : " short in ") + short_of[i];
	if (short_of.size() > 8)
		shortage += ",... (" + std::to_string(short_of.size()) + " domains)";
	info("select/topo: spare pool: %zu of %zu spares in %zu domains%s", have, want, s.pool.domains.size(),
	     shortage.c_str());
	if (!s.spare_file.empty())
		write_async(s.spare_file, exchange::spare_file_json(f));
}

bool recheck(Snapshot &s, const std::vector<topo::Index> &nodes)
{
	auto weights = history_weights();
	bool changed = false;
	for (topo::Index m : nodes)
		if (node_record_t *node = node_at(s.slurm_of[static_cast<size_t>(m)]); node)
			changed |= read_node(s, m, node, *weights);
	return changed;
}

std::string snapshot_diff(const Snapshot &s, size_t max)
{
	std::string out;
	size_t n = 0;
	node_record_t *node;
	for (int i = 0; (node = next_node(&i)); i++) {
		topo::Index m = s.model(i);
		if (m == topo::none)
			continue;
		NodeGpus g = node_gpus(node);
		if (g.free == s.state->free_gpus(m) && g.total == s.state->total_gpus(m))
			continue;
		if (n++ < max)
			out += strprintf("%s%s free %d/%d, engine %d/%d", out.empty() ? "" : "; ", node->name, g.free,
					 g.total, s.state->free_gpus(m), s.state->total_gpus(m));
	}
	if (n > max)
		out += strprintf("; ... (%zu nodes in all)", n);
	return out;
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
