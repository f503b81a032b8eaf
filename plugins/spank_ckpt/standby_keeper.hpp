// spank_ckpt: the batch step's keeper of a job's standby nodes
// (lib/ckpt/standby_plan.hpp).
//
// A thread beside the checkpoint coordinator, on the batch host, as root. It
// judges the job's active nodes every poll period and whenever a step's srun
// says it ended (ended.<step> in the standby directory): a node Slurm took
// out of the job or set DOWN, and the infrastructure faults that
// `loom health classify` (jobcomp/health's classifier) finds in the step's
// part of the job's output, naming a host. On a culprit it drains the node
// with a "loom: standby:" reason, ends the job's steps, releases the node
// from the job, takes the first standby, and answers each ended step with a
// verdict (verdict.<step>; every step whose srun said it started,
// started.<step>, gets one when it ends): its srun starts again on the new layout
// (standby_srun.hpp). Every other ended step is answered "no relaunch" at
// once. No standby left: the answer is no relaunch, and the failure takes
// the requeue path jobcomp/health has always taken.
#pragma once

#include "lib/ckpt/progress.hpp"
#include "lib/ckpt/standby_plan.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <sys/types.h>
#include <thread>
#include <vector>

namespace loom::spank_ckpt {

struct KeeperConfig {
	uint32_t job_id = 0;
	uid_t uid = 0;
	gid_t gid = 0;
	std::string dir; // the job's standby directory (created here, the job user's, 0700)
	std::string scontrol, loom, batch_host;
	ckpt::StandbyLayout layout;
	std::vector<std::string> cpus_per_node; // SLURM_JOB_CPUS_PER_NODE per node of layout.job (may be empty)
	int poll_s = 2;
	std::string ckpt_dir; // where the ranks' progress reports are (empty: none)
	ckpt::HangRule hang;
};

// What the keeper saw on the job's nodes: the first culprit among its active nodes.
struct Evidence {
	std::string culprit, cls, evidence;
};

class StandbyKeeper {
public:
	~StandbyKeeper() { stop(); }
	void start(KeeperConfig c);
	// Progress and hangs: the ranks' reports (lib/exchange/progress_report.hpp)
	// under ckpt_dir, judged by ckpt::ProgressJudge; a hang names the rank
	// that stopped and its node is replaced (marked suspect, not drained: a
	// stopped process is no proof of a broken node).
	void stop();
	bool running() const { return thread_.joinable(); }

private:
	void run();
	bool open_dir();
	std::vector<int64_t> ended_unanswered();
	std::vector<int64_t> unanswered(const std::string &kind);
	std::set<std::string> names();
	void clear();
	void settle_output();
	void post_note(const std::string &prefix, const std::string &note);
	Evidence watch_progress();
	void mark_straggler(int rank, const std::string &node, const std::string &why);
	void mark_suspect(const std::string &node, const std::string &check, const std::string &evidence);
	bool release(const std::string &culprit, const std::vector<std::string> &rest);
	bool in_job(const std::string &node);
	Evidence gather();
	bool recover(const Evidence &e, const std::vector<int64_t> &ended);
	void answer(int64_t step, bool relaunch, const std::string &why);
	std::vector<int64_t> running_steps();

	KeeperConfig c_;
	int dirfd_ = -1;
	int generation_ = 0;
	uint64_t log_from_ = 0;
	std::string std_out_, std_err_;
	std::set<std::string> handled_; // culprits already acted on (or that could not be)
	std::set<int64_t> relaunch_;    // steps of the last replacement whose srun has not ended yet
	std::string replaced_;          // that replacement, for their verdicts
	ckpt::ProgressJudge judge_;
	double gen_start_ = 0;     // reports older than the last (re)start are the last run's
	std::set<int> stragglers_; // ranks named already
	bool hang_told_ = false;
	std::mutex mu_;
	std::condition_variable cv_;
	bool stop_ = false;
	std::thread thread_;
};

} // namespace loom::spank_ckpt
