// jobcomp/health: one finished job (handle_job, jobcomp_worker.hpp): its
// failure classified from its nodes' state and its output files, the
// culprits drained under the drain cap, the job requeued (on spares when
// the pool has them) or moved off suspect nodes, its failure recorded.
// The worker's thread, queue and files are jobcomp_worker.cpp's.
#include "lib/health/jobcomp_worker.hpp"

#include "lib/health/job_log.hpp"
#include "lib/health/spares.hpp"
#include "lib/util/admin_comment.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/log.hpp"

#include <algorithm>
#include <ctime>
#include <pwd.h>
#include <set>
#include <unistd.h>

namespace loom::health {

namespace {

std::string user_name(uint32_t uid, const std::string &known)
{
	if (!known.empty())
		return known;
	struct passwd pw, *res = nullptr;
	char buf[4096];
	if (::getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res)
		return res->pw_name;
	return std::to_string(uid);
}

void scan_outputs(const JobRecord &rec, const JobcompOptions &opt, JobLogScan &all)
{
	const JobEnd &e = rec.end;
	std::string first = e.nodes.empty() ? std::string() : e.nodes.front();
	std::string user = user_name(rec.uid, rec.user);
	std::string out_pat = rec.std_out_pattern.empty() ? (rec.array_job_id ? "slurm-%A_%a.out" : "slurm-%j.out")
							  : rec.std_out_pattern;
	std::set<std::string> paths;
	paths.insert(expand_output_path(out_pat, rec.work_dir, e.job_id, user, rec.job_name, first, rec.array_job_id,
					rec.array_task_id));
	if (!rec.std_err_pattern.empty())
		paths.insert(expand_output_path(rec.std_err_pattern, rec.work_dir, e.job_id, user, rec.job_name, first,
						rec.array_job_id, rec.array_task_id));
	for (const auto &p : paths) {
		if (p == "/dev/null")
			continue;
		auto s = scan_job_log_file(p, opt.log_max_bytes, 200, opt.xids);
		if (!s) {
			log_debug("job %u: %s", e.job_id, s.error().str().c_str());
			continue;
		}
		for (auto &l : s->lines)
			all.lines.push_back(std::move(l));
		for (const auto &[k, c] : s->counts)
			all.counts[k] += c;
	}
}

// The replacement of the culprits ('named' nodes the job ran on) by spares
// of the published pool. False when there is none (out.no_spares says why;
// empty when no pool is published).
bool plan_spares(const JobEnd &e, const JobcompOptions &opt, SlurmOps &slurm, JobOutcome &out,
		 const std::vector<std::string> &named, Replacement &plan)
{
	// No pool published (select/topo without spares=): nothing to try, nothing to say.
	if (opt.spare_file.empty() || ::access(opt.spare_file.c_str(), F_OK) != 0)
		return false;
	std::vector<std::string> culprits;
	for (const auto &n : named)
		if (std::find(e.nodes.begin(), e.nodes.end(), n) != e.nodes.end())
			culprits.push_back(n);
	if (culprits.empty()) {
		out.no_spares = "no culprit node named";
		return false;
	}
	auto pool = exchange::read_spare_file(opt.spare_file);
	if (!pool) {
		out.no_spares = "no spare pool: " + pool.error().str();
		return false;
	}
	std::vector<std::string> cand = candidate_spares(*pool, culprits);
	std::map<std::string, SlurmNode> states;
	if (!cand.empty()) {
		auto st = slurm.show_nodes(cand);
		if (!st) {
			out.no_spares = "spare states unknown: " + st.error().str();
			return false;
		}
		states = std::move(*st);
	}
	// A busy spare is waited for only when its job is a borrower's (ends
	// within the pool's lending bound); unknown end times: idle spares only.
	std::vector<std::string> busy;
	for (const auto &[name, n] : states)
		if (n.base == "MIXED" || n.base == "ALLOCATED")
			busy.push_back(name);
	std::map<std::string, int64_t> until;
	std::string until_unknown;
	if (!busy.empty()) {
		if (auto u = slurm.jobs_end(busy))
			until = std::move(*u);
		else
			until_unknown =
				" (busy spares not waited for, their jobs' end unknown: " + u.error().str() + ")";
	}
	plan = plan_replacement(*pool, e.nodes, culprits, states, until, static_cast<int64_t>(::time(nullptr)));
	if (!plan.ok) {
		out.no_spares = plan.why + until_unknown;
		return false;
	}
	return true;
}

// The plan carried out: its reservation, the job requeued held (unless it
// already was, or it is a move), moved into the reservation and released.
// False when nothing was requeued; true when it was, with its spares or
// (out.no_spares says why) without.
bool requeue_into_spares(const JobRecord &rec, SlurmOps &slurm, JobOutcome &out, const Replacement &plan,
			 bool migration)
{
	const JobEnd &e = rec.end;
	std::string name = "loom_spare_" + std::to_string(e.job_id) + "_" + std::to_string(e.restart_count + 1);
	SlurmOps::Reservation r{name, join(plan.nodes, ","), user_name(rec.uid, rec.user),
				rec.time_limit_s > 0 ? rec.time_limit_s + 600 : 0};
	if (auto st = slurm.create_reservation(r); !st) {
		out.no_spares = "reservation refused: " + st.error().str();
		return false;
	}
	bool held = false;
	if (!rec.already_requeued && !migration) {
		if (auto st = slurm.requeue_hold(e.job_id); !st) {
			out.no_spares = "requeuehold failed: " + st.error().str();
			(void)slurm.delete_reservation(name);
			return false;
		}
		held = true;
	}
	std::string note =
		std::string(migration ? "loom: moved off suspect node(s) to spares " : "loom: restarted on spares ") +
		plan.summary() + " in reservation " + name;
	auto up = slurm.update_job(
		e.job_id, {"ReservationName=" + name,
			   "AdminComment=" + admin_comment_replace(rec.admin_comment, admin_prefix_health, note)});
	if (held)
		if (auto st = slurm.release(e.job_id); !st)
			log_error("job %u: release after requeuehold failed, the job stays held: %s", e.job_id,
				  st.error().str().c_str());
	out.requeued = true;
	if (!up) {
		out.no_spares = "moving the job into " + name + " failed: " + up.error().str();
		(void)slurm.delete_reservation(name);
		return true; // requeued all the same, without its spares
	}
	out.reservation = name;
	out.spares = plan.swaps;
	log_info("job %u: %s", e.job_id, note.c_str());
	return true;
}

// The requeue of an infrastructure failure on spares (spares.hpp): a
// reservation of the job's healthy nodes and one spare per culprit, the job
// requeued held, moved into it, and released; so that it starts at once on
// those nodes, ahead of the queue, with its priority as Slurm has it. False
// when the job should take the normal requeue instead (out.no_spares says
// why); true when it was requeued here (out.requeued, and out.spares when
// the reservation is its own).
// 'culprits': the failed nodes, or for a migration (spank_ckpt requeued the
// job off a suspect node) the suspect ones.
bool requeue_on_spares(const JobRecord &rec, const JobcompOptions &opt, SlurmOps &slurm, JobOutcome &out,
		       const std::vector<std::string> &named, bool migration)
{
	Replacement plan;
	if (!plan_spares(rec.end, opt, slurm, out, named, plan))
		return false;
	return requeue_into_spares(rec, slurm, out, plan, migration);
}

// The job's nodes as Slurm has them now (also into the job's node_state and
// node_reason); known: Slurm answered.
struct JobNodes {
	std::map<std::string, SlurmNode> nodes;
	bool known = false;
};

JobNodes node_states(JobEnd &e, SlurmOps &slurm)
{
	JobNodes out;
	if (auto st = slurm.show_nodes(e.nodes)) {
		out.nodes = std::move(*st);
		out.known = true;
		for (const auto &[n, s] : out.nodes) {
			e.node_state[n] = s.state;
			if (!s.reason.empty())
				e.node_reason[n] = s.reason;
		}
	} else {
		log_warning("job %u: node states unknown: %s", e.job_id, st.error().str().c_str());
	}
	return out;
}

// The failure's class and what to do about it, under the job's budget: the
// one a --ckpt job carries, else the site's.
void classify_and_decide(const JobRecord &rec, const JobcompOptions &opt, const JobLogScan &scan, JobOutcome &out)
{
	const JobEnd &e = rec.end;
	int64_t budget = e.checkpointed && rec.ckpt_max_restarts >= 0 ? rec.ckpt_max_restarts : opt.restart_budget;
	out.cls = classify_job(e, scan);
	out.decision = decide_job(e, out.cls, static_cast<uint32_t>(budget));
	if (is_infrastructure(out.cls.cls))
		out.decision.why += e.checkpointed && rec.ckpt_max_restarts >= 0 ? " (the job's --ckpt-max-restarts)"
				    : e.checkpointed ? " (a --ckpt job without its budget: restart_budget)"
						     : " (restart_budget)";
	if (out.decision.requeue && !e.requeue_allowed) {
		// Slurm refuses to requeue a job that may not be (--no-requeue,
		// JobRequeue=0), checkpointed or not: say so instead of failing.
		out.decision.requeue = false;
		out.decision.why = "checkpointed, but the job may not be requeued (--no-requeue or JobRequeue=0)";
	}
}

void drain_culprits(const JobEnd &e, const JobcompOptions &opt, SlurmOps &slurm, DrainLimiter &limiter,
		    const JobNodes &nodes, int64_t now, JobOutcome &out)
{
	for (const auto &n : out.decision.drain) {
		// The ownership rules of slurm_ops.hpp: a node whose state is
		// unknown is not drained on a guess (a drain would overwrite an
		// admin's reason); one already drained (the health check, an
		// admin), rebooting, or down with someone else's reason is left
		// as it is.
		auto it = nodes.nodes.find(n);
		if (!nodes.known || it == nodes.nodes.end()) {
			log_error("job %u: NOT draining %s: its state in Slurm is unknown (%s)", e.job_id, n.c_str(),
				  out.decision.reason.c_str());
			continue;
		}
		if (!it->second.may_drain_after_job_failure())
			continue;
		if (!limiter.allow(now)) {
			out.capped.push_back(n);
			log_error("job %u: drain cap reached (%lld in %lld s): NOT draining %s (%s)", e.job_id,
				  static_cast<long long>(opt.max_drains), static_cast<long long>(opt.drain_window),
				  n.c_str(), out.decision.reason.c_str());
			continue;
		}
		if (auto d = slurm.drain(n, out.decision.reason); !d) {
			log_error("job %u: drain %s failed: %s", e.job_id, n.c_str(), d.error().str().c_str());
			continue;
		}
		limiter.record(now);
		out.drained.push_back(n);
	}
}

// The requeue decided, on spares when it is an infrastructure failure and
// the pool has them; true when it went on spares.
bool requeue_job(const JobRecord &rec, const JobcompOptions &opt, SlurmOps &slurm, JobOutcome &out)
{
	const JobEnd &e = rec.end;
	bool on_spares = false;
	if (out.decision.requeue && opt.requeue && opt.spares && is_infrastructure(out.cls.cls)) {
		on_spares = requeue_on_spares(rec, opt, slurm, out, out.decision.drain, false);
		if (!on_spares && !out.no_spares.empty())
			log_info("job %u: loom: requeued without spares: %s", e.job_id, out.no_spares.c_str());
	}
	if (!on_spares && out.decision.requeue && opt.requeue && !rec.already_requeued) {
		if (auto r = slurm.requeue(e.job_id); r)
			out.requeued = true;
		else
			log_error("job %u: requeue failed: %s", e.job_id, r.error().str().c_str());
	}
	return on_spares;
}

// Proactive migration: a --ckpt job that spank_ckpt requeued off a node
// marked suspect, after the checkpoint the mark asked for. It resumes on
// the pool's spares when there are some; either way the suspect node is
// excluded for it (ExcNodeList), so that it does not go back there.
void migrate_off_suspects(const JobRecord &rec, const JobcompOptions &opt, SlurmOps &slurm, const JobNodes &nodes,
			  JobOutcome &out)
{
	const JobEnd &e = rec.end;
	std::vector<std::string> suspects;
	bool culprit_drained = false; // loom's own requeue of a failure, not a move
	for (const auto &n : e.nodes)
		if (auto it = nodes.nodes.find(n); it != nodes.nodes.end()) {
			culprit_drained |= it->second.drained_by_loom();
			if (!it->second.suspect_mark().empty())
				suspects.push_back(n);
		}
	if (suspects.empty() || culprit_drained)
		return;
	if (rec.pinned) {
		log_info("job %u: loom: moved off suspect node(s) but it names its nodes (-w): no spare, no exclusion",
			 e.job_id);
		return;
	}
	out.migrated = true;
	if (requeue_on_spares(rec, opt, slurm, out, suspects, true))
		return;
	std::string why = out.no_spares.empty() ? "no spare pool" : out.no_spares;
	std::string ex = join(suspects, ",");
	std::string note = "loom: moved off suspect node(s) " + ex + " (no spares: " + why + ")";
	auto up = slurm.update_job(
		e.job_id, {"ExcNodeList=" + ex,
			   "AdminComment=" + admin_comment_replace(rec.admin_comment, admin_prefix_health, note)});
	log_info("job %u: loom: moved off suspect node(s) %s without spares (%s)%s", e.job_id, ex.c_str(), why.c_str(),
		 up ? "" : (": excluding them failed: " + up.error().str()).c_str());
}

void log_failure(const JobRecord &rec, const JobOutcome &out)
{
	const JobEnd &e = rec.end;
	bool placed = !(rec.placed.gpu_class.empty() && rec.placed.price_per_h < 0);
	log_info("job %u %s%s: %s: %s; drained [%zu] capped [%zu]; %s%s%s%s", e.job_id, e.state.c_str(),
		 e.checkpointed ? " (--ckpt)" : "", failure_class_name(out.cls.cls), out.cls.evidence.c_str(),
		 out.drained.size(), out.capped.size(), out.requeued ? "requeued: " : "", out.decision.why.c_str(),
		 placed ? "; " : "", placed ? exchange::format_job_note(rec.placed).c_str() : "");
}

// The class a job ran on, per node: what it asked for, else what select/topo
// placed it as (a tier).
std::map<std::string, std::string> node_classes(const JobRecord &rec)
{
	std::string cls = rec.gpu_class;
	if ((cls.empty() || cls == "gpu") && !rec.placed.gpu_class.empty())
		cls = rec.placed.gpu_class;
	std::map<std::string, std::string> classes;
	for (const auto &n : rec.end.nodes)
		classes[n] = cls;
	return classes;
}

} // namespace

JobOutcome handle_job(JobRecord rec, const JobcompOptions &opt, SlurmOps &slurm, DrainLimiter &limiter,
		      exchange::FailureStats &stats, int64_t now)
{
	JobOutcome out;
	JobEnd &e = rec.end;
	bool failed = !(e.state == "COMPLETED" && e.exit_code == 0 && e.signal == 0);
	JobLogScan scan;
	JobNodes nodes;
	if (failed && !e.nodes.empty()) {
		nodes = node_states(e, slurm);
		scan_outputs(rec, opt, scan);
	}
	classify_and_decide(rec, opt, scan, out);
	if (opt.drain)
		drain_culprits(e, opt, slurm, limiter, nodes, now, out);
	bool on_spares = requeue_job(rec, opt, slurm, out);
	if (rec.already_requeued && e.checkpointed && opt.spares && nodes.known && !on_spares &&
	    !is_infrastructure(out.cls.cls))
		migrate_off_suspects(rec, opt, slurm, nodes, out);
	// A requeue record (PENDING) that was no move: its failure was logged when it ended.
	if (failed && !out.migrated && e.state != "PENDING")
		log_failure(rec, out);
	record_job(stats, e, out.cls, node_classes(rec), now);
	return out;
}

} // namespace loom::health
