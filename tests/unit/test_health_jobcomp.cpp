// Unit tests for jobcomp/health's worker without Slurm: a fake Slurm records
// drains and requeues. Job logs from tests/health/joblogs.
#include "lib/ckpt/options.hpp"
#include "lib/exchange/ckpt_job_env.hpp"
#include "lib/exchange/failure_stats.hpp"
#include "lib/health/jobcomp.hpp"
#include "lib/health/jobcomp_worker.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"

#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/check_main.hpp"

using namespace loom;
using namespace loom::health;
using namespace loom::exchange;

namespace {

// A node as scontrol prints it (through the one parser).
SlurmNode slurm_node(const std::string &name, const std::string &state, const std::string &reason = "")
{
	std::string text = "NodeName=" + name + " Arch=x86_64\n   State=" + state + " ThreadsPerCore=1\n";
	if (!reason.empty())
		text += "   Reason=" + reason + " [slurm@2026-12-01T10:00:00]\n";
	auto n = parse_show_node(text, name);
	ck_assert(n.has_value());
	return *n;
}

// Wait for what a worker thread does: true as soon as cond() holds, false
// after timeout_ms; checked every 10 ms, so that a slow machine does not fail
// and a fast one does not wait.
template <typename Cond>
bool eventually(Cond cond, int timeout_ms = 10000)
{
	auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
	while (!cond()) {
		if (std::chrono::steady_clock::now() >= deadline)
			return false;
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
	}
	return true;
}

struct FakeSlurm : SlurmOps {
	std::mutex mu;
	std::map<std::string, SlurmNode> nodes;
	std::vector<std::string> drained;
	std::vector<uint32_t> requeued;
	// Calls of show_nodes begun: the worker has a job in hand.
	std::atomic<int> show_calls{0};
	// show_nodes answers only once the worker is told to stop (a Slurm that
	// is slow while slurmctld shuts down); it is not cut short by the stop.
	bool answer_after_stop = false;
	const std::atomic<bool> *cancel = nullptr;
	void set_cancel(const std::atomic<bool> *c) override { cancel = c; }
	expected<std::map<std::string, SlurmNode>> show_nodes(const std::vector<std::string> &want) override
	{
		show_calls++;
		if (answer_after_stop && cancel)
			(void)eventually([this] { return cancel->load(); });
		std::lock_guard<std::mutex> g(mu);
		std::map<std::string, SlurmNode> out;
		for (const auto &n : want)
			out[n] = nodes.count(n) ? nodes[n] : slurm_node(n, "ALLOCATED");
		return out;
	}
	status drain(const std::string &node, const std::string &reason) override
	{
		std::lock_guard<std::mutex> g(mu);
		drained.push_back(node);
		nodes[node] = slurm_node(node, "MIXED+DRAIN", reason);
		return ok();
	}
	status set_reason(const std::string &, const std::string &) override { return ok(); }
	status resume(const std::string &) override { return ok(); }
	status set_note(const std::string &, const std::string &, const std::string &) override { return ok(); }
	status hold(uint32_t) override { return ok(); }
	status requeue(uint32_t id) override
	{
		std::lock_guard<std::mutex> g(mu);
		requeued.push_back(id);
		return ok();
	}
	// The replacement's calls, in order ("create loom_spare_7_1 n[1-2,4] alice", "requeuehold 7", ...).
	std::vector<std::string> calls;
	bool refuse_reservation = false;
	status create_reservation(const Reservation &r) override
	{
		if (refuse_reservation)
			return unexpected("scontrol create reservation", "Requested nodes are busy");
		calls.push_back("create " + r.name + " " + r.nodes + " " + r.user + " " + std::to_string(r.duration_s));
		return ok();
	}
	status delete_reservation(const std::string &name) override
	{
		calls.push_back("delete " + name);
		return ok();
	}
	status requeue_hold(uint32_t id) override
	{
		calls.push_back("requeuehold " + std::to_string(id));
		return ok();
	}
	status release(uint32_t id) override
	{
		calls.push_back("release " + std::to_string(id));
		return ok();
	}
	status update_job(uint32_t id, const std::vector<std::string> &settings) override
	{
		std::string c = "update " + std::to_string(id);
		for (const auto &s : settings)
			c += " " + s;
		calls.push_back(c);
		return ok();
	}
};

std::string logs() { return test::srcdir() + "/tests/health/joblogs"; }

JobRecord job(uint32_t id, const std::string &log, std::vector<std::string> nodes, int exit_code = 1)
{
	JobRecord r;
	r.end.job_id = id;
	r.end.state = exit_code ? "FAILED" : "COMPLETED";
	r.end.exit_code = exit_code;
	r.end.nodes = std::move(nodes);
	r.end.start_time = 1000;
	r.end.end_time = 2000;
	r.user = "alice";
	r.work_dir = logs();
	r.std_out_pattern = log;
	r.gpu_class = "h100";
	return r;
}

std::string temp_dir()
{
	char tmpl[] = "/tmp/loom-jobcomp.XXXXXX";
	char *d = ::mkdtemp(tmpl);
	ck_assert(d != nullptr);
	return d;
}

void rm(const std::string &d)
{
	std::string cmd = "rm -rf '" + d + "'";
	ck_assert_int_eq(std::system(cmd.c_str()), 0);
}

// select/topo's pool file for n[1-4] (leaf1, spare n4) and n[5-8] (leaf2, spare n8).
std::string write_pool(const std::string &dir)
{
	std::string path = dir + "/loom-spares.json";
	std::string text = "{\"format\": \"loom-spares/1\", \"written\": 1764800000, \"lend_max_s\": 1800, \"domains\": ["
			   "{\"kind\": \"leaf\", \"name\": \"leaf1\", \"nodes\": \"n[1-4]\", \"want\": 1, \"spares\": \"n4\"},"
			   "{\"kind\": \"leaf\", \"name\": \"leaf2\", \"nodes\": \"n[5-8]\", \"want\": 1, \"spares\": \"n8\"}]}\n";
	ck_assert(write_file_atomic(path, text));
	return path;
}

} // namespace

START_TEST(options_fail_closed)
{
	auto o = parse_jobcomp_options("restart_budget=2 max_drains=10 drain_window=30m", "JobCompLoc");
	ck_assert(o && o->restart_budget == 2 && o->max_drains == 10 && o->drain_window == 1800);
	auto bad = parse_jobcomp_options("max_drain=10", "JobCompLoc");
	ck_assert(!bad);
	ck_assert_msg(bad.error().str().find("unknown key 'max_drain'") != std::string::npos, "%s", bad.error().str().c_str());
	ck_assert(!parse_jobcomp_options("restart_budget=-1", "JobCompLoc"));
	auto rel = parse_jobcomp_options("stats_publish=shared/stats.json", "JobCompParams");
	ck_assert(!rel);
	ck_assert_msg(rel.error().str().find("stats_publish='shared/stats.json': expected an absolute path") !=
			      std::string::npos,
		      "%s", rel.error().str().c_str());
	auto commas = parse_jobcomp_options("max_drains=7,stats_publish=/shared/s.json", "JobCompParams");
	ck_assert_msg(commas.has_value(), "%s", commas ? "" : commas.error().str().c_str());
	ck_assert_int_eq(commas->max_drains, 7);
	ck_assert_sstr_eq(commas->stats_publish.c_str(), "/shared/s.json");
}
END_TEST

START_TEST(gpu_fault_drains_culprit_and_requeues_checkpointed)
{
	FakeSlurm slurm;
	JobcompOptions opt;
	DrainLimiter lim(opt.max_drains, opt.drain_window);
	FailureStats stats;
	JobRecord r = job(101, "gpu-ecc.out", {"n1", "n2", "n3", "n4"});
	r.end.checkpointed = true; // sbatch --ckpt (LOOM_CKPT=1 in the job control environment)
	r.end.requeue_allowed = true;
	JobOutcome out = handle_job(r, opt, slurm, lim, stats, 5000);
	ck_assert(out.cls.cls == FailureClass::gpu_fault);
	ck_assert_int_eq(slurm.drained.size(), 1);
	ck_assert_sstr_eq(slurm.drained[0], "n3"); // the NCCL WARN line's host
	ck_assert(slurm.nodes["n3"].reason.rfind("loom: jobcomp: gpu_fault: job 101: ", 0) == 0);
	ck_assert_int_eq(slurm.requeued.size(), 1);
	ck_assert_int_eq(slurm.requeued[0], 101);
	ck_assert_int_eq(stats.nodes["n3"].failures, 1);
	ck_assert(stats.nodes["n1"].exposure_s == 1000);
	// The same job, not checkpointed and not requeueable: drained, not requeued.
	FakeSlurm s2;
	handle_job(job(102, "gpu-ecc.out", {"n3"}), opt, s2, lim, stats, 5001);
	ck_assert_int_eq(s2.drained.size(), 1);
	ck_assert_int_eq(s2.requeued.size(), 0);
}
END_TEST

START_TEST(user_error_never_drains_nor_requeues)
{
	FakeSlurm slurm;
	JobcompOptions opt;
	DrainLimiter lim(opt.max_drains, opt.drain_window);
	FailureStats stats;
	for (const char *log : {"user-error.out", "device-assert.out", "cuda-oom.out", "no-such-file.out"}) {
		JobRecord r = job(200, log, {"n1", "n2"});
		r.end.checkpointed = r.end.requeue_allowed = true;
		JobOutcome out = handle_job(r, opt, slurm, lim, stats, 6000);
		ck_assert(!is_infrastructure(out.cls.cls));
	}
	ck_assert(slurm.drained.empty());
	ck_assert(slurm.requeued.empty());
	// A job that succeeded: nothing at all, not even a node query.
	JobOutcome ok_out = handle_job(job(201, "gpu-ecc.out", {"n1"}, 0), opt, slurm, lim, stats, 6001);
	ck_assert(ok_out.cls.cls == FailureClass::none);
	ck_assert(slurm.drained.empty());
}
END_TEST

START_TEST(drain_cap_holds_and_budget)
{
	FakeSlurm slurm;
	JobcompOptions opt;
	opt.max_drains = 2;
	opt.drain_window = 3600;
	DrainLimiter lim(opt.max_drains, opt.drain_window);
	FailureStats stats;
	// Five nodes go down at once under five jobs: two drains, three logged only.
	int capped = 0;
	for (int i = 1; i <= 5; i++) {
		std::string n = "n" + std::to_string(i);
		JobRecord r = job(300 + i, "user-error.out", {n});
		r.end.state = "NODE_FAIL";
		slurm.nodes[n] = slurm_node(n, "DOWN*", "Not responding");
		capped += static_cast<int>(handle_job(r, opt, slurm, lim, stats, 7000 + i).capped.size());
	}
	ck_assert_int_eq(slurm.drained.size(), 2);
	ck_assert_int_eq(capped, 3);
	// An hour later the window has room again.
	slurm.nodes["n9"] = slurm_node("n9", "DOWN*", "Not responding");
	JobRecord late = job(399, "user-error.out", {"n9"});
	late.end.state = "NODE_FAIL";
	handle_job(late, opt, slurm, lim, stats, 7002 + 3600);
	ck_assert_int_eq(slurm.drained.size(), 3);
	// Restart budget: the third restart of a checkpointed job is the last.
	JobRecord r = job(400, "nccl-timeout.out", {"n1", "n2"});
	r.end.checkpointed = r.end.requeue_allowed = true;
	r.end.restart_count = 2;
	ck_assert(handle_job(r, opt, slurm, lim, stats, 9000).requeued);
	r.end.restart_count = 3;
	ck_assert(!handle_job(r, opt, slurm, lim, stats, 9001).requeued);
	// Slurm requeued it already (NODE_FAIL with JobRequeue): not twice.
	r.end.restart_count = 0;
	r.already_requeued = true;
	ck_assert(!handle_job(r, opt, slurm, lim, stats, 9002).requeued);
}
END_TEST

START_TEST(ckpt_job_carries_its_budget)
{
	// What spank_ckpt sets in sbatch is what jobcomp/health reads back.
	ckpt::JobOptions o;
	o.enabled = true;
	o.max_restarts = 1;
	std::vector<std::string> env = {"SLURM_SPANK_x=y"};
	for (const auto &[k, v] : exchange::job_control_env(ckpt::job_request(o)))
		env.push_back(k + "=" + v);
	exchange::CkptRequest req = exchange::ckpt_request_from_env(env);
	ck_assert(req.enabled);
	ck_assert_int_eq(req.max_restarts, 1);
	ck_assert(!exchange::ckpt_request_from_env({"LOOM_CKPT=0", "LOOM_CKPT_MAX_RESTARTS=x9"}).enabled);
	ck_assert_int_eq(exchange::ckpt_request_from_env({"LOOM_CKPT_MAX_RESTARTS=x9"}).max_restarts, -1);
	ckpt::JobOptions off;
	ck_assert(exchange::job_control_env(ckpt::job_request(off)).empty());
	// A --ckpt job with --ckpt-max-restarts=1, jobcomp's restart_budget 3:
	// requeued once, on the job's budget, then not.
	FakeSlurm slurm;
	JobcompOptions opt;
	opt.restart_budget = 3;
	DrainLimiter lim(4, 3600);
	FailureStats stats;
	JobRecord r = job(501, "nccl-timeout.out", {"n1", "n2"});
	r.end.checkpointed = req.enabled;
	r.ckpt_max_restarts = req.max_restarts;
	r.end.requeue_allowed = true;
	JobOutcome first = handle_job(r, opt, slurm, lim, stats, 100);
	ck_assert(first.requeued);
	ck_assert_msg(first.decision.why == "requeue (restart 1 of 1) (the job's --ckpt-max-restarts)", "%s",
		      first.decision.why.c_str());
	ck_assert(slurm.drained.empty()); // a NCCL timeout names no culprit
	r.end.restart_count = 1;
	JobOutcome second = handle_job(r, opt, slurm, lim, stats, 200);
	ck_assert(!second.requeued);
	ck_assert(second.decision.why.find("restart budget spent (1 of 1)") == 0);
	// Not checkpointed: the site's budget.
	JobRecord plain = job(502, "nccl-timeout.out", {"n1", "n2"});
	plain.end.requeue_allowed = true;
	plain.end.restart_count = 1;
	JobOutcome p = handle_job(plain, opt, slurm, lim, stats, 300);
	ck_assert(p.requeued);
	ck_assert(p.decision.why.find("(restart_budget)") != std::string::npos);
	// Checkpointed, but --no-requeue: Slurm would refuse; not tried.
	r.end.restart_count = 0;
	r.end.requeue_allowed = false;
	JobOutcome nr = handle_job(r, opt, slurm, lim, stats, 400);
	ck_assert(!nr.requeued);
	ck_assert(nr.decision.why.find("may not be requeued") != std::string::npos);
	ck_assert_int_eq(slurm.requeued.size(), 2);
	// The backlog keeps the budget, and the AdminComment to merge into.
	r.admin_comment = "loom ckpt: /ckpt/alice/501: step 7, 1.0 KiB, committed 2026-12-06T10:00:00";
	auto parsed = json_parse(job_record_json(r), "t");
	ck_assert(parsed.has_value());
	auto back = job_record_from_json(parsed->get(), "t");
	ck_assert(back.has_value());
	ck_assert_int_eq(back->ckpt_max_restarts, 1);
	ck_assert_str_eq(back->admin_comment.c_str(), r.admin_comment.c_str());
}
END_TEST

START_TEST(preflight_judges_a_new_configuration_before_the_old_worker_stops)
{
	std::string dir = temp_dir();
	JobcompOptions opt;
	opt.state_dir = dir + "/fresh/state";
	ck_assert(JobcompWorker::preflight(opt).has_value()); // made where missing
	// A file where the directory should be, and a corrupt backlog: refused, named.
	ck_assert(write_file_atomic(dir + "/file", "x").has_value());
	opt.state_dir = dir + "/file/state";
	auto in_the_way = JobcompWorker::preflight(opt);
	ck_assert(!in_the_way);
	ck_assert_msg(in_the_way.error().str().find(dir + "/file") != std::string::npos, "%s",
		      in_the_way.error().str().c_str());
	opt.state_dir = dir + "/fresh/state";
	ck_assert(write_file_atomic(opt.state_dir + "/loom-jobcomp-backlog.json", "{\"version\": 1}").has_value());
	auto corrupt = JobcompWorker::preflight(opt);
	ck_assert(!corrupt);
	ck_assert(corrupt.error().str().find("loom-jobcomp-backlog.json") != std::string::npos);
	// And preflight changed nothing: the file is still there as it was.
	auto text = read_file(opt.state_dir + "/loom-jobcomp-backlog.json");
	ck_assert(text && *text == "{\"version\": 1}");
}
END_TEST

START_TEST(backlog_round_trips_any_job_text)
{
	// Job names, directories and node reasons are the user's and the admin's
	// text: quotes, backslashes, newlines, control and non-ASCII characters
	// must come back as they went in.
	Backlog b;
	b.drains = {1700000000, 1700000060};
	JobRecord r = job(777, "x.out", {"n1", "n2"});
	r.job_name = "say \"hi\"\\ and\nbye\t\x01 \xc3\xa9t\xc3\xa9";
	r.work_dir = "/home/u/dir with \"quotes\"/\\";
	r.end.node_reason["n1"] = "Xid 79: \"fell off the bus\"\n";
	b.pending = {r, job(778, "y.out", {"n3"})};
	std::string dir = temp_dir();
	std::string path = dir + "/loom-jobcomp-backlog.json";
	ck_assert(write_file_atomic(path, backlog_json(b)).has_value());
	auto back = load_backlog(path);
	ck_assert_msg(back.has_value(), "%s", back ? "" : back.error().str().c_str());
	ck_assert(back->drains == b.drains);
	ck_assert_int_eq(back->pending.size(), 2);
	ck_assert(back->pending[0].job_name == r.job_name);
	ck_assert(back->pending[0].work_dir == r.work_dir);
	ck_assert(back->pending[0].end.node_reason.at("n1") == r.end.node_reason.at("n1"));
	ck_assert_int_eq(back->pending[1].end.job_id, 778);
	// An empty backlog is still a backlog.
	ck_assert(write_file_atomic(path, backlog_json(Backlog{})).has_value());
	auto empty = load_backlog(path);
	ck_assert(empty.has_value() && empty->pending.empty() && empty->drains.empty());
}
END_TEST

START_TEST(backlog_survives_a_restart)
{
	std::string dir = temp_dir();
	JobcompOptions opt;
	opt.state_dir = dir;
	opt.stats_publish = dir + "/published/failure-stats.json";
	ck_assert(::mkdir((dir + "/published").c_str(), 0755) == 0);
	auto slow = std::make_unique<FakeSlurm>();
	slow->answer_after_stop = true;
	FakeSlurm *first = slow.get();
	{
		JobcompWorker w(opt, std::move(slow));
		ck_assert(w.start().has_value());
		for (uint32_t id = 601; id <= 603; id++) {
			JobRecord r = job(id, "gpu-ecc.out", {"n3"});
			r.end.requeue_allowed = true;
			w.enqueue(r);
		}
		ck_assert(eventually([first] { return first->show_calls.load() > 0; })); // job 601 in hand
		w.stop(); // slurmctld shuts down while the first job is in hand
		// The worker owns the fake Slurm: look at it before the worker goes.
		ck_assert_int_eq(first->requeued.size(), 1);
	}
	auto b = load_backlog(dir + "/loom-jobcomp-backlog.json");
	ck_assert(b.has_value());
	ck_assert_int_eq(b->pending.size(), 2);
	ck_assert_int_eq(b->pending[0].end.job_id, 602);
	ck_assert_int_eq(b->drains.size(), 1); // the drain cap remembers the first drain
	auto fresh = std::make_unique<FakeSlurm>();
	FakeSlurm *second = fresh.get();
	JobcompWorker w2(opt, std::move(fresh));
	ck_assert(w2.start().has_value());
	ck_assert(w2.wait_idle(5000));
	w2.stop();
	ck_assert_int_eq(second->requeued.size(), 2);
	ck_assert_int_eq(second->requeued[0], 602);
	ck_assert_int_eq(load_backlog(dir + "/loom-jobcomp-backlog.json")->pending.size(), 0);
	auto stats = load_failure_stats(dir + "/loom-failure-stats.json");
	ck_assert(stats.has_value());
	ck_assert_int_eq(stats->nodes["n3"].failures, 3);
	ck_assert_sstr_eq(stats->nodes["n3"].gpu_class, "h100");
	// The published copy is what spank_ckpt reads on the nodes: the same
	// statistics, and n3's three failures pull its MTBF below the site value.
	auto text = read_file(opt.stats_publish);
	ck_assert(text.has_value());
	auto ck = parse_failure_stats(*text, opt.stats_publish);
	ck_assert_msg(ck.has_value(), "%s", ck ? "" : ck.error().str().c_str());
	ck_assert_int_eq(ck->nodes.at("n3").failures, 3);
	ck_assert(job_mtbf(*ck, {"n3"}, 30 * 86400.0) < 30 * 86400.0 / 3);
	ck_assert(std::fabs(job_mtbf(*ck, {"n9"}, 30 * 86400.0) - 30 * 86400.0) < 1e-6);
	// A corrupt backlog is refused with its path, not silently emptied.
	ck_assert(write_file_atomic(dir + "/loom-jobcomp-backlog.json", "{\"version\": 1}").has_value());
	JobcompWorker w3(opt, std::make_unique<FakeSlurm>());
	auto st = w3.start();
	ck_assert(!st);
	ck_assert(st.error().str().find("loom-jobcomp-backlog.json") != std::string::npos);
	rm(dir);
}
END_TEST

// The end of the jobs on busy spares: squeue next to scontrol, asked for
// epoch seconds (SLURM_TIME_FORMAT=%s); a node's latest end counts, a job
// without a limit ("Unknown") is never soon, a line that is not END|NODES is
// an error naming it.
START_TEST(jobs_end_reads_squeue_next_to_scontrol)
{
	std::string dir = temp_dir();
	std::string squeue = dir + "/squeue";
	// Real squeue output (tests/data/health/PROVENANCE): job 1 on n[1-2]
	// ends at 1796314851, job 2 on n1 (the partition's 365 days) later;
	// then what squeue prints for a job without an end time.
	ck_assert(write_file_atomic(squeue,
				    "#!/bin/sh\n"
				    "echo \"$SLURM_TIME_FORMAT $*\" >" + dir + "/args\n"
				    "cat " + test::srcdir() + "/tests/data/health/squeue-end-times-22.05.8.txt\n"
				    "echo 'Unknown|n8'\n",
				    0755)
			  .has_value());
	ScontrolOps ops(dir + "/scontrol", 10);
	auto end = ops.jobs_end({"n1", "n2", "n8"});
	ck_assert_msg(end.has_value(), "%s", end ? "" : end.error().str().c_str());
	ck_assert_int_eq(end->size(), 3);
	ck_assert_int_eq(end->at("n1"), 1827850251);
	ck_assert_int_eq(end->at("n2"), 1796314851);
	ck_assert(end->at("n8") == INT64_MAX);
	auto args = read_file(dir + "/args");
	ck_assert(args.has_value());
	ck_assert_msg(*args == "%s --noheader --states=RUNNING,COMPLETING --nodelist=n1,n2,n8 --format=%e|%N\n", "%s",
		      args->c_str());
	// Only the nodes asked about; a line that is not END|NODES is an error naming it.
	end = ops.jobs_end({"n2"});
	ck_assert(end.has_value() && end->size() == 1 && end->at("n2") == 1796314851);
	ck_assert(write_file_atomic(squeue, "#!/bin/sh\necho 'JOBID PARTITION'\n", 0755).has_value());
	end = ops.jobs_end({"n4"});
	ck_assert(!end.has_value());
	ck_assert_msg(end.error().str().find("line 1") != std::string::npos, "%s", end.error().str().c_str());
	rm(dir);
}
END_TEST

// slurmctld stops jobcomp/health (reconfigure, shutdown) holding its locks,
// so the worker's scontrol cannot be answered: stop() must cut it short at
// once, keep the job in hand in the backlog, and the next start handles it.
START_TEST(stop_cuts_scontrol_short_and_keeps_the_job)
{
	std::string dir = temp_dir();
	std::string hang = dir + "/scontrol";
	std::string called = dir + "/scontrol-called";
	ck_assert(write_file_atomic(hang, "#!/bin/sh\n: >'" + called + "'\nexec sleep 30\n", 0755).has_value());
	JobcompOptions opt;
	opt.state_dir = dir;
	opt.scontrol = hang;
	{
		JobcompWorker w(opt, std::make_unique<ScontrolOps>(hang, 20));
		ck_assert(w.start().has_value());
		JobRecord r = job(701, "gpu-ecc.out", {"n3"});
		r.end.requeue_allowed = true;
		w.enqueue(r);
		ck_assert(eventually([&] { return ::access(called.c_str(), F_OK) == 0; })); // in scontrol show node
		auto t0 = std::chrono::steady_clock::now();
		w.stop();
		double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
		ck_assert_msg(s < 1.0, "stop() took %.2f s with a hung scontrol", s);
	}
	auto b = load_backlog(dir + "/loom-jobcomp-backlog.json");
	ck_assert(b.has_value());
	ck_assert_int_eq(b->pending.size(), 1);
	ck_assert_int_eq(b->pending[0].end.job_id, 701);
	auto stats = load_failure_stats(dir + "/loom-failure-stats.json");
	ck_assert(stats.has_value());
	ck_assert_int_eq(stats->nodes["n3"].failures, 0); // not counted for a job not yet handled
	auto fake = std::make_unique<FakeSlurm>();
	FakeSlurm *f = fake.get();
	JobcompWorker w2(opt, std::move(fake));
	ck_assert(w2.start().has_value());
	ck_assert(w2.wait_idle(5000));
	w2.stop();
	ck_assert_int_eq(f->drained.size(), 1);
	ck_assert_sstr_eq(f->drained[0], "n3");
	ck_assert_int_eq(f->requeued.size(), 1);
	ck_assert_int_eq(load_failure_stats(dir + "/loom-failure-stats.json")->nodes["n3"].failures, 1);
	rm(dir);
}
END_TEST

START_TEST(stop_leaves_a_blocked_worker_behind)
{
	// A read that blocks past the stop (a hung NFS mount under the job's
	// output): stop() returns within its wait, the thread writes nothing
	// more, and the next worker owns the state directory.
	std::string dir = temp_dir();
	JobcompOptions opt;
	opt.state_dir = dir;
	// The read blocks until the test lets it go (after the stop and the next
	// worker's write), deaf to the cancel.
	std::atomic<bool> blocked{false}, unblock{false};
	struct Stuck : FakeSlurm {
		std::atomic<bool> &blocked, &unblock;
		Stuck(std::atomic<bool> &b, std::atomic<bool> &u) : blocked(b), unblock(u) {}
		expected<std::map<std::string, SlurmNode>> show_nodes(const std::vector<std::string> &want) override
		{
			blocked.store(true);
			(void)eventually([this] { return unblock.load(); }); // deaf to the cancel
			return FakeSlurm::show_nodes(want);
		}
	};
	std::string backlog = dir + "/loom-jobcomp-backlog.json";
	{
		JobcompWorker w(opt, std::make_unique<Stuck>(blocked, unblock));
		ck_assert(w.start().has_value());
		w.enqueue(job(950, "gpu-ecc.out", {"n3"}));
		ck_assert(eventually([&] { return blocked.load(); }));
		auto t0 = std::chrono::steady_clock::now();
		ck_assert(!w.stop(300));
		double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
		ck_assert_msg(s < 1.0, "stop(300) took %.2f s", s);
		// The next worker's file: the one left behind must not overwrite it.
		ck_assert(write_file_atomic(backlog, "{\"pending\": [], \"drains\": []}\n").has_value());
		unblock.store(true); // the thread left behind goes on, and writes nothing
	} // the destructor waits for the thread (its members go away)
	auto after = read_file(backlog);
	ck_assert(after.has_value());
	ck_assert_sstr_eq(*after, "{\"pending\": [], \"drains\": []}\n");
	rm(dir);
}
END_TEST

START_TEST(drains_only_what_is_loom_to_drain)
{
	// The culprit of a GPU fault, in each state scontrol may report it in.
	struct Case {
		const char *state, *reason;
		bool drained;
	} cases[] = {
		{"ALLOCATED", "", true},
		{"DOWN*", "Not responding", true},           // Slurm's own: drained, kept out when slurmd returns
		{"IDLE+DRAIN", "admin: replacing DIMM", false}, // someone else's drain
		{"DOWN", "admin: PSU swap", false},          // someone else's down
		{"MIXED+DRAIN+REBOOT_REQUESTED", "loom: reboot", false},
		{"IDLE+POWERED_DOWN", "", false},
	};
	uint32_t id = 800;
	for (const auto &c : cases) {
		FakeSlurm slurm;
		slurm.nodes["n3"] = slurm_node("n3", c.state, c.reason);
		JobcompOptions opt;
		DrainLimiter lim(opt.max_drains, opt.drain_window);
		FailureStats stats;
		JobOutcome o = handle_job(job(id++, "gpu-ecc.out", {"n3"}), opt, slurm, lim, stats, 5000);
		ck_assert_msg(o.drained.empty() != c.drained, "%s (%s): drained %zu", c.state, c.reason, o.drained.size());
	}
	// Node states unknown (scontrol failed): nothing is drained on a guess.
	struct Blind : FakeSlurm {
		expected<std::map<std::string, SlurmNode>> show_nodes(const std::vector<std::string> &) override
		{
			return unexpected("scontrol show node", "Unable to contact slurm controller");
		}
	} blind;
	JobcompOptions opt;
	DrainLimiter lim(opt.max_drains, opt.drain_window);
	FailureStats stats;
	JobOutcome o = handle_job(job(900, "gpu-ecc.out", {"n3"}), opt, blind, lim, stats, 5000);
	ck_assert_int_eq(o.drained.size(), 0);
	ck_assert_int_eq(blind.drained.size(), 0);
}
END_TEST

START_TEST(infrastructure_failure_restarts_on_a_spare_of_its_leaf)
{
	std::string dir = temp_dir();
	JobcompOptions opt;
	opt.spare_file = write_pool(dir);
	DrainLimiter lim(opt.max_drains, opt.drain_window);
	FailureStats stats;
	FakeSlurm slurm;
	slurm.nodes["n4"] = slurm_node("n4", "IDLE");
	slurm.nodes["n8"] = slurm_node("n8", "IDLE");
	// gpu-ecc.out blames n3 (leaf1): leaf1's spare n4 takes its place, the
	// job keeps n1 and n2, in a reservation of its own, requeued held, moved
	// into it and released; no plain requeue.
	JobRecord r = job(101, "gpu-ecc.out", {"n1", "n2", "n3"});
	r.end.checkpointed = r.end.requeue_allowed = true;
	r.time_limit_s = 3600;
	// spank_ckpt's note and an older restart note: the first is kept, the second replaced.
	r.admin_comment = "loom: restarted on spares n9 -> n8 (leaf leaf2) in reservation loom_spare_101_0 | "
			  "loom ckpt: /ckpt/alice/101: step 7, 1.0 KiB, committed 2026-12-06T10:00:00";
	JobOutcome out = handle_job(r, opt, slurm, lim, stats, 5000);
	ck_assert(slurm.drained == std::vector<std::string>{"n3"});
	ck_assert_int_eq(slurm.requeued.size(), 0);
	ck_assert(out.requeued);
	ck_assert_sstr_eq(out.reservation.c_str(), "loom_spare_101_1");
	ck_assert_int_eq(slurm.calls.size(), 4);
	ck_assert_sstr_eq(slurm.calls[0].c_str(), "create loom_spare_101_1 n1,n2,n4 alice 4200");
	ck_assert_sstr_eq(slurm.calls[1].c_str(), "requeuehold 101");
	ck_assert_sstr_eq(slurm.calls[2].c_str(),
			  "update 101 ReservationName=loom_spare_101_1 AdminComment=loom: restarted on spares n3 -> n4 "
			  "(leaf leaf1) in reservation loom_spare_101_1 | "
			  "loom ckpt: /ckpt/alice/101: step 7, 1.0 KiB, committed 2026-12-06T10:00:00");
	ck_assert_sstr_eq(slurm.calls[3].c_str(), "release 101");
	// Slurm requeued it itself (a node set DOWN under a --requeue job): moved
	// into the reservation, neither requeued again nor held.
	FakeSlurm s2;
	s2.nodes["n4"] = slurm_node("n4", "IDLE");
	JobRecord down = job(102, "user-error.out", {"n2", "n3"});
	down.end.state = "NODE_FAIL";
	down.end.requeue_allowed = true;
	down.already_requeued = true;
	s2.nodes["n3"] = slurm_node("n3", "DOWN*", "Not responding");
	out = handle_job(down, opt, s2, lim, stats, 5001);
	ck_assert_int_eq(s2.requeued.size(), 0);
	ck_assert_int_eq(s2.calls.size(), 2);
	ck_assert_sstr_eq(s2.calls[0].c_str(), "create loom_spare_102_1 n2,n4 alice 0");
	ck_assert(s2.calls[1].rfind("update 102 ReservationName=loom_spare_102_1 ", 0) == 0);
	rm(dir);
}
END_TEST

START_TEST(without_a_spare_for_every_culprit_the_job_takes_the_normal_requeue)
{
	std::string dir = temp_dir();
	JobcompOptions opt;
	opt.spare_file = write_pool(dir);
	DrainLimiter lim(opt.max_drains, opt.drain_window);
	FailureStats stats;
	// Two nodes of leaf1 down together, one spare in leaf1: none is used.
	FakeSlurm slurm;
	slurm.nodes["n4"] = slurm_node("n4", "IDLE");
	slurm.nodes["n2"] = slurm_node("n2", "DOWN*", "Not responding");
	slurm.nodes["n3"] = slurm_node("n3", "DOWN*", "Not responding");
	JobRecord r = job(103, "user-error.out", {"n1", "n2", "n3"});
	r.end.state = "NODE_FAIL";
	r.end.requeue_allowed = true;
	JobOutcome out = handle_job(r, opt, slurm, lim, stats, 5000);
	ck_assert_int_eq(out.decision.drain.size(), 2);
	ck_assert(slurm.calls.empty());
	ck_assert(slurm.requeued == std::vector<uint32_t>{103});
	ck_assert_msg(out.no_spares == "no usable spare left in leaf leaf1 for n3", "%s", out.no_spares.c_str());
	// Slurm refuses the reservation: the normal requeue, nothing left behind.
	FakeSlurm s2;
	s2.nodes["n4"] = slurm_node("n4", "IDLE");
	s2.refuse_reservation = true;
	JobRecord one = job(104, "gpu-ecc.out", {"n1", "n3"});
	one.end.checkpointed = one.end.requeue_allowed = true;
	out = handle_job(one, opt, s2, lim, stats, 5001);
	ck_assert(s2.requeued == std::vector<uint32_t>{104});
	ck_assert(out.no_spares.rfind("reservation refused: ", 0) == 0);
	// spares=no, or no pool published: the normal requeue, silently.
	FakeSlurm s3;
	opt.spares = false;
	handle_job(one, opt, s3, lim, stats, 5002);
	ck_assert(s3.calls.empty() && s3.requeued.size() == 1);
	opt.spares = true;
	opt.spare_file = dir + "/none.json";
	out = handle_job(one, opt, s3, lim, stats, 5003);
	ck_assert(s3.calls.empty() && s3.requeued.size() == 2 && out.no_spares.empty());
	// A user's own error never gets a spare.
	opt.spare_file = dir + "/loom-spares.json";
	FakeSlurm s4;
	s4.nodes["n4"] = slurm_node("n4", "IDLE");
	JobRecord user = job(105, "user-error.out", {"n1", "n3"});
	user.end.checkpointed = user.end.requeue_allowed = true;
	handle_job(user, opt, s4, lim, stats, 5004);
	ck_assert(s4.calls.empty() && s4.requeued.empty());
	auto bad = parse_jobcomp_options("spare_file=spares.json", "JobCompParams");
	ck_assert(!bad && bad.error().str().find("spare_file='spares.json': expected an absolute path") != std::string::npos);
	rm(dir);
}
END_TEST

START_TEST(a_job_moved_off_a_suspect_node_gets_a_spare)
{
	std::string dir = temp_dir();
	JobcompOptions opt;
	opt.spare_file = write_pool(dir);
	DrainLimiter lim(opt.max_drains, opt.drain_window);
	FailureStats stats;
	FakeSlurm slurm;
	slurm.nodes["n4"] = slurm_node("n4", "IDLE");
	auto suspect = parse_show_node("NodeName=n1 Arch=x86_64\n   State=IDLE ThreadsPerCore=1\n"
				       "   Extra=loom:suspect:predict:ib0 symbol_error reaches 100 in about 1 min\n",
				       "n1");
	ck_assert(suspect.has_value() && !suspect->suspect_mark().empty());
	slurm.nodes["n1"] = *suspect;
	// Slurm reports the requeue spank_ckpt made (state PENDING): the suspect
	// n1 is replaced by leaf1's spare, the job is not requeued again.
	JobRecord r = job(301, "user-error.out", {"n1"}, 0);
	r.end.state = "PENDING";
	r.end.checkpointed = r.end.requeue_allowed = true;
	r.already_requeued = true;
	JobOutcome out = handle_job(r, opt, slurm, lim, stats, 5000);
	ck_assert(out.migrated && slurm.drained.empty() && slurm.requeued.empty());
	ck_assert_int_eq(slurm.calls.size(), 2);
	ck_assert_sstr_eq(slurm.calls[0].c_str(), "create loom_spare_301_1 n4 alice 0");
	ck_assert_sstr_eq(slurm.calls[1].c_str(),
			  "update 301 ReservationName=loom_spare_301_1 AdminComment=loom: moved off suspect node(s) to "
			  "spares n1 -> n4 (leaf leaf1) in reservation loom_spare_301_1");
	// No spare left: the suspect node is excluded for the job instead.
	FakeSlurm s2;
	s2.nodes["n1"] = *suspect;
	s2.nodes["n4"] = slurm_node("n4", "IDLE+DRAIN", "maintenance");
	out = handle_job(r, opt, s2, lim, stats, 5001);
	ck_assert_int_eq(s2.calls.size(), 1);
	ck_assert_msg(s2.calls[0].rfind("update 301 ExcNodeList=n1 AdminComment=loom: moved off suspect node(s) n1 (no spares: ", 0) == 0,
		      "%s", s2.calls[0].c_str());
	// A job that names its nodes (-w) keeps them: no spare, no exclusion.
	FakeSlurm s5;
	s5.nodes["n1"] = *suspect;
	s5.nodes["n4"] = slurm_node("n4", "IDLE");
	JobRecord pinned = r;
	pinned.pinned = true;
	handle_job(pinned, opt, s5, lim, stats, 5004);
	ck_assert(s5.calls.empty());
	// Not a move: a job that is not --ckpt, or loom's own requeue of a failure (a node drained by loom).
	FakeSlurm s3;
	s3.nodes["n1"] = *suspect;
	s3.nodes["n4"] = slurm_node("n4", "IDLE");
	JobRecord plain = r;
	plain.end.checkpointed = false;
	handle_job(plain, opt, s3, lim, stats, 5002);
	ck_assert(s3.calls.empty());
	JobRecord ours = job(302, "user-error.out", {"n1", "n2"}, 0);
	ours.end.state = "PENDING";
	ours.end.checkpointed = true;
	ours.already_requeued = true;
	s3.nodes["n2"] = slurm_node("n2", "IDLE+DRAIN", "loom: jobcomp: gpu_fault: job 302: ...");
	handle_job(ours, opt, s3, lim, stats, 5003);
	ck_assert(s3.calls.empty());
	rm(dir);
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("health_jobcomp");
	TCase *tc = tcase_create("jobcomp");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, options_fail_closed);
	tcase_add_test(tc, gpu_fault_drains_culprit_and_requeues_checkpointed);
	tcase_add_test(tc, user_error_never_drains_nor_requeues);
	tcase_add_test(tc, drain_cap_holds_and_budget);
	tcase_add_test(tc, ckpt_job_carries_its_budget);
	tcase_add_test(tc, preflight_judges_a_new_configuration_before_the_old_worker_stops);
	tcase_add_test(tc, backlog_round_trips_any_job_text);
	tcase_add_test(tc, backlog_survives_a_restart);
	tcase_add_test(tc, stop_cuts_scontrol_short_and_keeps_the_job);
	tcase_add_test(tc, drains_only_what_is_loom_to_drain);
	tcase_add_test(tc, infrastructure_failure_restarts_on_a_spare_of_its_leaf);
	tcase_add_test(tc, without_a_spare_for_every_culprit_the_job_takes_the_normal_requeue);
	tcase_add_test(tc, a_job_moved_off_a_suspect_node_gets_a_spare);
	tcase_add_test(tc, jobs_end_reads_squeue_next_to_scontrol);
	tcase_add_test(tc, stop_leaves_a_blocked_worker_behind);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
