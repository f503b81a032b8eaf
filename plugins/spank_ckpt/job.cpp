#include "plugins/spank_ckpt/job.hpp"

#include "lib/ckpt/job_note.hpp"
#include "lib/ckpt/policy.hpp"
#include "lib/ckpt/request.hpp"
#include "lib/exchange/ckpt_task_env.hpp"
#include "lib/exchange/failure_stats.hpp"
#include "lib/exchange/suspect_flag.hpp"
#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/json.hpp"
#include "lib/util/log.hpp"
#include "plugins/spank_ckpt/signal_tasks.hpp"
#include "plugins/spank_ckpt/slurm_api.hpp"

#include <chrono>
#include <json-c/json.h>
#include <sys/stat.h>

namespace loom::spank_ckpt {
namespace {

double now_unix() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

struct Newest {
	int64_t step = -1;
	double created = 0, write_s = 0;
	int64_t bytes = 0;
	std::string path;
};

// The helper that works in the user's directory as the user (run_helper):
// the site's helper= argument, else where the build installed it.
std::string helper_path(const ckpt::SiteConfig &site)
{
	return site.helper.empty() ? std::string(LOOM_CKPT_HELPER) : site.helper;
}

expected<Newest> parse_newest(const std::string &text)
{
	auto doc = json_parse(text, "checkpoint helper");
	if (!doc)
		return unexpected(doc.error());
	ObjectReader r(doc->get(), "$");
	Newest n;
	auto step = r.integer_or("step", -1);
	auto path = r.str_or("path", "");
	auto created = r.number_or("created", 0);
	auto write_s = r.number_or("write_s", 0);
	auto bytes = r.integer_or("bytes", 0);
	if (!step || !path || !created || !write_s || !bytes)
		return unexpected("checkpoint helper", "unreadable answer");
	n.step = *step, n.path = *path, n.created = *created, n.write_s = *write_s, n.bytes = *bytes;
	return n;
}

double compute_mtbf(const ckpt::SiteConfig &site, const JobFacts &facts)
{
	std::vector<std::string> nodes;
	if (auto h = hostlist_expand(facts.nodelist); h)
		nodes = *h;
	else
		log_warning("job node list unreadable, the interval counts one node: %s", h.error().str().c_str());
	exchange::FailureStats stats;
	if (!site.failure_stats.empty()) {
		auto text = read_file(site.failure_stats, 64u << 20);
		auto parsed = text ? exchange::parse_failure_stats(*text, site.failure_stats)
				   : expected<exchange::FailureStats>(unexpected(text.error()));
		if (parsed)
			stats = *parsed;
		else
			log_warning("failure statistics unusable, using node_mtbf=%llds: %s",
				    static_cast<long long>(site.node_mtbf_s), parsed.error().str().c_str());
	}
	return exchange::job_mtbf(stats, nodes, static_cast<double>(site.node_mtbf_s));
}

// The job's checkpoint note (lib/ckpt/job_note.hpp) in its AdminComment:
// the first observation, then each new step, at most one update per
// min_gap_s (a job that commits every few seconds costs slurmctld one RPC
// per 10 s), the newest step always reaching it.
struct NotePoster {
	static constexpr double min_gap_s = 10;
	int64_t posted_step = -2; // -2: nothing posted yet
	double posted_at = -1e18;
	bool warned = false;

	void post(uint32_t job_id, const ckpt::JobNote &n, double now)
	{
		if (n.step == posted_step || now - posted_at < min_gap_s)
			return;
		posted_at = now;
		auto text = ckpt::format_job_note(n);
		std::string err;
		if (text && note_job(job_id, *text, &err)) {
			posted_step = n.step;
			return;
		}
		if (!warned)
			log_warning("job %u: cannot note its checkpoints in its AdminComment: %s", job_id,
				    text ? err.c_str() : text.error().str().c_str());
		warned = true;
		if (!text)
			posted_step = n.step; // the directory cannot be named: do not try again for this step
	}
};

} // namespace

expected<JobSetup> prepare_job(const ckpt::SiteConfig &site, const ckpt::JobOptions &opts, const JobFacts &facts)
{
	JobSetup s;
	ckpt::PatternVars vars{facts.user, std::to_string(facts.cred.uid), std::to_string(facts.job_id), facts.node};
	auto dir = ckpt::expand_pattern(opts.dir, vars);
	if (!dir)
		return unexpected(dir.error().within("--ckpt-dir"));
	if (auto st = ckpt::check_clean_path(*dir); !st)
		return unexpected(*dir, st.error().message);
	auto root = ckpt::root_for(*dir, site.roots);
	if (!root)
		return unexpected(*dir, root.error().message);
	s.dir = *dir;

	// Everything in the user's directory happens with the user's identity,
	// in loom-ckpt-helper: nothing but an exec runs in the forked child.
	bool batch = facts.batch_step;
	std::vector<std::string> op = {batch ? "start" : "prepare", *root, *dir};
	if (batch)
		op.insert(op.end(), {std::to_string(facts.restart_count), std::to_string(opts.max_restarts),
				     std::to_string(facts.job_id)});
	auto answer = ckpt::run_helper(helper_path(site), facts.cred, op);
	if (!answer)
		return unexpected(answer.error());
	std::string newest_text = *answer;
	if (batch) {
		auto doc = json_parse(*answer, "checkpoint helper");
		if (!doc)
			return unexpected(doc.error());
		ObjectReader r(doc->get(), "$");
		auto nt = r.str("newest");
		auto verdict = r.integer("verdict", 0, 2);
		auto reason = r.str("reason");
		if (!nt || !verdict || !reason)
			return unexpected("checkpoint helper", "unreadable answer");
		newest_text = *nt;
		s.decision.verdict = static_cast<ckpt::StartVerdict>(*verdict);
		s.decision.reason = *reason;
		auto count = r.integer_or("foreign_count", 0);
		s.foreign_count = count ? *count : 0;
		if (json_object *a = nullptr;
		    json_object_object_get_ex(doc->get(), "foreign", &a) && json_object_is_type(a, json_type_array))
			for (size_t i = 0; i < json_object_array_length(a); i++)
				if (const char *name = json_object_get_string(json_object_array_get_idx(a, i)))
					s.foreign.emplace_back(name);
	}
	auto n = parse_newest(newest_text);
	if (!n)
		return unexpected(n.error());
	s.latest = n->path;
	s.newest_step = n->step;
	s.newest_write_s = n->write_s;
	s.mtbf_s = compute_mtbf(site, facts);
	double cost = n->write_s > 0 ? n->write_s : static_cast<double>(site.ckpt_cost_s);
	s.interval_s = opts.interval_auto ? ckpt::auto_interval(cost, s.mtbf_s, site.bounds) : opts.interval_s;
	exchange::TaskEnv task{s.dir, s.latest, 0, s.interval_s, static_cast<int>(opts.keep), facts.restart_count};
	for (auto &[k, v] : exchange::task_env_vars(task, opts.signal_name))
		s.env[k] = v;
	return s;
}

std::string foreign_notice(const JobSetup &s)
{
	if (s.foreign_count <= 0 || s.newest_step >= 0)
		return "";
	std::string names;
	for (const auto &n : s.foreign)
		names += (names.empty() ? "" : ", ") + n;
	if (s.foreign_count > static_cast<int64_t>(s.foreign.size()))
		names += strprintf(" and %lld more", static_cast<long long>(s.foreign_count - s.foreign.size()));
	return s.dir + " holds " + names + ", not written through loom's SDK and no loom checkpoint: " +
	       "loom does not see them, so its requeue before the time limit and after a fault has nothing " +
	       "to resume from. Save through loom_ckpt (Lightning: loom_ckpt.lightning.LoomCheckpoint, " +
	       "Hugging Face: loom_ckpt.hf.LoomCallback), or point the framework's own checkpoints elsewhere.";
}

AskOutcome ask_checkpoint(const std::string &helper, const ckpt::Credentials &cred, const std::string &dir,
			  ckpt::Ask ask, pid_t batch_pid, int sig)
{
	AskOutcome o;
	// The file first: a program woken by the signal finds the request there.
	auto answer = ckpt::run_helper(helper, cred, {"request", dir, ckpt::request_reason(ask)}, 60);
	auto seq = answer ? parse_int(trim(*answer), 1, INT64_MAX) : expected<int64_t>(unexpected(answer.error()));
	if (seq)
		o.seq = *seq;
	else
		o.request_error =
			answer ? "checkpoint helper: unreadable answer '" + shown(*answer) + "'" : seq.error().str();
	o.signalled = signal_catchers(batch_pid, sig);
	return o;
}

std::vector<LogLine> ask_log(uint32_t job_id, ckpt::Ask ask, const std::string &why, int sig, const std::string &dir,
			     const AskOutcome &o)
{
	std::string job = "job " + std::to_string(job_id) + ": ";
	std::string asked = std::string(ckpt::ask_name(ask)) + ": " + why;
	std::string name = "SIG" + exchange::signal_name(sig);
	std::string srun = o.signalled.srun_skipped == 0
				   ? ""
				   : "; srun not signalled (" + std::to_string(o.signalled.srun_skipped) +
					     ": it would forward " + name +
					     " to every task of its step, its ranks read the request file)";
	std::vector<LogLine> lines;
	if (o.seq == 0)
		lines.push_back({true, job + "cannot write the checkpoint request (" + asked + ") to " +
					       path_join(dir, ckpt::request_name) + ": " + o.request_error});
	const int n = o.signalled.sent;
	if (o.seq > 0)
		lines.push_back({false, job + "asked for a checkpoint (" + asked + "): request " +
						std::to_string(o.seq) + " in " + path_join(dir, ckpt::request_name) +
						", " + name + " to " + std::to_string(n) + " process(es)" + srun});
	else if (n > 0)
		lines.push_back({false, job + "asked for a checkpoint (" + asked + "): " + name + " to " +
						std::to_string(n) + " process(es)" + srun});
	else
		lines.push_back({true, job + "wanted a checkpoint (" + asked + ") but no process of the batch step " +
					       "handles " + name + srun});
	return lines;
}

namespace {

// The coordinator's plan for this job: the site's and the job's options, its
// restart budget, and no move off a suspect node for a job that names its
// nodes.
ckpt::CoordinatorPlan coordinator_plan(const ckpt::SiteConfig &site, const ckpt::JobOptions &opts,
				       const JobFacts &facts, const JobSetup &setup)
{
	ckpt::CoordinatorPlan plan;
	plan.interval_auto = opts.interval_auto;
	plan.interval_s = opts.interval_s;
	plan.bounds = site.bounds;
	plan.mtbf_s = setup.mtbf_s;
	plan.cost_default_s = static_cast<double>(site.ckpt_cost_s);
	plan.margin_min_s = site.margin_min_s;
	plan.requeue_on_time_limit = site.requeue_on_time_limit;
	plan.may_requeue = facts.restart_count < opts.max_restarts;
	plan.migrate = site.migrate;
	if (plan.migrate) {
		std::string err;
		if (job_names_nodes(facts.job_id, &err)) {
			plan.migrate = false; // -w: its nodes are its own; a suspect mark only asks for a checkpoint
			log_info("job %u names its nodes (-w): it checkpoints when a node turns suspect, never moves",
				 facts.job_id);
		}
	}
	plan.migrate_window_s = site.migrate_window_s;
	return plan;
}

// The coordinator's observe hook: the job's end time (asked of Slurm at most
// every 30 s), its newest checkpoint (through the helper, noted in its
// AdminComment), the node's suspect flag. Copies share what they remember.
struct Observer {
	uint32_t job_id;
	ckpt::Credentials cred;
	std::string dir, helper, suspect;
	struct EndTime {
		double value = 0, fetched = -1e18;
		bool warned = false;
	};
	struct Flag {
		double mtime = 0, eta_s = 0, last_migration = 0;
	};
	std::shared_ptr<EndTime> end = std::make_shared<EndTime>();
	std::shared_ptr<Flag> flag = std::make_shared<Flag>();
	std::shared_ptr<NotePoster> note = std::make_shared<NotePoster>();

	ckpt::Observation operator()() const
	{
		ckpt::Observation o;
		o.now = now_unix();
		end_time(o);
		newest(o);
		suspect_flag(o);
		return o;
	}

	void end_time(ckpt::Observation &o) const
	{
		if (o.now - end->fetched >= 30) {
			std::string err;
			time_t t = job_end_time(job_id, &err);
			end->fetched = o.now;
			end->value = static_cast<double>(t);
			if (!err.empty() && !end->warned) {
				end->warned = true;
				log_warning("job %u: time limit unknown (%s): no checkpoint before it", job_id,
					    err.c_str());
			}
		}
		o.end_time = end->value;
	}

	void newest(ckpt::Observation &o) const
	{
		auto answer = ckpt::run_helper(helper, cred, {"newest", dir}, 60);
		if (answer) {
			if (auto n = parse_newest(*answer); n) {
				o.newest_step = n->step;
				o.newest_created = n->created;
				o.newest_write_s = n->write_s;
				note->post(job_id, {dir, n->step, static_cast<uint64_t>(n->bytes), n->created}, o.now);
			}
		} else {
			log_warning("job %u: cannot read %s: %s", job_id, dir.c_str(), answer.error().str().c_str());
		}
	}

	void suspect_flag(ckpt::Observation &o) const
	{
		struct stat st;
		if (suspect.empty() || ::stat(suspect.c_str(), &st) != 0)
			return;
		double mtime = static_cast<double>(st.st_mtim.tv_sec) + st.st_mtim.tv_nsec * 1e-9;
		o.suspect_mtime = mtime;
		// The prediction and when the job last moved, read once per new flag.
		if (mtime != flag->mtime) {
			flag->mtime = mtime;
			auto text = read_file(suspect, 4096);
			flag->eta_s = text ? exchange::parse_suspect_flag(*text).eta_s : 0;
			auto m = ckpt::run_helper(helper, cred, {"migrated", dir}, 60);
			auto t = m ? parse_int(trim(*m), 0, INT64_MAX) : expected<int64_t>(unexpected("no answer"));
			flag->last_migration = t ? static_cast<double>(*t) : 0;
		}
		o.suspect_eta_s = flag->eta_s;
		o.last_migration = flag->last_migration;
	}
};

} // namespace

void JobCoordinator::start(const ckpt::SiteConfig &site, const ckpt::JobOptions &opts, const JobFacts &facts,
			   const JobSetup &setup, pid_t batch_pid)
{
	stop();
	ckpt::CoordinatorPlan plan = coordinator_plan(site, opts, facts, setup);
	std::string suspect;
	if (!site.suspect_flag.empty())
		if (auto p = ckpt::expand_pattern(site.suspect_flag, {facts.user, "", "", facts.node}); p)
			suspect = *p;
	uint32_t job_id = facts.job_id;
	ckpt::Credentials cred = facts.cred;
	std::string dir = setup.dir;
	std::string helper = helper_path(site);
	int sig = opts.signal;

	ckpt::CoordinatorHooks h;
	h.observe = Observer{job_id, cred, dir, helper, suspect};
	h.signal = [=](ckpt::Ask ask, const std::string &why) {
		auto outcome = ask_checkpoint(helper, cred, dir, ask, batch_pid, sig);
		for (const auto &line : ask_log(job_id, ask, why, sig, dir, outcome))
			line.warning ? log_warning("%s", line.text.c_str()) : log_info("%s", line.text.c_str());
	};
	h.requeue = [=](const std::string &why, bool migrate) {
		std::string err;
		if (migrate)
			if (auto m = ckpt::run_helper(
				    helper, cred, {"migrated", dir, std::to_string(static_cast<int64_t>(now_unix()))},
				    60);
			    !m)
				log_warning("job %u: cannot record the move in %s: %s", job_id, dir.c_str(),
					    m.error().str().c_str());
		if (requeue_job(job_id, &err))
			log_info("job %u: requeued: %s", job_id, why.c_str());
		else
			log_error("job %u: requeue after %s failed: %s", job_id, why.c_str(), err.c_str());
	};
	coordinator_ = std::make_unique<ckpt::Coordinator>();
	coordinator_->start(plan, h, now_unix(), static_cast<int>(site.poll_s));
}

void JobCoordinator::stop()
{
	if (coordinator_) {
		coordinator_->stop();
		coordinator_.reset();
	}
}

} // namespace loom::spank_ckpt
