// select/topo's job_test, the answer (job_test_parts.hpp): RUN_NOW's
// placement by the engine, backfill's plan with the engine's nodes, a tier's
// class when Slurm chooses the nodes, and the accounting note of what was
// placed.
#include "plugins/select_topo/job_test_parts.hpp"

#include "lib/exchange/job_note.hpp"
#include "lib/place/admit.hpp"
#include "lib/place/gpu_class.hpp"
#include "lib/place/state_file.hpp"
#include "plugins/select_topo/explain.hpp"

#include <algorithm>

namespace loom::select_topo::job_test_parts {
namespace {

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

// The offered nodes of these classes: a copy of the call's bitmap, the
// caller's to free. (Nothing in the loop throws.)
bitstr_t *offered_of_classes(const Snapshot &s, const Call &c, const std::vector<std::string> &names)
{
	const topo::Cluster &cl = s.fabric.cluster;
	int64_t size = bit_size(c.bitmap);
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
}

// The classes offered to cons_tres in turn: in RUN_NOW each eligible class
// in the tier's order, then with --gpu-mixed the eligible classes together;
// otherwise the eligible classes together.
std::vector<std::vector<std::string>> tier_tries(const place::TierPlan &plan, const place::Need &need, uint16_t mode)
{
	std::vector<std::string> eligible;
	for (size_t i = 0; i < plan.eligible; i++)
		eligible.push_back(plan.options[i].name);
	std::vector<std::vector<std::string>> tries;
	if (mode == SELECT_MODE_RUN_NOW) {
		for (const std::string &e : eligible)
			tries.push_back({e});
		if (need.mixed && eligible.size() > 1)
			tries.push_back(eligible);
	} else if (!eligible.empty()) {
		tries.push_back(eligible);
	}
	return tries;
}

// The tier a job was placed by.
struct TierChoice {
	const place::TierTable &table;
	int minute;
	const place::Need &need;
	const place::TierPlan &plan;
};

// The job placed by cons_tres on the nodes of these classes (RUN_NOW): the
// record a site bills by, as for the engine's placements, and the placed line.
void note_tier_placement(const Snapshot &s, const Call &c, const JobAsk &ask, const TierChoice &tier,
			 const std::vector<std::string> &names, const std::string &why)
{
	const topo::Cluster &cl = s.fabric.cluster;
	int64_t size = bit_size(c.bitmap);
	place::Candidate k;
	for (int64_t i = 0; i < size; i++)
		if (bit_test(c.bitmap, i))
			if (topo::Index m = s.model(i); m != topo::none)
				k.nodes.push_back(m);
	for (size_t i = 0; i < k.nodes.size(); i++) {
		int g = ask.gpus_per_node;
		if (g <= 0 && ask.gpus_total > 0) // --gpus=N over the nodes, as evenly as it goes
			g = static_cast<int>(
				ask.gpus_total / static_cast<int64_t>(k.nodes.size()) +
				(static_cast<int64_t>(i) < ask.gpus_total % static_cast<int64_t>(k.nodes.size())));
		if (g <= 0)
			g = cl.nodes[static_cast<size_t>(k.nodes[i])].gpu_count;
		k.gpus.push_back(g);
	}
	(void)place::set_price(cl, tier.table, tier.minute, k);
	place::Request req;
	req.need = tier.need;
	place::Decision d;
	for (const std::string &n : names)
		d.gpu_class += (d.gpu_class.empty() ? "" : "+") + n;
	note_accounting(c.job, req, d, k);
	char *nodes = bitmap2node_name(c.bitmap);
	info("select/topo: JobId=%u placed by cons_tres on %s (Slurm chooses the nodes: %s; class %s of %s)",
	     ask.job_id, nodes, why.c_str(), d.gpu_class.c_str(), place::describe_plan(tier.plan).c_str());
	xfree(nodes);
}

} // namespace

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
			info("select/topo: JobId=%u: the engine's plan %s starts at %ld, cons_tres's at %ld: "
			     "cons_tres's stands",
			     job->job_id, s.names(k.nodes).c_str(),
			     rc2 == SLURM_SUCCESS ? static_cast<long>(job->start_time) : -1L, static_cast<long>(start));
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
	int minute = place::minute_of_day(s.weights);
	double run_minutes = ask.time_limit_s > 0 ? static_cast<double>(ask.time_limit_s) / 60 : 0;
	auto plan = place::plan_tier(table, need, minute, run_minutes, s.weights.balance_time);
	if (!plan) {
		error("select/topo: JobId=%u: %s: the job waits", ask.job_id, plan.error().str().c_str());
		rc = SLURM_ERROR;
		return true;
	}
	for (const std::vector<std::string> &names : tier_tries(*plan, need, c.mode)) {
		OwnedBitmap only(offered_of_classes(s, c, names));
		if (bit_set_count(only.b) == 0 || c.forward(only.b, c.mode) != SLURM_SUCCESS)
			continue;
		bit_copybits(c.bitmap, only.b);
		rc = SLURM_SUCCESS;
		if (c.mode == SELECT_MODE_RUN_NOW)
			note_tier_placement(s, c, ask, {table, minute, need, *plan}, names, why);
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
	auto within =
		place::place_within(*s.state, req, allowed, cons, s.weights, static_cast<int>(s.config.max_candidates));
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
			info("select/topo: JobId=%u: cannot fit now (engine %.0f us, %s): %s", id, us,
			     t.table().c_str(), d.reason.c_str());
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
		info("select/topo: JobId=%u placed on %s (candidate %d of %zu, engine %.0f us, job_test %.0f us, cpu "
		     "%.0f us, "
		     "cons_tres cpu %.0f us, %s%s%s): %s%s",
		     id, nodes.c_str(), rank, d.candidates.size(), us, t.us(), t.cpu_us(), c.cons_tres_cpu_us,
		     table.c_str(), within->note.empty() ? "" : "; ", within->note.c_str(), k.why.c_str(),
		     tier.c_str());
		note_accounting(c.job, req, d, k);
		return SLURM_SUCCESS;
	}
	place::NoFit nf = place::when_unplaced(req, d.reason, d.candidates.size());
	if (debug_on())
		info("select/topo: JobId=%u: %s", id, nf.reason.c_str());
	return nf.then == place::Unplaced::wait ? SLURM_ERROR : c.forward();
}

} // namespace loom::select_topo::job_test_parts
