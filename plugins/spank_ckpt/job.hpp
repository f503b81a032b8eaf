// spank_ckpt: what the plugin does for one job step in slurmstepd, free of
// SPANK types. The plugin file gathers JobFacts from Slurm and calls these.
//
// prepare_job() has loom-ckpt-helper (ckpt::run_helper) create the checkpoint
// directory as the job's user, find the newest complete checkpoint and apply
// the restart budget (batch step); it computes the interval and returns the
// LOOM_CKPT_* environment. The coordinator reads the newest checkpoint
// through the helper too: slurmstepd's forked children only exec.
// JobCoordinator runs the coordinator of the batch step: it asks the
// application to checkpoint (ask_checkpoint: the request file, written as the
// user through the helper, then the signal to the catching processes of the
// batch step but srun), requeues after a checkpoint taken before the time limit, and
// stops with the step.
#pragma once

#include "lib/ckpt/coordinator.hpp"
#include "lib/ckpt/options.hpp"
#include "lib/ckpt/restart.hpp"
#include "lib/ckpt/safe_dir.hpp"
#include "lib/util/expected.hpp"
#include "plugins/spank_ckpt/signal_tasks.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

namespace loom::spank_ckpt {

struct JobFacts {
	uint32_t job_id = 0;
	bool batch_step = false;
	ckpt::Credentials cred;
	std::string user;
	int64_t restart_count = 0;
	std::string node;     // this node's name
	std::string nodelist; // SLURM_JOB_NODELIST
};

struct JobSetup {
	std::string dir;
	std::string latest; // path of the newest complete checkpoint, empty if none
	int64_t newest_step = -1;
	double newest_write_s = 0;
	double mtbf_s = 0;
	int64_t interval_s = 0;
	ckpt::StartDecision decision;
	std::map<std::string, std::string> env;
	// The batch step's start: entries of dir loom did not write (the first
	// few, and how many), which loom cannot see as checkpoints.
	std::vector<std::string> foreign;
	int64_t foreign_count = 0;
};
// The line the job reads at its start when its directory holds files loom
// did not write; empty when there are none.
std::string foreign_notice(const JobSetup &s);

expected<JobSetup> prepare_job(const ckpt::SiteConfig &site, const ckpt::JobOptions &opts, const JobFacts &facts);

// What one request to checkpoint reached.
struct AskOutcome {
	int64_t seq = 0; // the request file's new seq; 0: not written
	std::string request_error;
	Signalled signalled;
};
// Write the request to <dir>/.loom-request through the helper, as the job's
// user, then signal the processes of the batch step that catch 'sig', srun
// excepted.
AskOutcome ask_checkpoint(const std::string &helper, const ckpt::Credentials &cred, const std::string &dir,
			  ckpt::Ask ask, pid_t batch_pid, int sig);

struct LogLine {
	bool warning = false;
	std::string text;
};
// What the coordinator logs for an outcome: the request's seq or a warning
// naming its error, how many processes were signalled, that srun was not.
// "No process handles the signal" is a warning only when the request file
// was not written either: then nothing reached the program.
std::vector<LogLine> ask_log(uint32_t job_id, ckpt::Ask ask, const std::string &why, int sig, const std::string &dir,
			     const AskOutcome &o);

class JobCoordinator {
public:
	void start(const ckpt::SiteConfig &site, const ckpt::JobOptions &opts, const JobFacts &facts,
		   const JobSetup &setup, pid_t batch_pid);
	void stop();
	bool running() const { return coordinator_ && coordinator_->running(); }

private:
	std::unique_ptr<ckpt::Coordinator> coordinator_;
};

} // namespace loom::spank_ckpt
