#include "plugins/select_topo/job_test.hpp"

#include "lib/place/admit.hpp"
#include "lib/place/slurm_policy.hpp"
#include "plugins/select_topo/job_test_parts.hpp"
#include "plugins/select_topo/value_wait.hpp"

namespace loom::select_topo {
namespace {

using namespace job_test_parts;

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
			info("select/topo: JobId=%u: no %s holds %u of the offered nodes", c.job->job_id,
			     loc.kind.c_str(), c.min_nodes);
		return SLURM_ERROR;
	}
	return c.forward();
}

// Slurm's own choice over every node offered, said in the placed line.
int slurm_decides(const Call &c, bool will_run, const Timer &t, const std::string &why)
{
	int rc = c.forward();
	if (rc == SLURM_SUCCESS && !will_run) {
		char *nodes = bitmap2node_name(c.bitmap);
		info("select/topo: JobId=%u placed by cons_tres on %s (%s, job_test %.0f us, cpu %.0f us)",
		     c.job->job_id, nodes, why.c_str(), t.us(), t.cpu_us());
		xfree(nodes);
	}
	return rc;
}

// The engine's answer: the node table brought up to date, the offered nodes
// and the request; backfill's plan (WILL_RUN), or RUN_NOW's placement.
int engine_job_test(Snapshot &s, const Call &c, const JobAsk &ask, const place::Hints &hints,
		    place::SlurmConstraints &cons, Timer &t, bool will_run)
{
	job_record_t *job = c.job;
	t.read = refresh(s);
	t.read_us = t.read.nodes ? t.us() : 0;
	if (s.config.snapshot_check) {
		if (std::string d = snapshot_diff(s); !d.empty()) {
			error("select/topo: JobId=%u: snapshot differs from the node table: %s", job->job_id,
			      d.c_str());
			snapshot_note_change();
			t.read = refresh(s);
		}
	}
	Offered offered = offered_nodes(s, c.bitmap, true, c.mode == SELECT_MODE_RUN_NOW);
	cons.weight = std::move(offered.weight);
	cons.target_nodes = static_cast<int>(c.req_nodes);
	cons.use_min_nodes = ask.use_min_nodes;
	place::Request req = make_request(s, ask, hints, c, offered.count);
	// A value tier that may wait asks whether its cheapest class could
	// hold it once its nodes free: they count, and cannot be chosen now.
	std::unique_ptr<place::State> wait_view;
	if (req.may_wait_s > 0)
		wait_view = add_waitable_nodes(s, job, req, offered.allowed);
	if (c.mode == SELECT_MODE_WILL_RUN) {
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
	if (s.config.placement == "cons_tres")
		return slurm_decides(c, will_run, t, "placement=cons_tres");
	// Required nodes: every one of them in the fabric, and some left to choose.
	place::SlurmConstraints cons;
	if (!required_in_fabric(s, ask, cons))
		return slurm_decides(c, will_run, t, "required node outside the fabric");
	place::note_required(ask.policies, cons.required.size(), max_nodes, req_nodes,
			     ask.gpus_per_node == 0 && ask.gpus_total > 0);
	// A policy that is not "tightest" (--spread-job, --contiguous, LLN, ...).
	if (std::string why = place::step_aside_for(ask.policies); !why.empty()) {
		// Nodes named by the job (-w) win over a tier, as a model named in
		// --constraint does; for the other policies the tier picks the class.
		int rc = SLURM_ERROR;
		if (ask.required.empty() && forward_by_tier(s, c, ask, hints, why, rc))
			return rc;
		return slurm_decides(c, will_run, t, why + " asks for Slurm's own choice");
	}
	return engine_job_test(s, c, ask, hints, cons, t, will_run);
}

} // namespace loom::select_topo
