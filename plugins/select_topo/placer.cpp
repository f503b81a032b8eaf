#include "plugins/select_topo/placer.hpp"

#include "lib/place/engine.hpp"
#include "lib/place/slurm_policy.hpp"
#include "lib/topo/hostlist.hpp"
#include "plugins/common/place_hints.hpp"
#include "lib/place/state_file.hpp"
#include "lib/topo/cluster_json.hpp"
#include "lib/util/fs.hpp"
#include "plugins/select_topo/config.hpp"
#include "plugins/select_topo/explain.hpp"
#include "plugins/select_topo/cons_tres.hpp"
#include "plugins/select_topo/fabric.hpp"
#include "plugins/select_topo/history.hpp"
#include "plugins/select_topo/slurm_view.hpp"

#include <atomic>
#include <unistd.h>
#include <chrono>
#include <ctime>
#include <memory>
#include <mutex>
#include <sstream>

namespace loom::select_topo {
namespace {

struct Loaded {
	Config config;
	Fabric fabric;
	std::unique_ptr<place::State> state;  // points into fabric.cluster: keep Loaded on the heap
	place::Weights weights;
	std::vector<topo::Index> model_of;    // Slurm node index -> model node
	std::vector<int> slurm_of;            // model node -> Slurm node index (-1: not in Slurm)
	std::vector<std::string> kinds;       // what --locality takes on this fabric (checked at submit)
	// What the engine's State was last read from (see refresh()).
	uint64_t seen_change = 0;
	uint64_t seen_weights = UINT64_MAX;
	time_t seen_node_update = -1;
	time_t refreshed_at = 0;
};

// Bumped by every forwarded call that can change what jobs hold.
std::atomic<uint64_t> g_change{1};

std::mutex g_mu;
std::unique_ptr<Loaded> g_cur;

bool debug_on() { return slurm_conf.debug_flags & DEBUG_FLAG_SELECT_TYPE; }

// Where decisions are kept for `loom place --explain` ("" = not kept).
std::string explain_dir(const Loaded &l)
{
	if (!l.config.explain_dir.empty())
		return l.config.explain_dir;
	if (!debug_on() || !slurm_conf.state_save_location)
		return {};
	return std::string(slurm_conf.state_save_location) + "/loom-place";
}

// The request as replayed by `loom place --explain`: nodes Slurm did not offer
// this job are excluded by name.
std::string replay_request(const Loaded &l, place::Request req, const place::Allowed &allowed)
{
	const topo::Cluster &c = l.fabric.cluster;
	std::vector<std::string> out;
	for (size_t m = 0; m < c.nodes.size(); m++)
		if (!allowed.test(static_cast<topo::Index>(m)))
			out.push_back(c.nodes[m].name);
	if (!out.empty())
		req.exclude = {topo::hostlist_compress(out)};
	return place::format_request(req) + "\n";
}

// jobcomp/health's statistics file, when that plugin is the JobCompType
// (its state directory: JobCompLoc if absolute, else StateSaveLocation).
std::string failure_stats_path(const Config &c)
{
	if (c.failure_stats == "none")
		return {};
	if (!c.failure_stats.empty())
		return c.failure_stats;
	if (!slurm_conf.job_comp_type || std::string(slurm_conf.job_comp_type) != "jobcomp/health")
		return {};
	std::string dir = slurm_conf.job_comp_loc && slurm_conf.job_comp_loc[0] == '/' ? slurm_conf.job_comp_loc
		: slurm_conf.state_save_location ? slurm_conf.state_save_location
						 : "";
	return dir.empty() ? std::string() : dir + "/loom-failure-stats.json";
}

std::string conf_path(const char *name)
{
	char *p = get_extra_conf_path(const_cast<char *>(name));
	std::string s = p ? p : "";
	xfree(p);
	return s;
}

std::string join(const std::vector<std::string> &v, size_t max = 8)
{
	std::string s;
	for (size_t i = 0; i < v.size() && i < max; i++)
		s += (i ? "," : "") + v[i];
	if (v.size() > max)
		s += ",... (" + std::to_string(v.size()) + " in all)";
	return s;
}

expected<std::unique_ptr<Loaded>> load()
{
	auto l = std::make_unique<Loaded>();
	auto cfg = read_config(conf_path("loom-topo.conf"));
	if (!cfg)
		return unexpected(cfg.error());
	l->config = std::move(*cfg);
	if (!l->config.weights_file.empty()) {
		auto w = place::load_weights_file(l->config.weights_file);
		if (!w)
			return unexpected(w.error());
		l->weights = *w;
	}
	// Slurm 25.05+ reads topology.yaml instead of topology.conf when it exists: so does select/topo.
	std::string topology_file = conf_path("topology.conf");
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
	if (std::string yaml = conf_path("topology.yaml"); ::access(yaml.c_str(), F_OK) == 0)
		topology_file = yaml;
#endif
	auto fabric = load_fabric(l->config.cluster_file, topology_file, slurm_nodes(),
				  l->config.gpu_classes, l->config.level_names);
	if (!fabric)
		return unexpected(fabric.error());
	l->fabric = std::move(*fabric);
	l->kinds = topo::locality_kinds(l->fabric.cluster);
	l->state = std::make_unique<place::State>(l->fabric.cluster);
	const topo::Cluster &c = l->fabric.cluster;
	l->slurm_of.assign(c.nodes.size(), -1);
	node_record_t *node;
	for (int i = 0; (node = next_node(&i)); i++) {
		if (static_cast<size_t>(i) >= l->model_of.size())
			l->model_of.resize(static_cast<size_t>(i) + 1, topo::none);
		topo::Index m = c.find_node(node->name);
		l->model_of[static_cast<size_t>(i)] = m;
		if (m != topo::none)
			l->slurm_of[static_cast<size_t>(m)] = i;
	}
	// Fabric nodes Slurm does not have are never offered.
	for (size_t m = 0; m < c.nodes.size(); m++)
		if (l->slurm_of[m] < 0)
			(void)l->state->set_available(static_cast<topo::Index>(m), false);
	return l;
}

// Free GPUs and suspect marks per node from Slurm's node table, when it may
// have changed since the last read: an allocation change (g_change, exact) or
// a node record update (last_node_update, in whole seconds: an update in the
// same second as the last read counts as a change, so none is missed).
// Returns false when nothing was read (unchanged).
bool refresh(Loaded &l)
{
	uint64_t change = g_change.load(std::memory_order_acquire);
	time_t node_update = last_node_update;
	auto weights = history_weights();
	if (change == l.seen_change && weights->generation == l.seen_weights && node_update == l.seen_node_update &&
	    node_update < l.refreshed_at)
		return false;
	l.seen_change = change;
	l.seen_weights = weights->generation;
	l.seen_node_update = node_update;
	l.refreshed_at = std::time(nullptr);
	node_record_t *node;
	for (int i = 0; (node = next_node(&i)); i++) {
		if (static_cast<size_t>(i) >= l.model_of.size())
			break;
		topo::Index m = l.model_of[static_cast<size_t>(i)];
		if (m == topo::none)
			continue;
		NodeGpus g = node_gpus(node);
		if (g.total != l.state->total_gpus(m))
			(void)l.state->set_capacity(m, g.total, 0);
		if (g.free != l.state->free_gpus(m))
			(void)l.state->set_node_free(m, g.free, 0);
		// Health: the failure history's weight, at most 0.5 while suspect.
		bool suspect = node_suspect(node);
		double w = 1.0;
		if (!weights->weight.empty())
			if (auto it = weights->weight.find(node->name); it != weights->weight.end())
				w = it->second;
		if (suspect && w > 0.5)
			w = 0.5;
		if (suspect != l.state->suspect(m) || w != l.state->health(m))
			(void)l.state->set_health(m, w, suspect);
	}
	return true;
}

std::string gpu_class_of(const Loaded &l, const std::string &features)
{
	// The first GPU generation named in --constraint ("h100", "h100&ib", "[a100|h100]").
	std::string word;
	for (size_t i = 0; i <= features.size(); i++) {
		char ch = i < features.size() ? features[i] : '&';
		bool sep = !(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.');
		if (!sep) {
			word += ch;
			continue;
		}
		for (const auto &cls : l.config.gpu_classes)
			if (word == cls)
				return cls;
		word.clear();
	}
	return {};
}

place::Request make_request(const Loaded &l, const JobAsk &ask, const plugin::PlaceHints &hints, uint32_t min_nodes,
			    uint32_t max_nodes, size_t offered)
{
	place::Request r;
	r.min_nodes = static_cast<int>(min_nodes);
	uint32_t maxn = max_nodes < offered ? max_nodes : static_cast<uint32_t>(offered);
	r.max_nodes = maxn > min_nodes ? static_cast<int>(maxn) : 0;
	if (ask.gpus_per_node > 0)
		r.gpus_per_node = ask.gpus_per_node;
	else if (ask.gpus_total > 0)
		r.gpus = static_cast<int>(ask.gpus_total);
	r.whole_node = ask.whole_node;
	r.gpu_class = gpu_class_of(l, ask.features);
	r.comm = hints.comm == plugin::Comm::heavy   ? place::Comm::heavy
		 : hints.comm == plugin::Comm::light ? place::Comm::light
						     : place::Comm::normal;
	if (!hints.locality.empty()) {
		r.locality = hints.strict ? place::Locality::strict : place::Locality::prefer;
		r.locality_level = hints.locality;
	}
	if (ask.max_switches > 0)
		r.max_leaves = static_cast<int>(ask.max_switches);
	return r;
}

std::string node_names(const Loaded &l, const std::vector<topo::Index> &nodes)
{
	std::vector<std::string> names;
	for (topo::Index m : nodes)
		names.push_back(l.fabric.cluster.nodes[static_cast<size_t>(m)].name);
	return topo::hostlist_compress(names);
}

int forward(job_record_t *job, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes, uint32_t req_nodes,
	    uint16_t mode, const JobTestTail &tail)
{
	return cons_tres_job_test(job, bitmap, min_nodes, max_nodes, req_nodes, mode, tail);
}

// For a strict --locality: is there any domain of that kind holding enough of
// the offered nodes? (TEST_ONLY must not promise what can never happen.)
bool strict_can_ever_fit(const Loaded &l, const std::string &kind, bitstr_t *bitmap, uint32_t min_nodes)
{
	const topo::Cluster &c = l.fabric.cluster;
	auto offered = [&](topo::Index m) {
		int s = l.slurm_of[static_cast<size_t>(m)];
		return s >= 0 && bit_test(bitmap, s);
	};
	if (kind == topo::nvlink_kind) {
		for (const auto &v : c.nvlink_domains) {
			uint32_t n = 0;
			for (topo::Index m : v.nodes)
				if (offered(m) && ++n >= min_nodes)
					return true;
		}
		return false;
	}
	topo::Index k = c.kinds.find(kind);
	for (const auto &d : c.domains) {
		if (k == topo::none || d.kind != static_cast<uint16_t>(k))
			continue;
		uint32_t n = 0;
		for (topo::Index m = d.node_begin; m < d.node_end; m++) {
			int s = l.slurm_of[static_cast<size_t>(m)];
			if (s >= 0 && bit_test(bitmap, s) && ++n >= min_nodes)
				return true;
		}
	}
	return false;
}

// A bitmap freed when it goes out of scope (an exception from the engine
// leaves none behind).
struct OwnedBitmap {
	bitstr_t *b;
	explicit OwnedBitmap(bitstr_t *x) : b(x) {}
	OwnedBitmap(const OwnedBitmap &) = delete;
	OwnedBitmap &operator=(const OwnedBitmap &) = delete;
	~OwnedBitmap() { FREE_NULL_BITMAP(b); }
};

// Backfill's WILL_RUN: cons_tres says when the job can start (and on which
// nodes); the engine then chooses on the cluster as it will be then (the GPUs
// of running jobs that end by that time, by their time limits, free), and
// cons_tres is asked whether the engine's nodes start as early. If so the plan
// is the engine's, which is what RUN_NOW will pick when the time comes;
// otherwise cons_tres's plan stands. Costs one more cons_tres WILL_RUN.
int plan_will_run(Loaded &l, job_record_t *job, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
		  uint32_t req_nodes, const JobTestTail &tail, const place::Request &req, const place::Allowed &allowed,
		  const place::SlurmConstraints &cons)
{
	OwnedBitmap offered(bit_copy(bitmap));
	int rc = forward(job, bitmap, min_nodes, max_nodes, req_nodes, SELECT_MODE_WILL_RUN, tail);
	if (rc != SLURM_SUCCESS)
		return rc;
	time_t start = job->start_time;
	if (start <= std::time(nullptr)) // it starts now, through RUN_NOW, where the engine chooses
		return rc;
	OwnedBitmap planned(bit_copy(bitmap));
	try {
		(void)refresh(l);
		place::State then = *l.state;
		for (auto [s, gpus] : gpus_freed_by(start)) {
			topo::Index m =
				static_cast<size_t>(s) < l.model_of.size() ? l.model_of[static_cast<size_t>(s)] : topo::none;
			if (m != topo::none)
				(void)then.set_node_free(m, std::min(then.total_gpus(m), then.free_gpus(m) + gpus), 0);
		}
		auto within = place::place_within(then, req, allowed, cons, l.weights, 1);
		if (!within || !within->decision.placed())
			return rc;
		const place::Candidate &c = within->decision.candidates[0];
		OwnedBitmap only(bit_alloc(bit_size(bitmap)));
		for (topo::Index m : c.nodes) {
			int s = l.slurm_of[static_cast<size_t>(m)];
			if (s >= 0 && s < bit_size(only.b) && bit_test(offered.b, s))
				bit_set(only.b, s);
		}
		if (bit_equal(only.b, planned.b))
			return rc;
		int rc2 = forward(job, only.b, min_nodes, max_nodes, req_nodes, SELECT_MODE_WILL_RUN, tail);
		if (rc2 == SLURM_SUCCESS && job->start_time <= start) {
			bit_copybits(bitmap, only.b);
			if (debug_on()) {
				char *was = bitmap2node_name(planned.b);
				info("select/topo: JobId=%u will run on %s at %ld (engine; cons_tres planned %s)",
				     job->job_id, node_names(l, c.nodes).c_str(), static_cast<long>(job->start_time), was);
				xfree(was);
			}
			return rc;
		}
	} catch (const std::exception &e) {
		error("select/topo: JobId=%u: backfill plan by the engine failed (%s): cons_tres's plan stands",
		      job->job_id, e.what());
	}
	bit_copybits(bitmap, planned.b); // cons_tres's plan stands
	job->start_time = start;
	return rc;
}

} // namespace

bool placer_load(bool starting, std::string &why)
{
	try {
		auto l = load();
		if (!l) {
			why = l.error().str();
			return false;
		}
		std::lock_guard<std::mutex> g(g_mu);
		Loaded &n = **l;
		info("select/topo: fabric from %s: %zu nodes, %lld GPUs, %zu domains, %u levels%s", n.fabric.source.c_str(),
		     n.fabric.cluster.nodes.size(), static_cast<long long>(n.fabric.cluster.total_gpus()),
		     n.fabric.cluster.domains.size(), n.fabric.cluster.levels, starting ? "" : " (reconfigured)");
		if (!n.fabric.alone.empty())
			info("select/topo: warning: %zu node(s) in slurm.conf but not in the fabric, each placed as if on a "
			     "leaf of its own: %s",
			     n.fabric.alone.size(), join(n.fabric.alone).c_str());
		g_cur = std::move(*l);
		history_start(failure_stats_path(g_cur->config), g_cur->config.failure_stats_poll_s);
		if (std::string dir = explain_dir(*g_cur); !dir.empty())
			explain_fabric(dir, topo::write_cluster_json(g_cur->fabric.cluster));
		return true;
	} catch (const std::exception &e) {
		why = e.what();
		return false;
	} catch (...) {
		why = "unknown error";
		return false;
	}
}

void placer_unload()
{
	explain_stop();
	history_stop();
	std::lock_guard<std::mutex> g(g_mu);
	g_cur.reset();
}

void placer_note_change() noexcept { g_change.fetch_add(1, std::memory_order_release); }

bool placer_loaded()
{
	std::lock_guard<std::mutex> g(g_mu);
	return g_cur != nullptr;
}

int placer_job_test(job_record_t *job, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes, uint32_t req_nodes,
		    uint16_t mode, const JobTestTail &tail)
{
	std::unique_lock<std::mutex> lock(g_mu);
	Loaded *l = g_cur.get();
	if (!l || !running_in_slurmctld())
		return forward(job, bitmap, min_nodes, max_nodes, req_nodes, mode, tail);
	try {
		JobAsk ask = job_ask(job);
		auto hints = plugin::hints_from_env(ask.spank_env, ask.spank_env_size);
		if (!hints) {
			error("select/topo: JobId=%u: %s: placement hints ignored", job->job_id,
			      hints.error().str().c_str());
			hints = plugin::PlaceHints{};
		}
		// Backfill's plan (WILL_RUN) with the engine's nodes, unless preemption
		// is part of the answer (cons_tres's list of jobs to preempt is for
		// its own nodes).
		bool will_run = mode == SELECT_MODE_WILL_RUN && l->config.will_run == "engine" &&
				l->config.placement != "cons_tres" && !job_test_preempts(tail);
		if (mode != SELECT_MODE_RUN_NOW && !will_run) {
			// At submit (TEST_ONLY): a kind this cluster does not have is
			// refused, never left to fail later in silence.
			if (mode == SELECT_MODE_TEST_ONLY && !hints->locality.empty()) {
				if (std::find(l->kinds.begin(), l->kinds.end(), hints->locality) == l->kinds.end()) {
					error("select/topo: JobId=%u: --locality=%s: this cluster has no domain of that kind "
					      "(kinds: %s): job refused",
					      job->job_id, hints->locality.c_str(), loom::join(l->kinds, ", ").c_str());
					return SLURM_ERROR;
				}
			}
			if (mode == SELECT_MODE_TEST_ONLY && hints->strict &&
			    !strict_can_ever_fit(*l, hints->locality, bitmap, min_nodes)) {
				if (debug_on())
					info("select/topo: JobId=%u: no %s holds %u of the offered nodes", job->job_id,
					     hints->locality.c_str(), min_nodes);
				return SLURM_ERROR;
			}
			return forward(job, bitmap, min_nodes, max_nodes, req_nodes, mode, tail);
		}
		auto t0 = std::chrono::steady_clock::now();
		auto since = [&t0] {
			return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
		};
		// Slurm's own choice over every node offered, said in the placed line.
		auto slurm_decides = [&](const std::string &why) {
			int rc = forward(job, bitmap, min_nodes, max_nodes, req_nodes, mode, tail);
			if (rc == SLURM_SUCCESS && !will_run) {
				char *nodes = bitmap2node_name(bitmap);
				info("select/topo: JobId=%u placed by cons_tres on %s (%s, job_test %.0f us)", job->job_id,
				     nodes, why.c_str(), since());
				xfree(nodes);
			}
			return rc;
		};
		if (l->config.placement == "cons_tres")
			return slurm_decides("placement=cons_tres");
		// Required nodes: every one of them in the fabric, and some left to choose.
		place::SlurmConstraints cons;
		for (int s : ask.required) {
			topo::Index m = static_cast<size_t>(s) < l->model_of.size() ? l->model_of[static_cast<size_t>(s)]
										   : topo::none;
			if (m == topo::none)
				return slurm_decides("required node outside the fabric");
			cons.required.push_back(m);
		}
		// Nothing left to choose when the required nodes are as many as the
		// job may get, or as many as Slurm aims for (req_nodes: -w n[3-4]
		// without -N asks for those two nodes).
		uint32_t aim = req_nodes > 0 && req_nodes < max_nodes ? req_nodes : max_nodes;
		ask.policies.required_all = !cons.required.empty() && cons.required.size() >= aim;
		ask.policies.required_gpus = !cons.required.empty() && ask.gpus_per_node == 0 && ask.gpus_total > 0;
		// A policy that is not "tightest" (--spread-job, --contiguous, LLN, ...).
		if (std::string why = place::step_aside_for(ask.policies); !why.empty())
			return slurm_decides(why + " asks for Slurm's own choice");
		bool reread = refresh(*l);
		double reread_us = reread ? since() : 0;
		place::Allowed allowed(l->fabric.cluster.nodes.size());
		cons.weight.assign(l->fabric.cluster.nodes.size(), 0);
		size_t offered = 0;
		for (int64_t i = 0; i < bit_size(bitmap); i++) {
			if (!bit_test(bitmap, i))
				continue;
			offered++;
			if (static_cast<size_t>(i) < l->model_of.size() && l->model_of[static_cast<size_t>(i)] != topo::none) {
				topo::Index m = l->model_of[static_cast<size_t>(i)];
				allowed.set(m);
				cons.weight[static_cast<size_t>(m)] =
					node_sched_weight(static_cast<int>(i), mode == SELECT_MODE_RUN_NOW);
			}
		}
		cons.target_nodes = static_cast<int>(req_nodes);
		cons.use_min_nodes = ask.use_min_nodes;
		place::Request req = make_request(*l, ask, *hints, min_nodes, max_nodes, offered);
		if (will_run)
			return plan_will_run(*l, job, bitmap, min_nodes, max_nodes, req_nodes, tail, req, allowed, cons);
		auto within = place::place_within(*l->state, req, allowed, cons, l->weights,
						  static_cast<int>(l->config.max_candidates));
		double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
		if (!within) {
			info("select/topo: JobId=%u: placement engine failed (%s): placed by cons_tres", job->job_id,
			     within.error().str().c_str());
			return forward(job, bitmap, min_nodes, max_nodes, req_nodes, mode, tail);
		}
		place::Decision *d = &within->decision;
		const std::string &shaped = within->note;
		std::string xdir = explain_dir(*l);
		auto record = [&](const std::string &outcome) {
			if (!xdir.empty())
				explain_decision(xdir, job->job_id, replay_request(*l, req, allowed),
						 place::write_state(*l->state), outcome + "\n");
		};
		if (!d->placed()) {
			record("pending: " + d->reason);
			if (debug_on())
				info("select/topo: JobId=%u: cannot fit now (engine %.0f us, %s): %s", job->job_id, us,
				     reread ? "node table read" : "node table unchanged", d->reason.c_str());
			if (req.locality == place::Locality::strict)
				return SLURM_ERROR; // waits: never placed in part, never outside its domain
			return forward(job, bitmap, min_nodes, max_nodes, req_nodes, mode, tail);
		}
		int rank = 0;
		for (const place::Candidate &c : d->candidates) {
			rank++;
			bitstr_t *only = bit_alloc(bit_size(bitmap));
			for (topo::Index m : c.nodes) {
				int s = l->slurm_of[static_cast<size_t>(m)];
				if (s >= 0 && s < bit_size(bitmap))
					bit_set(only, s);
			}
			int rc = forward(job, only, min_nodes, max_nodes, req_nodes, mode, tail);
			if (rc == SLURM_SUCCESS) {
				bit_copybits(bitmap, only);
				FREE_NULL_BITMAP(only);
				record("placed " + node_names(*l, c.nodes) + " candidate " + std::to_string(rank) + ": " +
				       c.why);
				info("select/topo: JobId=%u placed on %s (candidate %d of %zu, engine %.0f us, job_test %.0f us, %s%s%s): %s",
				     job->job_id, node_names(*l, c.nodes).c_str(), rank, d->candidates.size(), us, since(),
				     reread ? ("node table read " + std::to_string(static_cast<long>(reread_us)) + " us").c_str()
					    : "node table unchanged",
				     shaped.empty() ? "" : "; ", shaped.c_str(), c.why.c_str());
				return SLURM_SUCCESS;
			}
			FREE_NULL_BITMAP(only);
		}
		if (req.locality == place::Locality::strict) {
			if (debug_on())
				info("select/topo: JobId=%u: cons_tres refused all %zu candidates; waiting (strict locality)",
				     job->job_id, d->candidates.size());
			return SLURM_ERROR;
		}
		if (debug_on())
			info("select/topo: JobId=%u: cons_tres refused all %zu candidates; placed by cons_tres",
			     job->job_id, d->candidates.size());
		return forward(job, bitmap, min_nodes, max_nodes, req_nodes, mode, tail);
	} catch (const std::exception &e) {
		error("select/topo: JobId=%u: %s: placed by cons_tres", job->job_id, e.what());
	} catch (...) {
		error("select/topo: JobId=%u: internal error: placed by cons_tres", job->job_id);
	}
	return forward(job, bitmap, min_nodes, max_nodes, req_nodes, mode, tail);
}

} // namespace loom::select_topo
