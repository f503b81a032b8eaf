// loom health: judging a NodeSample. Pure functions, no I/O.
//
// Every check returns findings: which check, how bad (info, suspect, drain),
// and the evidence in words a person can act on ("GPU 4 (0000:9b:00): Xid 119
// x5: reset_gpu"). The verdict is the worst finding; its actions say what
// follows: "drain", or "suspect" + "checkpoint" (placement avoids the node and
// running checkpointed jobs are told to checkpoint now), plus hardware hints
// ("reset_gpu 4", "reboot").
#pragma once

#include "lib/health/config.hpp"
#include "lib/health/sample.hpp"

#include <string>
#include <vector>

namespace loom::health {

enum class Outcome { ok = 0, suspect = 1, drain = 2 };
const char *outcome_name(Outcome o);

struct Finding {
	std::string check;    // gpu_ecc, gpu_xid, ib_port, link_flaps ...
	Outcome severity = Outcome::ok; // ok = informational
	std::string evidence;
};

struct Verdict {
	Outcome outcome = Outcome::ok;
	std::vector<Finding> findings;
	std::vector<std::string> actions; // "drain", "suspect", "checkpoint", "reset_gpu 4", "reboot"
	// "loom: <check>: <evidence>" of the worst finding ("" when ok), at most
	// max_len characters (Slurm keeps reasons short).
	std::string reason(size_t max_len = 200) const;
	// Exit code of `loom health check`: 0 ok, 1 warn (suspect), 2 critical (drain).
	int exit_code() const { return static_cast<int>(outcome); }
};

// The checks, grouped by what they look at.
void judge_gpus(const NodeSample &s, const HealthConfig &c, std::vector<Finding> &out, std::vector<std::string> &actions);
void judge_xids(const NodeSample &s, const HealthConfig &c, std::vector<Finding> &out, std::vector<std::string> &actions);
void judge_network(const NodeSample &s, const HealthConfig &c, std::vector<Finding> &out);
void judge_host(const NodeSample &s, const HealthConfig &c, std::vector<Finding> &out);

// All of them, and the verdict.
Verdict judge(const NodeSample &s, const HealthConfig &c);

} // namespace loom::health
