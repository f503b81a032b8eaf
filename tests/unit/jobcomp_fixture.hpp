// jobcomp/health's tests without Slurm: a fake Slurm that records drains,
// requeues and a replacement's calls, nodes as scontrol prints them, job
// records on the logs of tests/health/joblogs, a scratch directory; and the
// test cases test_health_jobcomp's other sources give its suite. It includes
// check_main.hpp after the standard headers, as check.h must come.
#pragma once

#include "lib/health/jobcomp.hpp"
#include "lib/health/jobcomp_worker.hpp"
#include "lib/health/slurm_ops.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/unit/check_main.hpp"

namespace loom::health::testing {

// A node as scontrol prints it (through the one parser).
inline SlurmNode slurm_node(const std::string &name, const std::string &state, const std::string &reason = "")
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
inline bool eventually(Cond cond, int timeout_ms = 10000)
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

inline std::string logs() { return test::srcdir() + "/tests/health/joblogs"; }

inline JobRecord job(uint32_t id, const std::string &log, std::vector<std::string> nodes, int exit_code = 1)
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

inline std::string temp_dir()
{
	char tmpl[] = "/tmp/loom-jobcomp.XXXXXX";
	char *d = ::mkdtemp(tmpl);
	ck_assert(d != nullptr);
	return d;
}

inline void rm(const std::string &d)
{
	std::string cmd = "rm -rf '" + d + "'";
	ck_assert_int_eq(std::system(cmd.c_str()), 0);
}

} // namespace loom::health::testing

// The worker: its preflight, backlog, stop and scontrol (test_health_jobcomp_worker.cpp).
TCase *jobcomp_worker_tests();
// Failed nodes replaced by spares (test_health_jobcomp_spares.cpp).
TCase *jobcomp_spare_tests();
