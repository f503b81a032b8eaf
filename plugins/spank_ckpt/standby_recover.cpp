#include "plugins/spank_ckpt/standby_keeper.hpp"

#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/json.hpp"
#include "lib/util/log.hpp"
#include "lib/util/subprocess.hpp"
#include "plugins/spank_ckpt/slurm_api.hpp"
#include "plugins/spank_ckpt/standby_calls.hpp"

#include "lib/exchange/suspect_mark.hpp"
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace loom::spank_ckpt {

using namespace standby;

// The job's record of its replacements (AdminComment).
void StandbyKeeper::post_note(const std::string &prefix, const std::string &note)
{
	std::string err;
	if (!note_segment(c_.job_id, prefix, note, &err))
		log_warning("job %u: cannot note the replacement in its AdminComment: %s", c_.job_id, err.c_str());
}

// srun's I/O thread may still be writing the step's last lines while its

std::vector<int64_t> StandbyKeeper::running_steps()
{
	std::vector<int64_t> steps;
	auto out = call({sibling(c_.scontrol, "squeue"), "-h", "-s", "-j", std::to_string(c_.job_id), "-o", "%i"});
	if (!out)
		return steps;
	std::string prefix = std::to_string(c_.job_id) + ".";
	for (const auto &line : split_lines(*out)) {
		std::string id(trim(line));
		if (id.rfind(prefix, 0) == 0)
			if (auto s = parse_int(id.substr(prefix.size()), 0, INT32_MAX); s)
				steps.push_back(*s);
	}
	return steps;
}

bool StandbyKeeper::recover(const Evidence &e, const std::vector<int64_t> &ended)
{
	handled_.insert(e.culprit);
	auto r = ckpt::replace_node(c_.layout, e.culprit, c_.batch_host);
	if (!r.done) {
		log_info("job %u: %s on %s (%s): %s: the job goes the requeue path", c_.job_id, e.cls.c_str(),
			 e.culprit.c_str(), e.evidence.c_str(), r.why.c_str());
		return false;
	}
	std::string job = std::to_string(c_.job_id);
	std::string reason = "loom: standby: " + e.cls + ": job " + job + ": " + e.evidence;
	if (reason.size() > 200)
		reason.resize(200);
	// The record first: without slurmdbd, Slurm refuses every update of a
	// job that changed size (its db_index stays unset, proc_req.c), and a
	// node set DOWN leaves the job.
	std::string what = e.culprit + " -> " + r.taken + " (" + e.cls + ")";
	post_note("loom standby: ", "loom standby: " + what + ", restart " + std::to_string(generation_ + 1) +
					    " in the allocation, " + std::to_string(r.after.standby.size()) +
					    " standby left");
	// A node that stopped answering is set DOWN: Slurm takes it out of the
	// --no-kill job and ends the step on it at once, instead of after
	// SlurmdTimeout. DRAIN keeps it out when its slurmd comes back.
	if (e.cls == "node_failure")
		if (auto st = call({c_.scontrol, "update", "NodeName=" + e.culprit, "State=DOWN", "Reason=" + reason});
		    !st)
			log_warning("job %u: cannot set %s down: %s", c_.job_id, e.culprit.c_str(),
				    st.error().str().c_str());
	if (e.cls == "hang") // a stopped process is no proof of a broken node: marked, not drained
		mark_suspect(e.culprit, "hang", e.evidence);
	else if (auto st = call({c_.scontrol, "update", "NodeName=" + e.culprit, "State=DRAIN", "Reason=" + reason});
		 !st)
		log_warning("job %u: cannot drain %s: %s", c_.job_id, e.culprit.c_str(), st.error().str().c_str());
	// The steps end on every node: a step's ranks cannot go on without the culprit's.
	auto steps = running_steps();
	for (int64_t s : steps)
		(void)call({sibling(c_.scontrol, "scancel"), "--signal=KILL", job + "." + std::to_string(s)});
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(settle_s);
	while (!running_steps().empty() && std::chrono::steady_clock::now() < deadline)
		std::this_thread::sleep_for(std::chrono::milliseconds(200));
	// What the job holds now: Slurm may have let the culprit go itself.
	if (r.release && in_job(e.culprit) && !release(e.culprit, r.after.job))
		r = ckpt::replace_node(c_.layout, e.culprit, e.culprit); // it stays in the job, excluded
	if (r.release) {
		auto at = std::find(c_.layout.job.begin(), c_.layout.job.end(), e.culprit) - c_.layout.job.begin();
		if (static_cast<size_t>(at) < c_.cpus_per_node.size())
			c_.cpus_per_node.erase(c_.cpus_per_node.begin() + at);
	}
	c_.layout = r.after;
	generation_++;
	judge_ = ckpt::ProgressJudge(c_.hang); // the new run's reports start afresh
	gen_start_ = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
	log_from_ = file_size(std_out_);
	// Every step that was running starts again: those whose srun has ended
	// now, the others when it does (their sruns said they started).
	replaced_ = what;
	auto started = unanswered("started.");
	relaunch_.insert(started.begin(), started.end());
	relaunch_.insert(steps.begin(), steps.end());
	for (int64_t s : unanswered("ended.")) {
		relaunch_.erase(s);
		answer(s, true, what);
	}
	for (int64_t s : ended)
		if (relaunch_.erase(s))
			answer(s, true, what);
	log_info("job %u: %s: %s: %s; its steps start again on %s (restart %d in the allocation)", c_.job_id,
		 e.evidence.c_str(), reason.c_str(), r.why.c_str(), hostlist_compress(c_.layout.active).c_str(),
		 generation_);
	return true;
}

// Whether the job still holds 'node' (true when Slurm cannot be asked).
bool StandbyKeeper::in_job(const std::string &node)
{
	auto job = call({c_.scontrol, "-o", "show", "job", std::to_string(c_.job_id)});
	auto nodes =
		job ? hostlist_expand(field(*job, "NodeList")) : expected<std::vector<std::string>>(unexpected(""));
	return !nodes || std::find(nodes->begin(), nodes->end(), node) != nodes->end();
}

// Remove the culprit from the job (scontrol update JobId= NodeList=, once its
// steps are gone); false when Slurm keeps it.
bool StandbyKeeper::release(const std::string &culprit, const std::vector<std::string> &rest)
{
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(settle_s);
	for (;;) {
		auto st = call({c_.scontrol, "update", "JobId=" + std::to_string(c_.job_id),
				"NodeList=" + hostlist_compress(rest)});
		if (st)
			return true;
		// Refused for good: an earlier resize without slurmdbd, a node Slurm will not let go.
		std::string why = st.error().str();
		if (std::chrono::steady_clock::now() >= deadline || why.find("DB index") != std::string::npos) {
			log_warning("job %u: %s stays in the job, excluded from its steps: %s", c_.job_id,
				    culprit.c_str(), why.c_str());
			return false;
		}
		std::this_thread::sleep_for(std::chrono::milliseconds(500));
	}
}

} // namespace loom::spank_ckpt
