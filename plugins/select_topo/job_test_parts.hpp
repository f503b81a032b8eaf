// select/topo's job_test (job_test.hpp) in parts: what the three sources of
// the select_p_job_test adapter share. job_test.cpp takes Slurm's call and
// picks the way it is answered; job_test_request.cpp reads the job's request
// (hints, the place::Request, the nodes offered); job_test_result.cpp
// answers it (the engine's choice offered to cons_tres, backfill's plan, a
// tier's class) and records what was placed.
#pragma once

#include "lib/place/engine.hpp"
#include "lib/util/log.hpp"
#include "plugins/select_topo/cons_tres.hpp"
#include "plugins/select_topo/slurm_view.hpp"
#include "plugins/select_topo/snapshot.hpp"

#include <chrono>
#include <ctime>
#include <string>

namespace loom::select_topo::job_test_parts {

// This thread's CPU time (us): what a job_test cost slurmctld, apart from
// the time its thread waited for a core.
inline double thread_cpu_us()
{
	timespec ts{};
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Slurm's call, passed on to cons_tres (as it came, or with another bitmap or mode).
struct Call {
	job_record_t *job;
	bitstr_t *bitmap;
	uint32_t min_nodes, max_nodes, req_nodes;
	uint16_t mode;
	const JobTestTail &tail;
	mutable double cons_tres_cpu_us = 0; // spent in cons_tres's job_test, every call of this one

	int forward(bitstr_t *b, uint16_t m) const
	{
		double c0 = thread_cpu_us();
		int rc = cons_tres_job_test(job, b, min_nodes, max_nodes, req_nodes, m, tail);
		cons_tres_cpu_us += thread_cpu_us() - c0;
		return rc;
	}
	int forward() const { return forward(bitmap, mode); }
};

// A bitmap freed when it goes out of scope (an exception from the engine
// leaves none behind).
struct OwnedBitmap {
	bitstr_t *b;
	explicit OwnedBitmap(bitstr_t *x) : b(x) {}
	OwnedBitmap(const OwnedBitmap &) = delete;
	OwnedBitmap &operator=(const OwnedBitmap &) = delete;
	~OwnedBitmap() { FREE_NULL_BITMAP(b); }
};

// Since job_test began (wall clock, and this thread's CPU time), and what
// of the node table was read (how many nodes, all of them or those that
// changed, how long it took).
struct Timer {
	std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
	double cpu0 = thread_cpu_us();
	Refresh read;
	double read_us = 0;

	double us() const
	{
		return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
	}
	double cpu_us() const { return thread_cpu_us() - cpu0; }
	std::string table() const
	{
		if (read.nodes == 0)
			return "node table unchanged";
		if (read.full)
			return strprintf("node table: %zu nodes read %.0f us", read.nodes, read_us);
		if (read.swept)
			return strprintf("changed: %zu nodes read %.0f us (%zu by the sweep)", read.nodes, read_us,
					 read.swept);
		return strprintf("changed: %zu nodes read %.0f us", read.nodes, read_us);
	}
};

// job_test_request.cpp: the job's request.
place::Hints job_hints(const JobAsk &ask);
place::Request make_request(const Snapshot &s, const JobAsk &ask, const place::Hints &hints, const Call &c,
			    size_t offered);
// The request as replayed by `loom place --explain`.
std::string replay_request(const Snapshot &s, place::Request req, const place::Allowed &allowed);
// The spare pool's rule: the spares this job may not use taken out of
// 'bitmap'; how many.
size_t withhold_spares(Snapshot &s, const JobAsk &ask, bitstr_t *bitmap);
// The job's required nodes (-w) into cons.required; false when one of them
// is outside the fabric.
bool required_in_fabric(const Snapshot &s, const JobAsk &ask, place::SlurmConstraints &cons);

// job_test_result.cpp: the answer.
// Backfill's WILL_RUN with the engine's nodes (will_run=engine).
int plan_will_run(Snapshot &s, const Call &c, const place::Request &req, const place::Allowed &allowed,
		  const place::SlurmConstraints &cons);
// A tier when Slurm chooses the nodes; false when the tier does not apply.
bool forward_by_tier(Snapshot &s, const Call &c, const JobAsk &ask, const place::Hints &hints, const std::string &why,
		     int &rc);
// RUN_NOW: the engine's candidates, best first, each offered to cons_tres.
int place_now(Snapshot &s, const Call &c, const place::Request &req, const place::Allowed &allowed,
	      const place::SlurmConstraints &cons, const Timer &t);

} // namespace loom::select_topo::job_test_parts
