// The job-log classifier on job output quoted in public bug reports
// (tests/data/health/joblogs, sources in tests/data/health/PROVENANCE): each
// test says what a person reading the log says about it. Counts in comments
// are grep -c on those files; node names are the ones the logs print, or,
// where a log prints none, the one node the test's job ran on.
#include "lib/health/classify.hpp"
#include "lib/health/error_kinds.hpp"
#include "lib/health/job_log.hpp"
#include "lib/health/kernel_log.hpp"
#include "lib/health/xid_table.hpp"

#include <string>

#include "tests/unit/check_main.hpp"

using namespace loom;
using namespace loom::health;

namespace {

JobLogScan scan(const std::string &name, const XidTable &xids = nvidia_default_xids())
{
	auto s = scan_job_log_file(test::data("health/joblogs/" + name), 8u << 20, 200, xids);
	ck_assert_msg(s.has_value(), "%s", s ? "" : s.error().str().c_str());
	return *s;
}

int count(const JobLogScan &s, LogFinding k)
{
	auto it = s.counts.find(k);
	return it == s.counts.end() ? 0 : it->second;
}

int lines_of(const JobLogScan &s, ErrorKind k)
{
	int n = 0;
	for (const auto &l : s.lines)
		n += l.error == k;
	return n;
}

JobEnd failed_job(std::vector<std::string> nodes)
{
	JobEnd j;
	j.job_id = 9411285;
	j.state = "FAILED";
	j.exit_code = 1;
	j.nodes = std::move(nodes);
	for (const auto &n : j.nodes)
		j.node_state[n] = "ALLOCATED";
	j.checkpointed = true; // would be requeued if the failure is the infrastructure's
	return j;
}

} // namespace

START_TEST(nccl_watchdog_timeout_is_a_collective_fault)
{
	// pytorch#134006: torchrun under srun; rank 0's watchdog caught a hung
	// all-gather; a task on workergpu008 had exited 1 before.
	JobLogScan s = scan("nccl-watchdog-slurm-pytorch-134006.log");
	ck_assert_int_eq(count(s, LogFinding::nccl_timeout),
			 1); // grep -c "Watchdog caught collective operation timeout"
	JobEnd j = failed_job({"workergpu007", "workergpu008"});
	Classification c = classify_job(j, s);
	ck_assert(c.cls == FailureClass::nccl_timeout);
	ck_assert(is_infrastructure(c.cls));
	ck_assert(c.culprits.empty()); // a hung collective does not say whose link hung
	JobDecision d = decide_job(j, c, 3);
	ck_assert(d.drain.empty() && d.requeue);
}
END_TEST

START_TEST(ib_completion_errors_blame_the_host_that_saw_them)
{
	// nccl#1405: three completion errors (status 12, retry exceeded), all on kp-ddp-worker-0.
	JobLogScan a = scan("nccl-ib-completion-nccl-1405.log");
	ck_assert_int_eq(count(a, LogFinding::network), 3); // grep -c "Got completion from peer"
	ck_assert_int_eq(lines_of(a, ErrorKind::ib_completion_error), 3);
	Classification ca = classify_job(failed_job({"kp-ddp-worker-0", "kp-ddp-worker-1"}), a);
	ck_assert(ca.cls == FailureClass::network_fault);
	ck_assert_int_eq(ca.culprits.size(), 1);
	ck_assert_sstr_eq(ca.culprits[0], "kp-ddp-worker-0");
	// nccl-tests#252: one completion error, on kolyoz2; kolyoz1 only closes its connections.
	JobLogScan b = scan("nccl-ib-completion-nccl-tests-252.log");
	ck_assert_int_eq(count(b, LogFinding::network), 1); // grep -c "NCCL WARN"
	Classification cb = classify_job(failed_job({"kolyoz1", "kolyoz2"}), b);
	ck_assert(cb.cls == FailureClass::network_fault);
	ck_assert_int_eq(cb.culprits.size(), 1);
	ck_assert_sstr_eq(cb.culprits[0], "kolyoz2");
}
END_TEST

START_TEST(application_cuda_errors_and_oom_drain_nothing)
{
	// pytorch#152780: the watchdog found an illegal memory access: the program's.
	JobLogScan ia = scan("cuda-illegal-address-pytorch-152780.log");
	ck_assert_int_eq(lines_of(ia, ErrorKind::cuda_illegal_address), 1); // grep -c "illegal memory access"
	JobEnd one = failed_job({"n1"});
	Classification c = classify_job(one, ia);
	ck_assert(c.cls == FailureClass::user_error);
	JobDecision d = decide_job(one, c, 3);
	ck_assert(d.drain.empty() && !d.requeue);
	// trl#3436: CUDA out of memory: the application asked for too much.
	JobLogScan gpu = scan("cuda-oom-trl-3436.log");
	ck_assert_int_eq(count(gpu, LogFinding::oom_gpu), 1); // grep -c "CUDA out of memory"
	c = classify_job(one, gpu);
	ck_assert(c.cls == FailureClass::oom);
	d = decide_job(one, c, 3);
	ck_assert(d.drain.empty() && !d.requeue);
	// K-Net#30: the step's cgroup OOM-killed it on gpu20-15: the job's memory, not the node.
	JobLogScan host = scan("slurm-oom-kill-k-net-30.log");
	ck_assert_int_eq(count(host, LogFinding::oom_host), 3); // 2 "oom-kill event", 1 "Out Of Memory"
	JobEnd k = failed_job({"gpu20-15"});
	c = classify_job(k, host);
	ck_assert(c.cls == FailureClass::oom);
	ck_assert(c.culprits.empty());
	d = decide_job(k, c, 3);
	ck_assert(d.drain.empty() && !d.requeue);
}
END_TEST

START_TEST(uncorrectable_ecc_blames_the_gpu_node)
{
	// sd-scripts#1434: uncorrectable ECC error on a one-node job; the lines name no host.
	JobLogScan s = scan("cuda-ecc-sd-scripts-1434.log");
	ck_assert_int_eq(count(s, LogFinding::gpu_fault), 2); // grep -c "uncorrectable ECC error"
	JobEnd one = failed_job({"h100-07"});
	Classification c = classify_job(one, s);
	ck_assert(c.cls == FailureClass::gpu_fault);
	ck_assert_int_eq(c.culprits.size(), 1);
	ck_assert_sstr_eq(c.culprits[0], "h100-07");
	ck_assert(decide_job(one, c, 3).requeue);
	// On two nodes the same lines cannot say which one it was.
	ck_assert(classify_job(failed_job({"h100-07", "h100-08"}), s).culprits.empty());
}
END_TEST

START_TEST(xid_lines_are_judged_by_the_xid_table)
{
	// open-gpu-kernel-modules#1151: Xid 79, the GPU fell off the bus: reboot, drain the node.
	JobLogScan x79 = scan("xid-79-open-gpu-kernel-modules-1151.log");
	ck_assert_int_eq(lines_of(x79, ErrorKind::xid_gpu), 1); // grep -c "NVRM: Xid"
	ck_assert_int_eq(count(x79, LogFinding::gpu_fault), 2); // grep -c "fallen off the bus"
	JobEnd n5 = failed_job({"n5"});
	Classification c = classify_job(n5, x79);
	ck_assert(c.cls == FailureClass::gpu_fault);
	ck_assert_int_eq(c.culprits.size(), 1);
	ck_assert_sstr_eq(c.culprits[0], "n5");
	ck_assert_int_eq(decide_job(n5, c, 3).drain.size(), 1);
	// vllm#5901: six Xid 13 (graphics exception) lines: the application's, no drain.
	JobLogScan x13 = scan("xid-13-vllm-5901.log");
	ck_assert_int_eq(lines_of(x13, ErrorKind::xid_application), 6); // grep -c "NVRM: Xid"
	ck_assert_int_eq(count(x13, LogFinding::gpu_fault), 0);
	c = classify_job(n5, x13);
	ck_assert(c.cls == FailureClass::user_error);
	ck_assert(decide_job(n5, c, 3).drain.empty());
	// A site that drains on Xid 13 gets a GPU fault from the same lines.
	XidTable strict = XidTable::nvidia_default();
	strict.set(13, XidAction::drain);
	ck_assert(classify_job(n5, scan("xid-13-vllm-5901.log", strict)).cls == FailureClass::gpu_fault);
	// chia-gigahorse#301: Xid 31 (restart_app), then 62 (reset_gpu), then eight
	// Xid 45 (no list names it: suspect). The 62 is the GPU's.
	JobLogScan mixed = scan("xid-31-62-45-chia-gigahorse-301.log");
	ck_assert_int_eq(lines_of(mixed, ErrorKind::xid_application), 1); // grep -c "): 31,"
	ck_assert_int_eq(lines_of(mixed, ErrorKind::xid_gpu), 1);         // grep -c "): 62,"
	ck_assert_int_eq(lines_of(mixed, ErrorKind::xid_suspect), 8);     // grep -c "): 45,"
	c = classify_job(n5, mixed);
	ck_assert(c.cls == FailureClass::gpu_fault);
	ck_assert_sstr_eq(c.culprits.at(0), "n5");
	XidTable lax = XidTable::nvidia_default();
	lax.set(62, XidAction::restart_app);
	ck_assert(classify_job(n5, scan("xid-31-62-45-chia-gigahorse-301.log", lax)).cls == FailureClass::user_error);
}
END_TEST

START_TEST(one_vocabulary)
{
	const XidTable &t = nvidia_default_xids();
	struct Case {
		const char *line;
		FailureClass cls;
		bool blames;
	} cases[] = {
		{"RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1191, unhandled system error, NCCL version 2.10.3",
		 FailureClass::user_error, false},
		{"NCCL error in: NCCLUtils.hpp:317, unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
		 FailureClass::user_error, false},
		{"NCCL error: remote process exited or there was a network error, NCCL version 2.14.3",
		 FailureClass::network_fault, false},
		{"[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE)",
		 FailureClass::nccl_timeout, false},
		{"NCCL communicator was aborted on rank 2.", FailureClass::user_error, false},
		{"n4:1:2 [0] NCCL WARN NET/IB : Got completion with error IBV_WC_RETRY_EXC_ERR",
		 FailureClass::network_fault, true},
		{"ibv_poll_cq: transport retry counter exceeded", FailureClass::network_fault, true},
		{"RuntimeError: CUDA error: an illegal memory access was encountered", FailureClass::user_error, false},
		{"RuntimeError: CUDA error: uncorrectable ECC error encountered", FailureClass::gpu_fault, true},
		{"RuntimeError: CUDA error: out of memory", FailureClass::oom, false},
		{"RuntimeError: CUDA error: unspecified launch failure", FailureClass::user_error, false},
		{"RuntimeError: CUDA error: device-side assert triggered", FailureClass::user_error, false},
		{"RuntimeError: CUDA error: GPU is lost", FailureClass::gpu_fault, true},
		{"slurmstepd: error: Detected 1 oom_kill event in StepId=1.batch.", FailureClass::oom, false},
		{"NVRM: Xid (PCI:0000:9b:00): 79, pid=1248209, name=python3, GPU has fallen off the bus.",
		 FailureClass::gpu_fault, true},
		{"NVRM: Xid (PCI:0000:9b:00): 43, pid=1248209, name=python3, Ch 00000008", FailureClass::user_error,
		 false},
	};
	for (const auto &k : cases) {
		auto kind = error_kind_of_line(k.line, t);
		ck_assert_msg(kind.has_value(), "%s", k.line);
		const ErrorKindInfo &info = error_kind_info(*kind);
		ck_assert_msg(failure_class_of(info.finding) == k.cls && info.blames_node == k.blames, "%s: %s", k.line,
			      info.name);
	}
	ck_assert(!error_kind_of_line("step 3: loss 2.0", t));
	ck_assert_sstr_eq(
		host_of_line("Aug 17 06:18:01 n2 kernel: NVRM: Xid (PCI:0000:9b:00): 79, GPU has fallen off the bus."),
		"n2");
	ck_assert_sstr_eq(host_of_line("Aug  7 06:18:01 gpu-7.ib kernel: NVRM: Xid"), "gpu-7.ib");
	ck_assert_sstr_eq(host_of_line("[Sun Feb 23 16:24:18 2025] NVRM: Xid"), "");
	// The kernel log's OOM kills are the same patterns.
	KernelLog k = parse_kernel_log("[ 12.5] Memory cgroup out of memory: Killed process 4242 (python)\n"
				       "[ 12.6] oom-kill:constraint=CONSTRAINT_MEMCG,task=python,pid=4242\n");
	ck_assert_int_eq(k.events.size(), 2);
	ck_assert_sstr_eq(k.events[0].kind, "oom_kill");
	ck_assert(k.events[0].text.rfind("Memory cgroup out of memory", 0) == 0);
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("health_joblogs");
	TCase *tc = tcase_create("joblogs");
	tcase_add_test(tc, nccl_watchdog_timeout_is_a_collective_fault);
	tcase_add_test(tc, ib_completion_errors_blame_the_host_that_saw_them);
	tcase_add_test(tc, application_cuda_errors_and_oom_drain_nothing);
	tcase_add_test(tc, uncorrectable_ecc_blames_the_gpu_node);
	tcase_add_test(tc, xid_lines_are_judged_by_the_xid_table);
	tcase_add_test(tc, one_vocabulary);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
