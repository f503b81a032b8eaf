// loom health: what loom asks of Slurm, in one place.
//
// `loom health check --drain` (on a node, as HealthCheckProgram) and
// jobcomp/health's worker (in slurmctld) both go through this module: one
// parser of `scontrol show node`, one set of ownership rules, one way of
// calling scontrol (a deadline, a cancel, a cap on what is read back).
//
// Ownership (NHC's rules):
//   - loom drains with a reason that starts "loom:" and resumes only nodes
//     whose reason starts "loom:";
//   - a node drained by anyone else, a DOWN or not-responding node, a node
//     that is rebooting (REBOOT_REQUESTED / REBOOT_ISSUED), powering up or
//     down, or in maintenance is left alone by the health check: no drain,
//     no resume, no mark;
//   - jobcomp/health drains the culprits of a failed job unless the node is
//     already drained, rebooting, powering or in maintenance, or DOWN with
//     someone else's reason; a node Slurm itself set DOWN ("Not
//     responding", "Kill task failed", ...) under the job is drained, so
//     that it is not handed out again when its slurmd comes back;
//   - loom marks a node suspect in its Extra field, "loom:suspect:<check>:
//     <evidence>" (select/topo reads it; the mark's text is
//     lib/exchange/suspect_mark.hpp's), or in its Comment when Extra holds
//     someone else's note; it never overwrites another's note and clears
//     only a mark that it set.
//
// scontrol, not libslurm: the same binary serves every Slurm release loom
// supports (libslurm has no stable ABI across them), and a subprocess can be
// killed at its deadline or when slurmctld stops the worker; a libslurm RPC
// in slurmctld's own thread cannot.
#pragma once

#include "lib/util/expected.hpp"
#include "lib/util/subprocess.hpp"

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace loom::health {

// What `scontrol show node` says about one node.
struct SlurmNode {
	std::string name;
	std::string state;              // "IDLE+DRAIN", "MIXED+DRAIN+REBOOT_REQUESTED", "DOWN*"
	std::string base;               // "IDLE", "MIXED", "DOWN" ("*" and flags removed)
	std::vector<std::string> flags; // "DRAIN", "REBOOT_REQUESTED", ... as printed
	bool not_responding = false;    // "*" after the base state
	std::string reason;             // without the " [user@time]" suffix
	std::string reason_by;          // the user of that suffix ("root", "slurm"), if any
	std::string extra, comment;     // free text, whole lines
	int gres_gpus = -1;             // GPUs in Gres= ("gpu:h100:8(S:0-1)" -> 8); -1: no gpu Gres

	bool has(std::string_view flag) const;
	bool drained() const { return has("DRAIN"); } // draining or drained
	bool drained_by_loom() const { return drained() && reason.rfind("loom:", 0) == 0; }
	// DOWN, not responding, rebooting, powering, in maintenance: nobody's to touch.
	bool out_of_our_hands() const;
	// A reason Slurm's daemons set themselves ("Not responding", "Kill task
	// failed", "Node unexpectedly rebooted", ...), or none.
	bool reason_is_slurms() const;
	// jobcomp/health's rule (above): may the culprit of a failed job be drained?
	bool may_drain_after_job_failure() const;
	// Where loom's suspect mark is: "extra", "comment" or "" (none).
	std::string suspect_field() const;
	std::string suspect_mark() const; // its text, "" when none
};

// Every "NodeName=" record of `scontrol show node` (multi-line form, any
// release from 22.05). Records without a State= line are errors.
expected<std::map<std::string, SlurmNode>> parse_show_node(std::string_view text);
// The one node 'name' of that output.
expected<SlurmNode> parse_show_node(std::string_view text, const std::string &name);

// The operations. Every call has a deadline; while 'cancel' reads true calls
// fail at once ("cancelled").
class SlurmOps {
public:
	virtual ~SlurmOps() = default;
	// Nodes Slurm does not know are missing from the map (not an error).
	virtual expected<std::map<std::string, SlurmNode>> show_nodes(const std::vector<std::string> &nodes) = 0;
	virtual status drain(const std::string &node, const std::string &reason) = 0;
	virtual status set_reason(const std::string &node, const std::string &reason) = 0;
	virtual status resume(const std::string &node) = 0;
	// field: "extra" or "comment"; value "" clears it.
	virtual status set_note(const std::string &node, const std::string &field, const std::string &value) = 0;
	virtual status requeue(uint32_t job_id) = 0;
	virtual status hold(uint32_t job_id) = 0;
	// A replacement's reservation (spares.hpp): 'nodes' for 'user' from now,
	// for duration_s (0: unlimited), ending itself a minute after its last
	// job (PURGE_COMP); created over the jobs still on the nodes (IGNORE_JOBS).
	struct Reservation {
		std::string name, nodes, user;
		int64_t duration_s = 0;
	};
	virtual status create_reservation(const Reservation &r)
	{
		return unexpected("create reservation " + r.name, "not supported here");
	}
	virtual status delete_reservation(const std::string &name)
	{
		return unexpected("delete reservation " + name, "not supported here");
	}
	// Requeued and held (so that nothing starts it before update_job), then released.
	virtual status requeue_hold(uint32_t job_id)
	{
		return unexpected("requeuehold " + std::to_string(job_id), "not supported here");
	}
	virtual status release(uint32_t job_id)
	{
		return unexpected("release " + std::to_string(job_id), "not supported here");
	}
	// settings: "ReservationName=x", "AdminComment=..." (one argv word each).
	// When the last running job on each of these nodes reaches its time
	// limit (seconds since the epoch; INT64_MAX: a job without one). A node
	// with no running job is absent. Unknown by default: a caller must not
	// read an empty answer as "free soon".
	virtual expected<std::map<std::string, int64_t>> jobs_end(const std::vector<std::string> &nodes)
	{
		(void)nodes;
		return unexpected("jobs_end", "not available");
	}
	virtual status update_job(uint32_t job_id, const std::vector<std::string> &settings)
	{
		(void)settings;
		return unexpected("update job " + std::to_string(job_id), "not supported here");
	}
	virtual void set_cancel(const std::atomic<bool> *cancel) { (void)cancel; }
	// Calls that failed because 'cancel' read true (so a caller can tell a
	// job cut short by a stop from one that was handled).
	virtual uint64_t cancelled_calls() const { return 0; }
};

class ScontrolOps : public SlurmOps {
public:
	ScontrolOps(std::string scontrol, int timeout_s) : scontrol_(std::move(scontrol)), timeout_(timeout_s) {}
	expected<std::map<std::string, SlurmNode>> show_nodes(const std::vector<std::string> &nodes) override;
	status drain(const std::string &node, const std::string &reason) override;
	status set_reason(const std::string &node, const std::string &reason) override;
	status resume(const std::string &node) override;
	status set_note(const std::string &node, const std::string &field, const std::string &value) override;
	status requeue(uint32_t job_id) override;
	status hold(uint32_t job_id) override;
	status create_reservation(const Reservation &r) override;
	status delete_reservation(const std::string &name) override;
	status requeue_hold(uint32_t job_id) override;
	status release(uint32_t job_id) override;
	status update_job(uint32_t job_id, const std::vector<std::string> &settings) override;
	// squeue, next to scontrol, with SLURM_TIME_FORMAT=%s.
	expected<std::map<std::string, int64_t>> jobs_end(const std::vector<std::string> &nodes) override;
	std::vector<std::string> jobs_end_argv(const std::vector<std::string> &nodes) const;
	// The argv of create_reservation, for logs and tests.
	std::vector<std::string> reservation_argv(const Reservation &r) const;
	void set_cancel(const std::atomic<bool> *cancel) override { cancel_ = cancel; }
	uint64_t cancelled_calls() const override { return cut_.load(); }
	// The argv of each call, for logs and tests.
	std::vector<std::string> update_argv(const std::string &node, const std::vector<std::string> &settings) const;

private:
	status update(const std::vector<std::string> &argv);
	expected<loom::CommandResult> run(const std::vector<std::string> &argv, size_t max_output);
	std::string scontrol_;
	int timeout_;
	const std::atomic<bool> *cancel_ = nullptr;
	std::atomic<uint64_t> cut_{0};
};

} // namespace loom::health
