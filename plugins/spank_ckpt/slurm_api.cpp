#include "plugins/spank_ckpt/slurm_api.hpp"

#include "lib/ckpt/job_note.hpp"
#include "lib/util/admin_comment.hpp"

#include <cstring>
#include <dlfcn.h>
#include <tuple>
#include <type_traits>

extern "C" {
#include <slurm/slurm.h>
}

namespace loom::spank_ckpt {
namespace {

template <typename F>
F lookup(const char *name, std::string *error)
{
	void *p = ::dlsym(RTLD_DEFAULT, name);
	if (!p && error)
		*error = std::string(name) + " is not available in this process";
	return reinterpret_cast<F>(p);
}

std::string slurm_error_text(int rc)
{
	auto strerror_fn = lookup<char *(*)(int)>("slurm_strerror", nullptr);
	auto errno_fn = lookup<int (*)(void)>("slurm_get_errno", nullptr);
	int e = errno_fn ? errno_fn() : rc;
	return strerror_fn ? strerror_fn(e) : "error " + std::to_string(e);
}

// 26.05 names a job by slurm_step_id_t in the client API where earlier
// releases take its numeric id: the argument is built for the prototype this
// release's <slurm/slurm.h> declares, and the function is called through it.
template <typename F>
struct params;
template <typename R, typename... A>
struct params<R (*)(A...)> {
	template <size_t I>
	using type = std::tuple_element_t<I, std::tuple<A...>>;
};
template <typename T>
T job_ref(uint32_t job_id)
{
	if constexpr (std::is_integral_v<T>) {
		return static_cast<T>(job_id);
	} else {
		T id{};
		id.job_id = job_id;
		id.step_het_comp = NO_VAL;
		id.step_id = NO_VAL;
		return id;
	}
}
using load_job_fn = decltype(&::slurm_load_job);
using requeue_fn = decltype(&::slurm_requeue);
auto load_job_ref(uint32_t job_id) { return job_ref<params<load_job_fn>::type<1>>(job_id); }
auto requeue_ref(uint32_t job_id) { return job_ref<params<requeue_fn>::type<0>>(job_id); }

} // namespace

namespace {

// Load one job's record and hand it to 'fn'; false with error when it cannot be loaded.
template <typename F>
bool with_job(uint32_t job_id, std::string *error, F &&fn)
{
	auto load = lookup<load_job_fn>("slurm_load_job", error);
	auto free_msg = lookup<void (*)(job_info_msg_t *)>("slurm_free_job_info_msg", error);
	if (!load || !free_msg)
		return false;
	job_info_msg_t *msg = nullptr;
	if (load(&msg, load_job_ref(job_id), SHOW_ALL) != SLURM_SUCCESS || !msg) {
		if (error)
			*error = "slurm_load_job: " + slurm_error_text(-1);
		return false;
	}
	bool found = msg->record_count > 0;
	if (found)
		fn(msg->job_array[0]);
	else if (error)
		*error = "slurm_load_job: no record of the job";
	free_msg(msg);
	return found;
}

} // namespace

int64_t job_restart_count(uint32_t job_id, std::string *error)
{
	int64_t n = -1;
	with_job(job_id, error, [&](const slurm_job_info_t &j) { n = j.restart_cnt; });
	return n;
}

time_t job_end_time(uint32_t job_id, std::string *error)
{
	time_t end = 0;
	with_job(job_id, error, [&](const slurm_job_info_t &j) {
		if (j.time_limit != INFINITE && j.time_limit != NO_VAL)
			end = j.end_time;
	});
	return end;
}

bool job_names_nodes(uint32_t job_id, std::string *error)
{
	bool named = false;
	with_job(job_id, error, [&](const slurm_job_info_t &j) { named = j.req_nodes && j.req_nodes[0]; });
	return named;
}

bool requeue_job(uint32_t job_id, std::string *error)
{
	auto requeue = lookup<requeue_fn>("slurm_requeue", error);
	if (!requeue)
		return false;
	if (requeue(requeue_ref(job_id), 0) != SLURM_SUCCESS) {
		if (error)
			*error = "slurm_requeue: " + slurm_error_text(-1);
		return false;
	}
	return true;
}

namespace {

// slurm_update_job2 of one job's Comment or AdminComment. The job is named
// by job_id_str, which every release has (25.05 dropped the numeric job_id
// of job_desc_msg_t; slurm_update_job warns about job_id_str).
bool update_comment(uint32_t job_id, const std::string &text, bool admin, std::string *error)
{
	auto init = lookup<void (*)(job_desc_msg_t *)>("slurm_init_job_desc_msg", error);
	auto update = lookup<int (*)(job_desc_msg_t *, job_array_resp_msg_t **)>("slurm_update_job2", error);
	auto free_resp = lookup<void (*)(job_array_resp_msg_t *)>("slurm_free_job_array_resp", error);
	if (!init || !update || !free_resp)
		return false;
	job_desc_msg_t desc;
	init(&desc);
	std::string id = std::to_string(job_id);
	desc.job_id_str = id.data();
	std::string value = text;
	(admin ? desc.admin_comment : desc.comment) = value.data();
	job_array_resp_msg_t *resp = nullptr;
	bool ok = update(&desc, &resp) == SLURM_SUCCESS;
	if (!ok && error)
		*error = std::string("slurm_update_job2 (") + (admin ? "AdminComment" : "Comment") +
			 "): " + slurm_error_text(-1);
	if (resp)
		free_resp(resp);
	return ok;
}

} // namespace

bool note_job(uint32_t job_id, const std::string &note, std::string *error)
{
	std::string existing;
	bool loaded = with_job(job_id, error,
			       [&](const slurm_job_info_t &j) { existing = j.admin_comment ? j.admin_comment : ""; });
	if (!loaded)
		return false;
	std::string merged = ckpt::merge_job_note(existing, note);
	return merged == existing || update_comment(job_id, merged, true, error);
}

bool note_segment(uint32_t job_id, const std::string &prefix, const std::string &segment, std::string *error)
{
	std::string existing;
	bool loaded = with_job(job_id, error,
			       [&](const slurm_job_info_t &j) { existing = j.admin_comment ? j.admin_comment : ""; });
	if (!loaded)
		return false;
	std::string merged = admin_comment_replace(existing, prefix, segment);
	return merged == existing || update_comment(job_id, merged, true, error);
}

bool hold_job(uint32_t job_id, const std::string &reason, std::string *error)
{
	auto requeue = lookup<requeue_fn>("slurm_requeue", error);
	if (!requeue)
		return false;
	(void)update_comment(job_id, reason, false, error);
	if (requeue(requeue_ref(job_id), JOB_REQUEUE_HOLD) != SLURM_SUCCESS) {
		if (error)
			*error = "slurm_requeue (hold): " + slurm_error_text(-1);
		return false;
	}
	return true;
}

} // namespace loom::spank_ckpt
