#include "lib/ckpt/coordinator.hpp"

#include "lib/util/log.hpp"

#include <algorithm>
#include <chrono>
#include <exception>

namespace loom::ckpt {

const char *ask_name(Ask a)
{
	switch (a) {
	case Ask::none:
		return "none";
	case Ask::interval:
		return "interval";
	case Ask::time_limit:
		return "time limit";
	case Ask::suspect:
		return "node suspect";
	}
	return "?";
}

MigrationCost migration_cost(double age_s, double eta_left_s, double remaining_s, double interval_s, double restart_s)
{
	MigrationCost c;
	c.move = age_s + restart_s;
	double until = eta_left_s > 0 ? eta_left_s : interval_s / 2;
	if (remaining_s > 0 && eta_left_s > 0 && remaining_s <= eta_left_s)
		c.stay = 0; // it ends first
	else
		c.stay = std::min(age_s + until, std::max(interval_s, age_s)) + restart_s;
	return c;
}

Decision CoordinatorLogic::next(const Observation &o)
{
	Decision d;
	double cost = o.newest_write_s > 0 ? o.newest_write_s : plan_.cost_default_s;
	interval_ = plan_.interval_auto ? auto_interval(cost, plan_.mtbf_s, plan_.bounds) : plan_.interval_s;
	if (requeue_before_time_limit(o, d) || requeued_)
		return d;
	if (move_off_suspect(o, cost, d) || ask_for_suspect(o, d) || ask_before_time_limit(o, d))
		return d;
	ask_at_interval(o, d);
	return d;
}

// A checkpoint committed after the time-limit request: requeue now,
// rather than let the job run into its limit and end as TIMEOUT.
bool CoordinatorLogic::requeue_before_time_limit(const Observation &o, Decision &d)
{
	if (!(tl_signalled_ && !requeued_ && plan_.requeue_on_time_limit && plan_.may_requeue &&
	      o.newest_step > tl_step_ && o.newest_created >= tl_signal_time_ - 1))
		return false;
	requeued_ = true;
	d.requeue = true;
	d.why = strprintf("checkpoint step %lld committed before the time limit",
			  static_cast<long long>(o.newest_step));
	return true;
}

// The checkpoint a suspect mark asked for is committed: move off the node?
bool CoordinatorLogic::move_off_suspect(const Observation &o, double cost, Decision &d)
{
	if (!(susp_pending_ && o.newest_step > susp_step_ && o.newest_created >= susp_asked_ - 1))
		return false;
	susp_pending_ = false;
	double age = std::max(0.0, o.now - o.newest_created);
	double eta_left = susp_eta_ > 0 ? std::max(1.0, susp_eta_ - (o.now - susp_mtime_)) : 0;
	double remaining = o.end_time > 0 ? o.end_time - o.now : 0;
	MigrationCost c = migration_cost(age, eta_left, remaining, static_cast<double>(interval_), cost);
	std::string pred = eta_left > 0 ? strprintf("failure predicted in %.0f s", eta_left)
					: std::string("no failure time predicted");
	if (!plan_.migrate) {
		d.note = "not moving off the suspect node: migrate=no";
	} else if (!plan_.may_requeue) {
		d.note = "not moving off the suspect node: the restart budget is spent";
	} else if (o.last_migration > 0 && o.now - o.last_migration < static_cast<double>(plan_.migrate_window_s)) {
		d.note = strprintf("not moving off the suspect node: the job moved %.0f s ago (migrate_window %lld s)",
				   o.now - o.last_migration, static_cast<long long>(plan_.migrate_window_s));
	} else if (!c.worth()) {
		d.note = strprintf(
			"not moving off the suspect node (%s, %s): moving loses %.0f s of work, staying %.0f s",
			pred.c_str(), remaining > 0 ? strprintf("%.0f s left", remaining).c_str() : "no time limit",
			c.move, c.stay);
	} else {
		requeued_ = true;
		d.requeue = d.migrate = true;
		d.why = strprintf("checkpoint step %lld committed after the node turned suspect (%s): moving off it "
				  "loses %.0f s of work, staying %.0f s",
				  static_cast<long long>(o.newest_step), pred.c_str(), c.move, c.stay);
	}
	return true;
}

// A new suspect mark: ask for a checkpoint (the move waits for it).
bool CoordinatorLogic::ask_for_suspect(const Observation &o, Decision &d)
{
	if (suspect_seen_ < 0)
		suspect_seen_ = o.suspect_mtime > 0 && o.suspect_mtime < start_ ? o.suspect_mtime : 0;
	if (!(o.suspect_mtime > 0 && o.suspect_mtime != suspect_seen_))
		return false;
	suspect_seen_ = o.suspect_mtime;
	last_signal_ = o.now;
	// Never for a mark older than the job's newest checkpoint: that
	// checkpoint already holds what the mark asked for.
	susp_pending_ = o.suspect_mtime >= o.newest_created;
	susp_step_ = o.newest_step;
	susp_asked_ = o.now;
	susp_mtime_ = o.suspect_mtime;
	susp_eta_ = o.suspect_eta_s;
	d.signal = Ask::suspect;
	d.why = "the node was flagged suspect";
	return true;
}

// The time limit is within the margin: ask, and ask again every reask_s
// until a checkpoint commits after the first ask.
bool CoordinatorLogic::ask_before_time_limit(const Observation &o, Decision &d)
{
	if (o.end_time > 0 && !tl_signalled_) {
		int64_t margin = time_limit_margin(o.newest_write_s, plan_.margin_min_s);
		if (o.now >= o.end_time - static_cast<double>(margin)) {
			tl_signalled_ = true;
			tl_signal_time_ = o.now;
			tl_step_ = o.newest_step;
			last_signal_ = o.now;
			d.signal = Ask::time_limit;
			d.why = strprintf("%lld s before the time limit (margin %lld s)",
					  static_cast<long long>(o.end_time - o.now), static_cast<long long>(margin));
			tl_last_ask_ = o.now;
			return true;
		}
	}
	bool tl_answered = o.newest_step > tl_step_ && o.newest_created >= tl_signal_time_ - 1;
	if (tl_signalled_ && !tl_answered && o.now < o.end_time &&
	    o.now >= tl_last_ask_ + static_cast<double>(plan_.reask_s)) {
		tl_last_ask_ = last_signal_ = o.now;
		d.signal = Ask::time_limit;
		d.why = strprintf(
			"%lld s before the time limit, nothing committed %.0f s after the first ask: asking again",
			static_cast<long long>(o.end_time - o.now), o.now - tl_signal_time_);
		return true;
	}
	return false;
}

void CoordinatorLogic::ask_at_interval(const Observation &o, Decision &d)
{
	double base = std::max({start_, o.newest_created, last_signal_});
	if (o.now >= base + static_cast<double>(interval_)) {
		last_signal_ = o.now;
		d.signal = Ask::interval;
		d.why = strprintf("interval %lld s is due", static_cast<long long>(interval_));
	}
}

void Coordinator::start(CoordinatorPlan plan, CoordinatorHooks hooks, double start_time, int poll_s)
{
	stop();
	hooks_ = std::move(hooks);
	stop_ = false;
	thread_ = std::thread([this, plan, start_time, poll_s] { run(plan, start_time, poll_s); });
}

void Coordinator::stop()
{
	{
		std::lock_guard<std::mutex> lock(mu_);
		stop_ = true;
	}
	cv_.notify_all();
	if (thread_.joinable())
		thread_.join();
}

void Coordinator::run(CoordinatorPlan plan, double start_time, int poll_s)
{
	CoordinatorLogic logic(plan, start_time);
	std::unique_lock<std::mutex> lock(mu_);
	while (!stop_) {
		lock.unlock();
		try {
			Observation o = hooks_.observe();
			Decision d = logic.next(o);
			if (d.signal != Ask::none)
				hooks_.signal(d.signal, d.why);
			if (d.requeue)
				hooks_.requeue(d.why, d.migrate);
			if (!d.note.empty())
				log_info("checkpoint coordinator: %s", d.note.c_str());
		} catch (const std::exception &e) {
			log_error("checkpoint coordinator: %s", e.what());
		} catch (...) {
			log_error("checkpoint coordinator: unexpected failure");
		}
		lock.lock();
		cv_.wait_for(lock, std::chrono::seconds(poll_s), [this] { return stop_; });
	}
}

} // namespace loom::ckpt
