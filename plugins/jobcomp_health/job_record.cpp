#include "plugins/jobcomp_health/job_record.hpp"

#include "lib/exchange/ckpt_job_env.hpp"
#include "lib/exchange/job_note.hpp"
#include "plugins/common/slurm_internal.hpp"

#include <string>
#include <vector>

#include <sys/wait.h>

namespace loom::jobcomp_health {
namespace {

std::string str(const char *s) { return s ? s : ""; }

} // namespace

health::JobRecord to_job_record(const job_record_t *job)
{
	health::JobRecord r;
	health::JobEnd &e = r.end;
	e.job_id = job->job_id;
	uint32_t base = job->job_state & JOB_STATE_BASE;
	e.state = str(job_state_string(base));
	if (WIFSIGNALED(job->exit_code))
		e.signal = WTERMSIG(job->exit_code);
	else if (WIFEXITED(job->exit_code))
		e.exit_code = WEXITSTATUS(job->exit_code);
	if (job->nodes && job->nodes[0]) {
		struct hostlist *hl = hostlist_create(job->nodes);
		if (hl) {
			char *h;
			while ((h = hostlist_shift(hl))) {
				e.nodes.emplace_back(h);
				free(h);
			}
			hostlist_destroy(hl);
		}
	}
	e.restart_count = job->restart_cnt;
	e.start_time = static_cast<int64_t>(job->start_time);
	e.end_time = static_cast<int64_t>(job->end_time);
	r.uid = job->user_id;
	r.job_name = str(job->name);
	r.admin_comment = str(job->admin_comment);
	if (job->time_limit != NO_VAL && job->time_limit != INFINITE)
		r.time_limit_s = static_cast<int64_t>(job->time_limit) * 60;
	// What sbatch --ckpt set in the job control environment (lib/exchange/ckpt_job_env.hpp).
	std::vector<std::string> env;
	for (uint32_t i = 0; job->spank_job_env && i < job->spank_job_env_size; i++)
		if (job->spank_job_env[i])
			env.emplace_back(job->spank_job_env[i]);
	exchange::CkptRequest ck = exchange::ckpt_request_from_env(env);
	e.checkpointed = ck.enabled;
	r.ckpt_max_restarts = ck.max_restarts;
	r.gpu_class = health::gpu_class_of_request(str(job->tres_per_node));
	if (auto note = exchange::find_job_note(str(job->system_comment)))
		r.placed = *note;
	if (job->array_task_id != NO_VAL) {
		r.array_job_id = job->array_job_id;
		r.array_task_id = job->array_task_id;
	}
	// Slurm requeued the job itself (JobRequeue after a node failure).
	r.already_requeued = (job->job_state & JOB_REQUEUE) || base == JOB_PENDING;
	if (job->details) {
		// Only batch jobs can be requeued; the flag is --requeue / JobRequeue.
		e.requeue_allowed = job->batch_flag && job->details->requeue;
		r.work_dir = str(job->details->work_dir);
		r.pinned = job->details->req_nodes && job->details->req_nodes[0];
		r.std_out_pattern = str(job->details->std_out);
		r.std_err_pattern = str(job->details->std_err);
	}
	if (!job->batch_flag)
		r.end.checkpointed = false;
	return r;
}

} // namespace loom::jobcomp_health
