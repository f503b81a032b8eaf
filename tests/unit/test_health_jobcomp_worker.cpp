// Unit tests for jobcomp/health's worker thread: preflight of a new
// configuration, the backlog across a restart, stop() against a hung or
// blocked scontrol, and the end times squeue gives next to scontrol.
#include "lib/exchange/failure_stats.hpp"
#include "lib/health/jobcomp.hpp"
#include "lib/health/jobcomp_worker.hpp"
#include "lib/util/fs.hpp"

#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/jobcomp_fixture.hpp"

using namespace loom;
using namespace loom::health;
using namespace loom::health::testing;
using namespace loom::exchange;

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
				    "echo \"$SLURM_TIME_FORMAT $*\" >" +
					    dir +
					    "/args\n"
					    "cat " +
					    test::srcdir() +
					    "/tests/data/health/squeue-end-times-22.05.8.txt\n"
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
	}                            // the destructor waits for the thread (its members go away)
	auto after = read_file(backlog);
	ck_assert(after.has_value());
	ck_assert_sstr_eq(*after, "{\"pending\": [], \"drains\": []}\n");
	rm(dir);
}
END_TEST

TCase *jobcomp_worker_tests()
{
	TCase *tc = tcase_create("worker");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, preflight_judges_a_new_configuration_before_the_old_worker_stops);
	tcase_add_test(tc, backlog_round_trips_any_job_text);
	tcase_add_test(tc, backlog_survives_a_restart);
	tcase_add_test(tc, stop_cuts_scontrol_short_and_keeps_the_job);
	tcase_add_test(tc, jobs_end_reads_squeue_next_to_scontrol);
	tcase_add_test(tc, stop_leaves_a_blocked_worker_behind);
	return tc;
}
