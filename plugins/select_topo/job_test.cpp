#include "plugins/select_topo/job_test.hpp"

#include "lib/place/admit.hpp"
#include "lib/place/engine.hpp"
#include "lib/place/gpu_class.hpp"
#include "lib/place/slurm_policy.hpp"
#include "lib/place/state_file.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/exchange/job_note.hpp"
#include "lib/util/log.hpp"
#include "plugins/common/place_hints.hpp"
#include "plugins/select_topo/explain.hpp"
#include "plugins/select_topo/slurm_view.hpp"
#include "plugins/select_topo/value_wait.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>

namespace loom::select_topo {
namespace {

// This thread's CPU time (us): what a job_test cost slurmctld, apart from
// the time its thread waited for a core.
double thread_cpu_us()
{
	timespec ts{};
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Slurm's call, passed on to cons_tres (as it came, or with another bitmap or mode).
struct Call {
	job_record_t *job;
	bitstr_t *bitmap;
	uint32_t min_nodes, max_nodes, req_nodes;
	uint16_t mode;
	const JobTestTail &tail;
	mutable double cons_tres_cpu_us = 0; // spent in cons_tres's job_test, every call of this one

	int forward(bitstr_t *b, uint16_t m) const
	{
		double c0 = thread_cpu_us();
		int rc = cons_tres_job_test(job, b, min_nodes, max_nodes, req_nodes, m, tail);
		cons_tres_cpu_us += thread_cpu_us() - c0;
		return rc;
	}
	int forward() const { return forward(bitmap, mode); }
};

// A bitmap freed when it goes out of scope (an exception from the engine
// leaves none behind).
struct OwnedBitmap {
	bitstr_t *b;
	explicit OwnedBitmap(bitstr_t *x) : b(x) {}
	OwnedBitmap(const OwnedBitmap &) = delete;
	OwnedBitmap &operator=(const OwnedBitmap &) = delete;
	~OwnedBitmap() { FREE_NULL_BITMAP(b); }
};

// Since job_test began (wall clock, and this thread's CPU time), and what
// of the node table was read (how many nodes, all of them or those that
// changed, how long it took).
struct Timer {
	std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
	double cpu0 = thread_cpu_us();
	Refresh read;
	double read_us = 0;

	double us() const
	{
		return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
	}
	double cpu_us() const { return thread_cpu_us() - cpu0; }
	std::string table() const
	{
		if (read.nodes == 0)
			return "node table unchanged";
		if (read.full)
			return strprintf("node table: %zu nodes read %.0f us", read.nodes, read_us);
		if (read.swept)
			return strprintf("changed: %zu nodes read %.0f us (%zu by the sweep)", read.nodes, read_us, read.swept);
		return strprintf("changed: %zu nodes read %.0f us", read.nodes, read_us);
	}
};

place::Hints job_hints(const JobAsk &ask)
{
	auto h = plugin::hints_from_env(ask.spank_env, ask.spank_env_size);
	if (h)
		return *h;
	error("select/topo: JobId=%u: %s: placement hints ignored", ask.job_id, h.error().str().c_str());
	return {};
}

place::Request make_request(const Snapshot &s, const JobAsk &ask, const place::Hints &hints, const Call &c,
			    size_t offered)
{
	place::Request r;
	r.min_nodes = static_cast<int>(c.min_nodes);
	uint32_t maxn = c.max_nodes < offered ? c.max_nodes : static_cast<uint32_t>(offered);
	r.max_nodes = maxn > c.min_nodes ? static_cast<int>(maxn) : 0;
	if (ask.gpus_per_node > 0)
		r.gpus_per_node = ask.gpus_per_node;
	else if (ask.gpus_total > 0)
		r.gpus = static_cast<int>(ask.gpus_total);
	r.whole_node = ask.whole_node;
	r.gpu_class = place::job_gpu_class(ask.features, ask.gpu_tres, s.config.gpu_classes);
	r.need = hints.need;
	if (!r.gpu_class.empty() && r.need.given()) {
		// A model named in --constraint (or the GRES type) is what Slurm
		// filters nodes by: it wins over the tier.
		if (debug_on())
			info("select/topo: JobId=%u: --constraint names class %s: --gpu-tier and its bounds do not apply",
			     ask.job_id, r.gpu_class.c_str());
		r.need = {};
	}
	if (r.need.given()) {
		// Prices over the run; a value tier's time to wait for a cheaper
		// start (Weights::value_wait), now: in RUN_NOW, and in backfill's
		// WILL_RUN to know whether the job waits by choice.
		r.limit_s = ask.time_limit_s;
		if (c.mode == SELECT_MODE_RUN_NOW || c.mode == SELECT_MODE_WILL_RUN) {
			int64_t now = time(nullptr);
			int64_t waited = ask.eligible_at > 0 ? now - ask.eligible_at : 0;
			int64_t slack = ask.deadline > 0 ? ask.deadline - now - ask.time_limit_s : place::no_deadline;
			r.may_wait_s = place::wait_budget(s.weights.value_wait, ask.time_limit_s, waited, slack);
		}
	}
	r.comm = hints.comm;
	r.locality = hints.locality.mode;
	r.locality_level = hints.locality.kind;
	if (ask.max_switches > 0)
		r.max_leaves = static_cast<int>(ask.max_switches);
	return r;
}

// The request as replayed by `loom place --explain`: nodes Slurm did not offer
// this job are excluded by name.
std::string replay_request(const Snapshot &s, place::Request req, const place::Allowed &allowed)
{
	const topo::Cluster &c = s.fabric.cluster;
	std::vector<std::string> out;
	for (size_t m = 0; m < c.nodes.size(); m++)
		if (!allowed.test(static_cast<topo::Index>(m)))
			out.push_back(c.nodes[m].name);
	if (!out.empty())
		req.exclude = {hostlist_compress(out)};
	return place::format_request(req) + "\n";
}

// TEST_ONLY (at submit) and the plans cons_tres keeps: cons_tres's answer,
// once lib/place has checked the locality hint against this cluster.
int test_only(const Snapshot &s, const Call &c, const place::Hints &hints)
{
	const place::LocalityHint &loc = hints.locality;
	if (c.mode != SELECT_MODE_TEST_ONLY || loc.mode == place::Locality::any)
		return c.forward();
	if (status st = place::check_locality_kind(loc, s.kinds); !st) {
		error("select/topo: JobId=%u: %s: job refused", c.job->job_id, st.error().str().c_str());
		return SLURM_ERROR;
	}
	if (loc.mode == place::Locality::strict &&
	    !place::can_ever_fit(s.fabric.cluster, loc.kind, offered_nodes(s, c.bitmap).allowed,
				 static_cast<int>(c.min_nodes))) {
		if (debug_on())
			info("select/topo: JobId=%u: no %s holds %u of the offered nodes", c.job->job_id, loc.kind.c_str(),
			     c.min_nodes);
		return SLURM_ERROR;
	}
	return c.forward();
}

// Backfill's WILL_RUN: cons_tres says when the job can start (and on which
// nodes); the engine then chooses on the cluster as it will be then (the GPUs
// of running jobs that end by that time, by their time limits, free), and
// cons_tres is asked whether the engine's nodes start as early. If so the plan
// is the engine's, which is what RUN_NOW will pick when the time comes;
// otherwise cons_tres's plan stands. Costs one more cons_tres WILL_RUN.
int plan_will_run(Snapshot &s, const Call &c, const place::Request &req, const place::Allowed &allowed,
		  const place::SlurmConstraints &cons)
{
	job_record_t *job = c.job;
	OwnedBitmap offered(bit_copy(c.bitmap));
	int rc = c.forward(c.bitmap, SELECT_MODE_WILL_RUN);
	if (rc != SLURM_SUCCESS)
		return rc;
	time_t start = job->start_time;
	if (start <= std::time(nullptr)) // it starts now, through RUN_NOW, where the engine chooses
		return rc;
	OwnedBitmap planned(bit_copy(c.bitmap));
	try {
		(void)refresh(s);
		place::State then = *s.state;
		place::Request later = req;
		later.may_wait_s = 0; // the plan is its earliest start
		for (auto [i, gpus] : gpus_freed_by(start))
			if (topo::Index m = s.model(i); m != topo::none)
				(void)then.set_node_free(m, std::min(then.total_gpus(m), then.free_gpus(m) + gpus), 0);
		auto within = place::place_within(then, later, allowed, cons, s.weights, 1);
		if (!within || !within->decision.placed()) {
			if (debug_on())
				info("select/topo: JobId=%u: the engine has no plan at %ld: cons_tres's stands",
				     job->job_id, static_cast<long>(start));
			return rc;
		}
		const place::Candidate &k = within->decision.candidates[0];
		OwnedBitmap only(bitmap_of(s, k.nodes, bit_size(c.bitmap), offered.b));
		if (bit_equal(only.b, planned.b))
			return rc;
		int rc2 = c.forward(only.b, SELECT_MODE_WILL_RUN);
		if (debug_on() && (rc2 != SLURM_SUCCESS || job->start_time > start))
			info("select/topo: JobId=%u: the engine's plan %s starts at %ld, cons_tres's at %ld: cons_tres's stands",
			     job->job_id, s.names(k.nodes).c_str(), rc2 == SLURM_SUCCESS ? static_cast<long>(job->start_time) : -1L,
			     static_cast<long>(start));
		if (rc2 == SLURM_SUCCESS && job->start_time <= start) {
			bit_copybits(c.bitmap, only.b);
			if (debug_on()) {
				char *was = bitmap2node_name(planned.b);
				info("select/topo: JobId=%u will run on %s at %ld (engine; cons_tres planned %s)",
				     job->job_id, s.names(k.nodes).c_str(), static_cast<long>(job->start_time), was);
				xfree(was);
			}
			return rc;
		}
	} catch (const std::exception &e) {
		error("select/topo: JobId=%u: backfill plan by the engine failed (%s): cons_tres's plan stands",
		      job->job_id, e.what());
	}
	bit_copybits(c.bitmap, planned.b); // cons_tres's plan stands
	job->start_time = start;
	return rc;
}

// What a site bills and reports by: the class a tier chose (or the one the
// job named), its tier and the price per hour of its GPUs, in the job's
// SystemComment (lib/exchange/job_note.hpp; scontrol show job, sacct,
// jobcomp/health's records).
void note_accounting(job_record_t *job, const place::Request &req, const place::Decision &d, const place::Candidate &k)
{
	exchange::JobNote n;
	n.gpu_class = !d.gpu_class.empty() ? d.gpu_class : req.gpu_class;
	n.tier = req.need.tier;
	n.price_per_h = k.price_per_h;
	if (n.gpu_class.empty() && n.price_per_h < 0)
		return;
	std::string text = exchange::put_job_note(job->system_comment ? job->system_comment : "", n);
	xfree(job->system_comment);
	job->system_comment = xstrdup(text.c_str());
}

// A tier when Slurm chooses the nodes (--contiguous, --spread-job, LLN,
// --exclusive=topo, --segment): the tier still picks the class, cons_tres the
// nodes within it. RUN_NOW offers cons_tres the nodes of each eligible class
// in the tier's order and the first it can place wins; with --gpu-mixed,
// then the eligible classes together; when none can, the job waits, as any
// tier job that fits nowhere. Backfill's WILL_RUN plans on the eligible
// classes together (RUN_NOW takes one). A value tier does not wait by choice
// here. Returns false when the need does not apply (no classes, a model named
// in --constraint): Slurm's choice over every node offered.
bool forward_by_tier(Snapshot &s, const Call &c, const JobAsk &ask, const place::Hints &hints, const std::string &why,
		     int &rc)
{
	place::Need need = hints.need;
	if (!need.given() || !s.weights.tiers || s.weights.tiers->empty() ||
	    !place::job_gpu_class(ask.features, ask.gpu_tres, s.config.gpu_classes).empty())
		return false;
	const place::TierTable &table = *s.weights.tiers;
	const topo::Cluster &cl = s.fabric.cluster;
	int minute = place::minute_of_day(s.weights);
	double run_minutes = ask.time_limit_s > 0 ? static_cast<double>(ask.time_limit_s) / 60 : 0;
	auto plan = place::plan_tier(table, need, minute, run_minutes, s.weights.balance_time);
	if (!plan) {
		error("select/topo: JobId=%u: %s: the job waits", ask.job_id, plan.error().str().c_str());
		rc = SLURM_ERROR;
		return true;
	}
	int64_t size = bit_size(c.bitmap);
	// The offered nodes of these classes.
	// (Nothing in the loop throws: the copy is the caller's to free.)
	auto of_classes = [&](const std::vector<std::string> &names) {
		bitstr_t *b = bit_copy(c.bitmap);
		for (int64_t i = 0; i < size; i++) {
			if (!bit_test(b, i))
				continue;
			topo::Index m = s.model(i);
			const topo::Node *n = m == topo::none ? nullptr : &cl.nodes[static_cast<size_t>(m)];
			const std::string *cls = n && n->perf_class ? &cl.classes.name(n->perf_class) : nullptr;
			if (!cls || std::find(names.begin(), names.end(), *cls) == names.end())
				bit_clear(b, i);
		}
		return b;
	};
	std::vector<std::string> eligible;
	for (size_t i = 0; i < plan->eligible; i++)
		eligible.push_back(plan->options[i].name);
	std::vector<std::vector<std::string>> tries;
	if (c.mode == SELECT_MODE_RUN_NOW) {
		for (const std::string &e : eligible)
			tries.push_back({e});
		if (need.mixed && eligible.size() > 1)
			tries.push_back(eligible);
	} else if (!eligible.empty()) {
		tries.push_back(eligible);
	}
	for (const std::vector<std::string> &names : tries) {
		OwnedBitmap only(of_classes(names));
		if (bit_set_count(only.b) == 0 || c.forward(only.b, c.mode) != SLURM_SUCCESS)
			continue;
		bit_copybits(c.bitmap, only.b);
		rc = SLURM_SUCCESS;
		if (c.mode != SELECT_MODE_RUN_NOW)
			return true;
		// The record a site bills by, as for the engine's placements.
		place::Candidate k;
		for (int64_t i = 0; i < size; i++)
			if (bit_test(c.bitmap, i))
				if (topo::Index m = s.model(i); m != topo::none)
					k.nodes.push_back(m);
		for (size_t i = 0; i < k.nodes.size(); i++) {
			int g = ask.gpus_per_node;
			if (g <= 0 && ask.gpus_total > 0) // --gpus=N over the nodes, as evenly as it goes
				g = static_cast<int>(ask.gpus_total / static_cast<int64_t>(k.nodes.size()) +
						     (static_cast<int64_t>(i) < ask.gpus_total % static_cast<int64_t>(k.nodes.size())));
			if (g <= 0)
				g = cl.nodes[static_cast<size_t>(k.nodes[i])].gpu_count;
			k.gpus.push_back(g);
		}
		(void)place::set_price(cl, table, minute, k);
		place::Request req;
		req.need = need;
		place::Decision d;
		for (const std::string &n : names)
			d.gpu_class += (d.gpu_class.empty() ? "" : "+") + n;
		note_accounting(c.job, req, d, k);
		char *nodes = bitmap2node_name(c.bitmap);
		info("select/topo: JobId=%u placed by cons_tres on %s (Slurm chooses the nodes: %s; class %s of %s)",
		     ask.job_id, nodes, why.c_str(), d.gpu_class.c_str(),
		     place::describe_plan(*plan).c_str());
		xfree(nodes);
		return true;
	}
	if (debug_on())
		info("select/topo: JobId=%u: no class of its tier holds it now (%s): the job waits", ask.job_id,
		     place::describe_plan(*plan).c_str());
	rc = SLURM_ERROR;
	return true;
}

// RUN_NOW: the engine's candidates, best first, each offered to cons_tres.
int place_now(Snapshot &s, const Call &c, const place::Request &req, const place::Allowed &allowed,
	      const place::SlurmConstraints &cons, const Timer &t)
{
	uint32_t id = c.job->job_id;
	// "engine" in the log is the engine's own time (place_within, and its
	// second run after a recheck), not the job_test's until then.
	double e0 = t.us();
	auto within = place::place_within(*s.state, req, allowed, cons, s.weights,
					  static_cast<int>(s.config.max_candidates));
	// The candidates' nodes as Slurm has them now (a mark or GPU count no
	// select call announced): when any differs, choose again, once.
	if (within && within->decision.placed()) {
		std::vector<topo::Index> nodes;
		for (const place::Candidate &k : within->decision.candidates)
			nodes.insert(nodes.end(), k.nodes.begin(), k.nodes.end());
		if (recheck(s, nodes))
			within = place::place_within(*s.state, req, allowed, cons, s.weights,
						     static_cast<int>(s.config.max_candidates));
	}
	double us = t.us() - e0;
	if (!within) {
		info("select/topo: JobId=%u: placement engine failed (%s): placed by cons_tres", id,
		     within.error().str().c_str());
		return c.forward();
	}
	const place::Decision &d = within->decision;
	std::string xdir = explain_dir(s);
	auto record = [&](const std::string &outcome) {
		if (!xdir.empty())
			explain_decision(xdir, id, replay_request(s, req, allowed), place::write_state(*s.state),
					 outcome + "\n");
	};
	if (!d.placed()) {
		record("pending: " + d.reason);
		if (debug_on())
			info("select/topo: JobId=%u: cannot fit now (engine %.0f us, %s): %s", id, us, t.table().c_str(),
			     d.reason.c_str());
		return place::when_unplaced(req, d.reason).then == place::Unplaced::wait ? SLURM_ERROR : c.forward();
	}
	int rank = 0;
	for (const place::Candidate &k : d.candidates) {
		rank++;
		OwnedBitmap only(bitmap_of(s, k.nodes, bit_size(c.bitmap)));
		if (c.forward(only.b, c.mode) != SLURM_SUCCESS)
			continue;
		bit_copybits(c.bitmap, only.b);
		std::string nodes = s.names(k.nodes);
		std::string tier = d.tier.empty() ? "" : "; " + d.tier;
		record("placed " + nodes + " candidate " + std::to_string(rank) + ": " + k.why + tier);
		std::string table = t.table();
		info("select/topo: JobId=%u placed on %s (candidate %d of %zu, engine %.0f us, job_test %.0f us, cpu %.0f us, "
		     "cons_tres cpu %.0f us, %s%s%s): %s%s",
		     id, nodes.c_str(), rank, d.candidates.size(), us, t.us(), t.cpu_us(), c.cons_tres_cpu_us, table.c_str(),
		     within->note.empty() ? "" : "; ", within->note.c_str(), k.why.c_str(), tier.c_str());
		note_accounting(c.job, req, d, k);
		return SLURM_SUCCESS;
	}
	place::NoFit nf = place::when_unplaced(req, d.reason, d.candidates.size());
	if (debug_on())
		info("select/topo: JobId=%u: %s", id, nf.reason.c_str());
	return nf.then == place::Unplaced::wait ? SLURM_ERROR : c.forward();
}

// The spare pool's rule (lib/place/spares.hpp): spares are taken out of the
// nodes Slurm offers a job that may not use them, in every mode that gives
// or plans nodes, whoever places the job. A job may: when its time limit is
// at most spare_lend, when it runs in a reservation (a replacement's, or an
// admin's: Slurm offers it only the reservation's nodes), and on a node it
// asked for by name.
size_t withhold_spares(Snapshot &s, const JobAsk &ask, bitstr_t *bitmap)
{
	refresh_spares(s);
	if (!s.pool_ready || ask.in_reservation || place::may_borrow_spares(s.spare_spec, ask.time_limit_s))
		return 0;
	size_t n = 0;
	int64_t size = bit_size(bitmap);
	for (const place::SpareDomain &d : s.pool.domains)
		for (topo::Index m : d.spares) {
			int i = s.slurm_of[static_cast<size_t>(m)];
			if (i < 0 || i >= size || !bit_test(bitmap, i) ||
			    std::find(ask.required.begin(), ask.required.end(), i) != ask.required.end())
				continue;
			bit_clear(bitmap, i);
			n++;
		}
	return n;
}

} // namespace

int topo_job_test(Snapshot &s, job_record_t *job, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
		  uint32_t req_nodes, uint16_t mode, const JobTestTail &tail)
{
	const Call c{job, bitmap, min_nodes, max_nodes, req_nodes, mode, tail};
	JobAsk ask = job_ask(job);
	place::Hints hints = job_hints(ask);
	// Backfill's plan (WILL_RUN) with the engine's nodes, unless preemption is
	// part of the answer (cons_tres's list of jobs to preempt is for its own nodes).
	bool will_run = mode == SELECT_MODE_WILL_RUN && s.config.will_run == "engine" &&
			s.config.placement != "cons_tres" && !job_test_preempts(tail);
	// A job with a tier may wait by choice (value); backfill asks first.
	bool may_wait = mode == SELECT_MODE_WILL_RUN && hints.need.given() && s.config.placement != "cons_tres";
	if (mode == SELECT_MODE_RUN_NOW || mode == SELECT_MODE_WILL_RUN)
		if (size_t n = withhold_spares(s, ask, bitmap); n && debug_on())
			info("select/topo: JobId=%u: %zu spare node(s) withheld (time limit %lld s, spare_lend %lld s)",
			     job->job_id, n, static_cast<long long>(ask.time_limit_s),
			     static_cast<long long>(s.spare_spec.lend_max_s));
	if (mode != SELECT_MODE_RUN_NOW && !will_run && !may_wait)
		return test_only(s, c, hints);
	Timer t;
	// Slurm's own choice over every node offered, said in the placed line.
	auto slurm_decides = [&](const std::string &why) {
		int rc = c.forward();
		if (rc == SLURM_SUCCESS && !will_run) {
			char *nodes = bitmap2node_name(bitmap);
			info("select/topo: JobId=%u placed by cons_tres on %s (%s, job_test %.0f us, cpu %.0f us)", job->job_id,
			     nodes, why.c_str(), t.us(), t.cpu_us());
			xfree(nodes);
		}
		return rc;
	};
	if (s.config.placement == "cons_tres")
		return slurm_decides("placement=cons_tres");
	// Required nodes: every one of them in the fabric, and some left to choose.
	place::SlurmConstraints cons;
	for (int i : ask.required) {
		topo::Index m = s.model(i);
		if (m == topo::none)
			return slurm_decides("required node outside the fabric");
		cons.required.push_back(m);
	}
	place::note_required(ask.policies, cons.required.size(), max_nodes, req_nodes,
			     ask.gpus_per_node == 0 && ask.gpus_total > 0);
	// A policy that is not "tightest" (--spread-job, --contiguous, LLN, ...).
	if (std::string why = place::step_aside_for(ask.policies); !why.empty()) {
		// Nodes named by the job (-w) win over a tier, as a model named in
		// --constraint does; for the other policies the tier picks the class.
		int rc = SLURM_ERROR;
		if (ask.required.empty() && forward_by_tier(s, c, ask, hints, why, rc))
			return rc;
		return slurm_decides(why + " asks for Slurm's own choice");
	}
	t.read = refresh(s);
	t.read_us = t.read.nodes ? t.us() : 0;
	if (s.config.snapshot_check) {
		if (std::string d = snapshot_diff(s); !d.empty()) {
			error("select/topo: JobId=%u: snapshot differs from the node table: %s", job->job_id, d.c_str());
			snapshot_note_change();
			t.read = refresh(s);
		}
	}
	Offered offered = offered_nodes(s, bitmap, true, mode == SELECT_MODE_RUN_NOW);
	cons.weight = std::move(offered.weight);
	cons.target_nodes = static_cast<int>(req_nodes);
	cons.use_min_nodes = ask.use_min_nodes;
	place::Request req = make_request(s, ask, hints, c, offered.count);
	// A value tier that may wait asks whether its cheapest class could
	// hold it once its nodes free: they count, and cannot be chosen now.
	std::unique_ptr<place::State> wait_view;
	if (req.may_wait_s > 0)
		wait_view = add_waitable_nodes(s, job, req, offered.allowed);
	if (mode == SELECT_MODE_WILL_RUN) {
		// Waiting by choice (for its cheapest class, or off-peak hours) it
		// has no plan: backfill reserves nothing for it, and the nodes it
		// leaves idle are for the jobs behind it. RUN_NOW places it once
		// its class frees or its time to wait is spent.
		if (req.may_wait_s > 0) {
			StateView view(s, std::move(wait_view));
			auto now = place::place_within(*s.state, req, offered.allowed, cons, s.weights, 1);
			if (now && !now->decision.placed() && !now->decision.waiting.empty()) {
				if (debug_on())
					info("select/topo: JobId=%u: no backfill plan: %s", job->job_id,
					     now->decision.reason.c_str());
				return SLURM_ERROR;
			}
		}
		if (!will_run)
			return test_only(s, c, hints);
		return plan_will_run(s, c, req, offered.allowed, cons);
	}
	StateView view(s, std::move(wait_view));
	return place_now(s, c, req, offered.allowed, cons, t);
}

} // namespace loom::select_topo
