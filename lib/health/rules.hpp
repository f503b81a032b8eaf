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
#include <string_view>
#include <vector>

namespace loom::health {

// In order of weight: a drain finding outweighs a check that cannot judge
// (what is seen is enough), which outweighs a suspect one (a node that cannot
// be judged is never reported as merely suspect, let alone ok).
enum class Outcome { ok = 0, suspect = 1, unknown = 2, drain = 3 };
const char *outcome_name(Outcome o);
// Nagios plugin codes, as `loom health check` exits: 0 ok, 1 warning
// (suspect), 2 critical (drain), 3 unknown (cannot judge).
int outcome_exit_code(Outcome o);

struct Finding {
	std::string check;              // gpu_ecc, gpu_xid, ib_port, link_flaps ...
	Outcome severity = Outcome::ok; // ok = informational
	std::string evidence;
	double eta_s = 0; // a prediction: seconds from the check to the failure (0: none)
};

struct Verdict {
	Outcome outcome = Outcome::ok;
	std::vector<Finding> findings;
	std::vector<std::string> actions; // "drain", "suspect", "checkpoint", "reset_gpu 4", "reboot"
	// "loom: <check>: <evidence>" of the worst finding ("" when ok), at most
	// max_len characters (Slurm keeps reasons short).
	std::string reason(size_t max_len = 200) const;
	// The worst finding (the first of the worst), nullptr when ok.
	const Finding *worst() const;
	// The soonest predicted failure among the findings, seconds (0: none).
	double eta_s() const;
	// Exit code of `loom health check` (outcome_exit_code).
	int exit_code() const { return outcome_exit_code(outcome); }
};

// The checks, grouped by what they look at.
void judge_gpus(const NodeSample &s, const HealthConfig &c, std::vector<Finding> &out,
		std::vector<std::string> &actions);
void judge_xids(const NodeSample &s, const HealthConfig &c, std::vector<Finding> &out,
		std::vector<std::string> &actions);
void judge_network(const NodeSample &s, const HealthConfig &c, std::vector<Finding> &out);
// The checks judge_network makes of a node's own fabric link (its ports'
// state, rate, error counters, flaps) are exchange::is_link_check's
// (lib/exchange/suspect_mark.hpp): a suspect mark of one of them is what
// select/topo counts as a degraded link of the node's leaf.
void judge_host(const NodeSample &s, const HealthConfig &c, std::vector<Finding> &out);

// All of them, and the verdict.
Verdict judge(const NodeSample &s, const HealthConfig &c);

} // namespace loom::health
