#include "lib/health/jobcomp_worker.hpp"

#include "lib/health/job_log.hpp"
#include "lib/health/spares.hpp"
#include "lib/util/admin_comment.hpp"
#include "lib/util/subprocess.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/log.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sys/stat.h>
#include <ctime>
#include <unistd.h>
#include <ctime>
#include <algorithm>
#include <pwd.h>
#include <set>

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
	const JobEnd &e = rec.end;
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
			until_unknown = " (busy spares not waited for, their jobs' end unknown: " + u.error().str() + ")";
	}
	Replacement plan = plan_replacement(*pool, e.nodes, culprits, states, until, static_cast<int64_t>(::time(nullptr)));
	if (!plan.ok) {
		out.no_spares = plan.why + until_unknown;
		return false;
	}
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
	std::string note = std::string(migration ? "loom: moved off suspect node(s) to spares " : "loom: restarted on spares ") +
			   plan.summary() + " in reservation " + name;
	auto up = slurm.update_job(e.job_id, {"ReservationName=" + name,
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

} // namespace

JobOutcome handle_job(JobRecord rec, const JobcompOptions &opt, SlurmOps &slurm, DrainLimiter &limiter,
		      exchange::FailureStats &stats, int64_t now)
{
	JobOutcome out;
	JobEnd &e = rec.end;
	// One budget per job: the one a --ckpt job carries, else the site's.
	int64_t budget = e.checkpointed && rec.ckpt_max_restarts >= 0 ? rec.ckpt_max_restarts : opt.restart_budget;
	bool failed = !(e.state == "COMPLETED" && e.exit_code == 0 && e.signal == 0);
	JobLogScan scan;
	std::map<std::string, SlurmNode> nodes;
	bool nodes_known = false;
	if (failed && !e.nodes.empty()) {
		if (auto st = slurm.show_nodes(e.nodes)) {
			nodes = std::move(*st);
			nodes_known = true;
			for (const auto &[n, s] : nodes) {
				e.node_state[n] = s.state;
				if (!s.reason.empty())
					e.node_reason[n] = s.reason;
			}
		} else {
			log_warning("job %u: node states unknown: %s", e.job_id, st.error().str().c_str());
		}
		scan_outputs(rec, opt, scan);
	}
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
	if (opt.drain)
		for (const auto &n : out.decision.drain) {
			// The ownership rules of slurm_ops.hpp: a node whose state is
			// unknown is not drained on a guess (a drain would overwrite an
			// admin's reason); one already drained (the health check, an
			// admin), rebooting, or down with someone else's reason is left
			// as it is.
			auto it = nodes.find(n);
			if (!nodes_known || it == nodes.end()) {
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
	// Proactive migration: a --ckpt job that spank_ckpt requeued off a node
	// marked suspect, after the checkpoint the mark asked for. It resumes on
	// the pool's spares when there are some; either way the suspect node is
	// excluded for it (ExcNodeList), so that it does not go back there.
	if (rec.already_requeued && e.checkpointed && opt.spares && nodes_known && !on_spares &&
	    !is_infrastructure(out.cls.cls)) {
		std::vector<std::string> suspects;
		bool culprit_drained = false; // loom's own requeue of a failure, not a move
		for (const auto &n : e.nodes)
			if (auto it = nodes.find(n); it != nodes.end()) {
				culprit_drained |= it->second.drained_by_loom();
				if (!it->second.suspect_mark().empty())
					suspects.push_back(n);
			}
		if (!suspects.empty() && !culprit_drained && rec.pinned) {
			log_info("job %u: loom: moved off suspect node(s) but it names its nodes (-w): no spare, no exclusion",
				 e.job_id);
		} else if (!suspects.empty() && !culprit_drained) {
			out.migrated = true;
			if (!requeue_on_spares(rec, opt, slurm, out, suspects, true)) {
				std::string why = out.no_spares.empty() ? "no spare pool" : out.no_spares;
				std::string ex = join(suspects, ",");
				std::string note = "loom: moved off suspect node(s) " + ex + " (no spares: " + why + ")";
				auto up = slurm.update_job(
					e.job_id, {"ExcNodeList=" + ex, "AdminComment=" + admin_comment_replace(
										rec.admin_comment, admin_prefix_health, note)});
				log_info("job %u: loom: moved off suspect node(s) %s without spares (%s)%s", e.job_id, ex.c_str(),
					 why.c_str(), up ? "" : (": excluding them failed: " + up.error().str()).c_str());
			}
		}
	}
	// A requeue record (PENDING) that was no move: its failure was logged when it ended.
	if (failed && !out.migrated && e.state != "PENDING")
		log_info("job %u %s%s: %s: %s; drained [%zu] capped [%zu]; %s%s%s%s", e.job_id, e.state.c_str(),
			 e.checkpointed ? " (--ckpt)" : "", failure_class_name(out.cls.cls), out.cls.evidence.c_str(),
			 out.drained.size(), out.capped.size(), out.requeued ? "requeued: " : "", out.decision.why.c_str(),
			 rec.placed.gpu_class.empty() && rec.placed.price_per_h < 0 ? "" : "; ",
			 rec.placed.gpu_class.empty() && rec.placed.price_per_h < 0 ? "" : exchange::format_job_note(rec.placed).c_str());
	// The class a job ran on: what it asked for, else what select/topo placed it as (a tier).
	std::string cls = rec.gpu_class;
	if ((cls.empty() || cls == "gpu") && !rec.placed.gpu_class.empty())
		cls = rec.placed.gpu_class;
	std::map<std::string, std::string> classes;
	for (const auto &n : e.nodes)
		classes[n] = cls;
	record_job(stats, e, out.cls, classes, now);
	return out;
}

JobcompWorker::JobcompWorker(JobcompOptions opt, std::unique_ptr<SlurmOps> slurm)
	: opt_(std::move(opt)), slurm_(std::move(slurm)),
	  limiter_(opt_.max_drains, opt_.drain_window)
{
}

JobcompWorker::~JobcompWorker()
{
	if (stop())
		return;
	// Destroyed all the same: the thread uses these members, so wait for it.
	std::unique_lock<std::mutex> lk(mu_);
	idle_cv_.wait(lk, [this] { return exited_; });
}

namespace {
std::string backlog_file(const std::string &state_dir) { return path_join(state_dir, "loom-jobcomp-backlog.json"); }
std::string stats_file(const std::string &state_dir) { return path_join(state_dir, "loom-failure-stats.json"); }
} // namespace

std::string JobcompWorker::backlog_path() const { return backlog_file(opt_.state_dir); }
std::string JobcompWorker::stats_path() const { return stats_file(opt_.state_dir); }

status JobcompWorker::preflight(const JobcompOptions &opt)
{
	if (auto st = make_dirs(opt.state_dir, 0700); !st)
		return unexpected(st.error());
	if (auto b = load_backlog(backlog_file(opt.state_dir)); !b)
		return unexpected(b.error());
	if (auto s = exchange::load_failure_stats(stats_file(opt.state_dir)); !s)
		return unexpected(s.error());
	return ok();
}

status JobcompWorker::start()
{
	// The state directory may not exist yet (a JobCompLoc of its own).
	if (auto st = make_dirs(opt_.state_dir, 0700); !st)
		return unexpected(st.error());
	auto b = load_backlog(backlog_path());
	if (!b)
		return unexpected(b.error());
	auto s = exchange::load_failure_stats(stats_path());
	if (!s)
		return unexpected(s.error());
	{
		std::lock_guard<std::mutex> g(mu_);
		for (auto &r : b->pending)
			queue_.push_back(std::move(r));
		limiter_.restore(b->drains);
		stats_ = std::move(*s);
		stopping_ = false;
		exited_ = false;
	}
	cancel_.store(false);
	slurm_->set_cancel(&cancel_);
	if (!b->pending.empty())
		log_info("resuming %zu jobs from %s", b->pending.size(), backlog_path().c_str());
	thread_ = std::thread([this] { run(); });
	return ok();
}

void JobcompWorker::enqueue(JobRecord r) noexcept
{
	try {
		std::lock_guard<std::mutex> g(mu_);
		if (static_cast<int64_t>(queue_.size()) >= opt_.max_backlog) {
			queue_.pop_front(); // the worker logs the loss when it next saves
			dirty_ = true;
		}
		queue_.push_back(std::move(r));
		dirty_ = true;
		cv_.notify_one();
	} catch (...) {
		// Out of memory in slurmctld's callback: drop the record rather than throw.
	}
}

void JobcompWorker::save_backlog_locked_copy()
{
	if (abandoned_.load())
		return; // left behind by stop(): the next worker owns the files
	Backlog b;
	{
		std::lock_guard<std::mutex> g(mu_);
		b.pending.assign(queue_.begin(), queue_.end());
		b.drains = limiter_.times();
		dirty_ = false;
	}
	if (auto st = write_file_atomic(backlog_path(), backlog_json(b), 0600); !st)
		log_error("backlog: %s", st.error().str().c_str());
}

void JobcompWorker::run()
{
	for (;;) {
		JobRecord rec;
		{
			std::unique_lock<std::mutex> lk(mu_);
			cv_.wait(lk, [this] { return stopping_ || !queue_.empty(); });
			if (stopping_)
				break;
			rec = queue_.front();
			busy_ = true;
		}
		try {
			save_backlog_locked_copy(); // the job in hand is still in it
			int64_t now = static_cast<int64_t>(std::time(nullptr));
			uint64_t cut = slurm_->cancelled_calls();
			handle_job(rec, opt_, *slurm_, limiter_, stats_, now);
			if (slurm_->cancelled_calls() != cut) {
				// A stop cut this job's scontrol calls short: it stays first in
				// the backlog and is handled again at the next start; its
				// statistics are not saved.
				log_info("job %u: interrupted by a stop, kept in the backlog", rec.end.job_id);
				std::lock_guard<std::mutex> g(mu_);
				busy_ = false;
				break;
			}
			if (abandoned_.load())
				break;
			if (auto st = exchange::save_failure_stats(stats_path(), stats_); !st)
				log_error("failure statistics: %s", st.error().str().c_str());
			if (!opt_.stats_publish.empty())
				if (auto st = exchange::save_failure_stats(opt_.stats_publish, stats_); !st)
					log_error("failure statistics (stats_publish): %s", st.error().str().c_str());
		} catch (const std::exception &e) {
			log_error("job %u: %s", rec.end.job_id, e.what());
		} catch (...) {
			log_error("job %u: unknown error", rec.end.job_id);
		}
		{
			std::lock_guard<std::mutex> g(mu_);
			if (!queue_.empty() && queue_.front().end.job_id == rec.end.job_id)
				queue_.pop_front();
			busy_ = false;
			dirty_ = true;
		}
		save_backlog_locked_copy();
		idle_cv_.notify_all();
	}
	save_backlog_locked_copy();
	std::lock_guard<std::mutex> g(mu_);
	exited_ = true;
	idle_cv_.notify_all();
}

bool JobcompWorker::stop(int wait_ms)
{
	std::unique_lock<std::mutex> lk(mu_);
	stopping_ = true;
	cancel_.store(true, std::memory_order_release);
	cv_.notify_all();
	if (!thread_.joinable()) // never started, or left behind by an earlier stop
		return !abandoned_.load() || exited_;
	if (!idle_cv_.wait_for(lk, std::chrono::milliseconds(wait_ms), [this] { return exited_; })) {
		abandoned_.store(true);
		uint32_t job = !queue_.empty() ? queue_.front().end.job_id : 0;
		lk.unlock();
		log_error("worker did not stop within %d ms (job %u: a read of its output blocked?): left behind; "
			  "it writes nothing more, the job stays in the backlog",
			  wait_ms, job);
		thread_.detach();
		return false;
	}
	lk.unlock();
	thread_.join();
	return true;
}

size_t JobcompWorker::pending() const
{
	std::lock_guard<std::mutex> g(mu_);
	return queue_.size() + (busy_ ? 0 : 0);
}

bool JobcompWorker::wait_idle(int timeout_ms) const
{
	std::unique_lock<std::mutex> lk(mu_);
	return idle_cv_.wait_for(lk, std::chrono::milliseconds(timeout_ms), [this] { return queue_.empty() && !busy_; });
}

} // namespace loom::health
