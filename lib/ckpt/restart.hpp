// loom ckpt: the restart budget.
//
// Each start of a job records, in <dir>/.loom-starts.json, its restart count
// and the newest checkpoint step it found. A restarted job runs while its
// restart count is within the budget and while the run before it made
// progress: a job that failed again without committing a new checkpoint
// since its last restart is held, with a reason, instead of looping. A hold
// asks a person to look; releasing the job (`scontrol release`) is their
// answer, so the first start after a held one runs.
#pragma once

#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loom::ckpt {

struct StartRecord {
	int64_t restart_count = 0;
	int64_t newest_step = -1; // -1: no checkpoint at that start
	double time = 0;
	std::string job_id;
	bool held = false; // this start was held instead of run
};

expected<std::vector<StartRecord>> parse_starts(std::string_view text, const std::string &source);
std::string starts_to_json(const std::vector<StartRecord> &starts);
// Read <dir>/.loom-starts.json (empty when absent), append or replace the
// record with the same restart count, write it back atomically.
expected<std::vector<StartRecord>> record_start(const std::string &dir, const StartRecord &r);

enum class StartVerdict { run, hold_budget, hold_no_progress };
struct StartDecision {
	StartVerdict verdict = StartVerdict::run;
	std::string reason; // for the hold; empty when run
};
// starts: the records before this start (this one not yet included).
// foreign_files: the directory holds files loom did not write (a framework's
// own checkpoints). With no loom checkpoint at any start, loom cannot tell
// progress from none there: such a job is not held for "no progress" (only
// the restart budget stops it), and spank_ckpt tells the job at its start.
StartDecision decide_start(int64_t restart_count, int64_t max_restarts, int64_t newest_step_now,
			   const std::vector<StartRecord> &starts, bool foreign_files = false);

} // namespace loom::ckpt
