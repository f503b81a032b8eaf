// spank_ckpt: the few libslurm calls the plugin makes from slurmstepd,
// looked up at run time (dlsym) so that the plugin loads in every process
// that reads plugstack.conf, and degrades with a message where one is missing.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>

namespace loom::spank_ckpt {

// The job's end time (start + time limit); 0 when unknown or unlimited.
time_t job_end_time(uint32_t job_id, std::string *error);
// How often the job was restarted (requeued); -1 when unknown.
int64_t job_restart_count(uint32_t job_id, std::string *error);
// The job names its nodes (-w/--nodelist): it cannot move off one. False when unknown.
bool job_names_nodes(uint32_t job_id, std::string *error);
// Requeue the job (it goes back to PENDING and restarts with SLURM_RESTART_COUNT+1).
bool requeue_job(uint32_t job_id, std::string *error);
// Put 'note' (lib/ckpt/job_note.hpp) in the job's AdminComment, keeping its
// other segments; nothing is sent when it is there already.
bool note_job(uint32_t job_id, const std::string &note, std::string *error);
// Put 'segment' (starting with 'prefix') in the job's AdminComment in place
// of the one with that prefix (lib/util/admin_comment.hpp).
bool note_segment(uint32_t job_id, const std::string &prefix, const std::string &segment, std::string *error);
// Requeue and hold the job, with 'reason' in its Comment.
bool hold_job(uint32_t job_id, const std::string &reason, std::string *error);

} // namespace loom::spank_ckpt
