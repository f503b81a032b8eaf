// Unit tests for the job-log scanner, the failure classifier, the job
// decision (drain/requeue with a restart budget), output path expansion and
// the failure statistics (MTBF) file. Job logs: tests/health/joblogs (see the
// README there); counts in comments are grep -c on those files.
#include "lib/exchange/failure_stats.hpp"
#include "lib/health/classify.hpp"
#include "lib/health/failure_stats.hpp"
#include "lib/health/job_log.hpp"
#include "lib/util/fs.hpp"

#include <cmath>
#include <string>
#include <unistd.h>

#include "tests/unit/check_main.hpp"

using namespace loom;
using namespace loom::health;
using namespace loom::exchange;

namespace {

JobLogScan scan(const std::string &name)
{
	auto s = scan_job_log_file(test::srcdir() + "/tests/health/joblogs/" + name);
	ck_assert_msg(s.has_value(), "%s", s ? "" : s.error().str().c_str());
	return *s;
}

int count(const JobLogScan &s, LogFinding k)
{
	auto it = s.counts.find(k);
	return it == s.counts.end() ? 0 : it->second;
}

JobEnd failed_job(std::vector<std::string> nodes, int exit_code = 1)
{
	JobEnd j;
	j.job_id = 4242;
	j.state = "FAILED";
	j.exit_code = exit_code;
	j.nodes = std::move(nodes);
	for (const auto &n : j.nodes)
		j.node_state[n] = "ALLOCATED";
	j.start_time = 1000;
	j.end_time = 4600;
	return j;
}

} // namespace

START_TEST(scanner_kinds_and_hosts)
{
	JobLogScan t = scan("nccl-timeout.out");
	ck_assert_int_eq(count(t, LogFinding::nccl_timeout),
			 3); // grep -c "Watchdog caught collective operation timeout"
	JobLogScan g = scan("gpu-ecc.out");
	ck_assert_int_eq(count(g, LogFinding::gpu_fault), 2); // grep -c "uncorrectable ECC error"
	ck_assert_sstr_eq(g.lines[0].host, "n3");             // "n3:23456:23511 [2] NCCL WARN ..."
	ck_assert_int_eq(g.lines[0].line, 4);
	ck_assert_sstr_eq(g.lines[1].host, ""); // the RuntimeError line names no host
	JobLogScan n = scan("ib-retry.out");
	ck_assert_int_eq(count(n, LogFinding::network),
			 3); // two "NET/IB : Got completion", one "remote process exited"
	ck_assert_int_eq(count(scan("cuda-oom.out"), LogFinding::oom_gpu), 1);
	ck_assert_int_eq(count(scan("host-oom.err"), LogFinding::oom_host), 1);
	JobLogScan d = scan("device-assert.out");
	ck_assert_int_eq(count(d, LogFinding::user_error), 1); // device-side assert, not a CUDA fault
	ck_assert_int_eq(count(d, LogFinding::cuda_error), 0);
	ck_assert_sstr_eq(host_of_line("slurmstepd: error: *** JOB 12 ON n7 CANCELLED AT 2026-11-30T21:00:00 ***"),
			  "n7");
	ck_assert_sstr_eq(host_of_line("srun: error: n2: task 3: Aborted (core dumped)"), "n2");
	ck_assert_sstr_eq(host_of_line("step 3: loss 2.0"), "");
	// srun -l: the task's label before NCCL's host:pid:tid.
	ck_assert_sstr_eq(host_of_line("5: n3:4242:4290 [0] NCCL WARN Cuda failure 'unspecified launch failure'"),
			  "n3");
	ck_assert_sstr_eq(host_of_line(" 12: gpu-a7:1:2 [3] NCCL WARN NET/IB : Got completion"), "gpu-a7");
	ck_assert_sstr_eq(host_of_line("12: loss 2.0"), "");
	ck_assert(!scan_job_log_file("/nonexistent/slurm-1.out"));
}
END_TEST

START_TEST(scanner_reads_only_the_tail)
{
	char tmpl[] = "/tmp/loom-joblog.XXXXXX";
	int fd = ::mkstemp(tmpl);
	ck_assert(fd >= 0);
	::close(fd);
	std::string big(4096, 'x');
	big += "\nCUDA out of memory early\n";
	for (int i = 0; i < 2000; i++)
		big += "step " + std::to_string(i) + " ok\n";
	big += "NCCL WARN late\n";
	ck_assert(write_file_atomic(tmpl, big).has_value());
	auto s = scan_job_log_file(tmpl, 1024);
	ck_assert(s && s->cut);
	ck_assert_int_eq(count(*s, LogFinding::oom_gpu), 0); // before the tail
	ck_assert_int_eq(count(*s, LogFinding::nccl_error), 1);
	::unlink(tmpl);
}
END_TEST

START_TEST(classes_from_logs)
{
	JobEnd j = failed_job({"n1", "n2", "n3", "n4"});
	Classification g = classify_job(j, scan("gpu-ecc.out"));
	ck_assert(g.cls == FailureClass::gpu_fault);
	ck_assert_int_eq(g.culprits.size(), 1);
	ck_assert_sstr_eq(g.culprits[0], "n3");
	Classification n = classify_job(j, scan("ib-retry.out"));
	ck_assert(n.cls == FailureClass::network_fault);
	ck_assert_int_eq(n.culprits.size(), 1); // n4 (two lines); n1 only said its peer went away
	ck_assert_sstr_eq(n.culprits[0], "n4");
	Classification t = classify_job(j, scan("nccl-timeout.out"));
	ck_assert(t.cls == FailureClass::nccl_timeout);
	ck_assert(t.culprits.empty()); // a hung collective does not name its culprit
	ck_assert(classify_job(j, scan("cuda-oom.out")).cls == FailureClass::oom);
	ck_assert(classify_job(j, scan("host-oom.err")).cls == FailureClass::oom);
	ck_assert(classify_job(j, scan("user-error.out")).cls == FailureClass::user_error);
	ck_assert(classify_job(j, scan("device-assert.out")).cls == FailureClass::user_error);
	// A job that exits 1 with an empty log is the user's.
	Classification u = classify_job(j, JobLogScan{});
	ck_assert(u.cls == FailureClass::user_error);
	ck_assert_sstr_eq(u.evidence, "exit code 1");
	// A host the job did not run on is never a culprit.
	JobEnd other = failed_job({"n7"});
	ck_assert(classify_job(other, scan("gpu-ecc.out")).culprits.empty());
}
END_TEST

START_TEST(classes_from_slurm_state)
{
	JobEnd j = failed_job({"n1", "n2"});
	j.state = "NODE_FAIL";
	j.node_state["n2"] = "DOWN*";
	Classification c = classify_job(j, JobLogScan{});
	ck_assert(c.cls == FailureClass::node_failure);
	ck_assert_int_eq(c.culprits.size(), 1);
	ck_assert_sstr_eq(c.culprits[0], "n2");
	// The health check drained n1 for a GPU Xid while the job ran: a GPU fault on n1,
	// even though the log only shows a NCCL timeout.
	JobEnd k = failed_job({"n1", "n2"});
	k.node_state["n1"] = "MIXED+DRAIN";
	k.node_reason["n1"] = "loom: gpu_xid: GPU 4 (0000:9b:00): Xid 79 x1: reboot";
	Classification d = classify_job(k, scan("nccl-timeout.out"));
	ck_assert(d.cls == FailureClass::gpu_fault);
	ck_assert_sstr_eq(d.culprits[0], "n1");
	k.node_reason["n1"] = "loom: ib_port: mlx5_2/1: state DOWN";
	ck_assert(classify_job(k, JobLogScan{}).cls == FailureClass::network_fault);
	// An admin's drain is not evidence against the node.
	k.node_reason["n1"] = "replacing DIMM";
	ck_assert(classify_job(k, JobLogScan{}).cls == FailureClass::user_error);
	JobEnd ok = failed_job({"n1"}, 0);
	ok.state = "COMPLETED";
	ck_assert(classify_job(ok, JobLogScan{}).cls == FailureClass::none);
	JobEnd to = failed_job({"n1"}, 0);
	to.state = "TIMEOUT";
	ck_assert(classify_job(to, JobLogScan{}).cls == FailureClass::user_error);
	JobEnd cancelled = failed_job({"n1"}, 0);
	cancelled.state = "CANCELLED";
	ck_assert(classify_job(cancelled, scan("gpu-ecc.out")).cls == FailureClass::none);
}
END_TEST

START_TEST(decisions_and_budget)
{
	JobEnd j = failed_job({"n1", "n2", "n3", "n4"});
	Classification g = classify_job(j, scan("gpu-ecc.out"));
	JobDecision none = decide_job(j, g, 3);
	ck_assert(!none.requeue); // neither checkpointed nor requeueable
	ck_assert_int_eq(none.drain.size(), 1);
	ck_assert(none.reason.rfind("loom: jobcomp: gpu_fault: job 4242: ", 0) == 0);
	ck_assert(none.reason.find('\'') == std::string::npos);
	j.checkpointed = true;
	ck_assert(decide_job(j, g, 3).requeue);
	j.restart_count = 3;
	JobDecision spent = decide_job(j, g, 3);
	ck_assert(!spent.requeue);
	ck_assert_int_eq(spent.drain.size(), 1); // the node is still drained
	// A user's own error never drains and never requeues, checkpointed or not.
	JobEnd u = failed_job({"n1"});
	u.checkpointed = u.requeue_allowed = true;
	JobDecision d = decide_job(u, classify_job(u, scan("user-error.out")), 3);
	ck_assert(!d.requeue && d.drain.empty());
	JobDecision o = decide_job(u, classify_job(u, scan("cuda-oom.out")), 3);
	ck_assert(!o.requeue && o.drain.empty());
}
END_TEST

START_TEST(output_paths)
{
	ck_assert_sstr_eq(expand_output_path("slurm-%j.out", "/home/u", 77, "u", "train", "n1"),
			  "/home/u/slurm-77.out");
	ck_assert_sstr_eq(expand_output_path("/logs/%x-%5j-%N.%%.err", "/w", 77, "u", "train", "n1"),
			  "/logs/train-00077-n1.%.err");
	ck_assert_sstr_eq(expand_output_path("%A_%a.out", "", 90, "u", "x", "n1", 88, 3), "88_3.out");
	ck_assert_sstr_eq(expand_output_path("odd%", "/w", 1, "u", "x", "n"), "/w/odd%");
}
END_TEST

START_TEST(failure_stats_mtbf)
{
	FailureStats s;
	std::map<std::string, std::string> cls = {{"n1", "h100"}, {"n2", "h100"}, {"n3", "a100"}};
	JobEnd j = failed_job({"n1", "n2"}); // 3600 s each
	Classification g;
	g.cls = FailureClass::gpu_fault;
	g.culprits = {"n2"};
	record_job(s, j, g, cls, 5000);
	JobEnd k = failed_job({"n1", "n2", "n3"});
	k.state = "COMPLETED";
	k.exit_code = 0;
	record_job(s, k, Classification{}, cls, 9000);
	Classification t;
	t.cls = FailureClass::nccl_timeout; // no culprit: counted against the class
	record_job(s, failed_job({"n3"}), t, cls, 9500);
	ck_assert(s.nodes["n1"].exposure_s == 7200 && s.nodes["n1"].failures == 0 && s.nodes["n1"].mtbf_s() < 0);
	ck_assert(s.nodes["n2"].failures == 1 && s.nodes["n2"].mtbf_s() == 7200);
	ck_assert(s.gpu_classes["h100"].exposure_s == 14400 && s.gpu_classes["h100"].failures == 1);
	ck_assert(s.gpu_classes["a100"].exposure_s == 7200 && s.gpu_classes["a100"].failures == 1);
	ck_assert_int_eq(s.gpu_classes["a100"].by_class["nccl_timeout"], 1);
	auto back = parse_failure_stats(failure_stats_json(s), "stats");
	ck_assert_msg(back.has_value(), "%s", back ? "" : back.error().str().c_str());
	ck_assert(back->nodes["n2"].mtbf_s() == 7200 && back->nodes["n2"].gpu_class == "h100");
	ck_assert_int_eq(back->updated, 9500);
	ck_assert(!parse_failure_stats("{\"version\": 2, \"updated\": 0, \"nodes\": {}, \"gpu_classes\": {}}", "v2"));
	ck_assert(!parse_failure_stats("{\"version\": 1, \"updated\": 0, \"nodes\": {}}", "short"));
}
END_TEST

START_TEST(health_weights_from_history)
{
	FailureStats s;
	ck_assert(node_health_weights(s).empty()); // no history: nobody weighted
	s.nodes["a"].exposure_s = 100000;          // fault-free, long history
	s.nodes["b"].exposure_s = 100000;
	s.nodes["b"].failures = 1;
	s.nodes["c"].exposure_s = 100; // two failures in little time
	s.nodes["c"].failures = 2;
	ck_assert(node_health_weights(FailureStats{}).empty());
	// Fleet: 200100 s / 3 failures = 66700 s.
	ck_assert(std::fabs(fleet_mtbf(s) - 66700) < 1e-6);
	auto w = node_health_weights(s);
	ck_assert(w.at("a") == 1.0);
	// b: (100000 + 66700) / 2 = 83350 > fleet: 1.
	ck_assert(w.at("b") == 1.0);
	// c: (100 + 66700) / 3 = 22266.7: a third of the fleet's.
	ck_assert(std::fabs(w.at("c") - (66800.0 / 3) / 66700) < 1e-9);
	// Failures without any exposure (jobs that died at once): 1 / (F + 1).
	FailureStats z;
	z.nodes["n1"].failures = 1;
	z.nodes["n2"].failures = 0;
	auto wz = node_health_weights(z);
	ck_assert(std::fabs(wz.at("n1") - 0.5) < 1e-12);
	ck_assert(wz.find("n2") == wz.end());
	// The estimator: prior = one failure's worth of exposure.
	ck_assert(mtbf_estimate(0, 0, 500) == 500);
	ck_assert(mtbf_estimate(1500, 1, 500) == 1000);
	ck_assert(mtbf_estimate(-1, -3, 500) == 500); // negative counts are taken as none
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("health_classify");
	TCase *tc = tcase_create("classify");
	tcase_add_test(tc, scanner_kinds_and_hosts);
	tcase_add_test(tc, scanner_reads_only_the_tail);
	tcase_add_test(tc, classes_from_logs);
	tcase_add_test(tc, classes_from_slurm_state);
	tcase_add_test(tc, decisions_and_budget);
	tcase_add_test(tc, output_paths);
	tcase_add_test(tc, failure_stats_mtbf);
	tcase_add_test(tc, health_weights_from_history);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
