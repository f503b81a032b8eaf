// job_submit/loom: standby nodes for sbatch --ckpt-standby (spank_ckpt(8)).
//
// A SPANK option cannot change how many nodes Slurm allocates; a job_submit
// plugin sees the request before slurmctld does anything with it. This one
// reads the option from the job's environment (where sbatch puts every SPANK
// option), adds the standbys to the node count (and their tasks to the task
// count when the job gives a per-node count), sets --no-kill (a failed node
// is removed from the job, which keeps running) and names the count in the
// job's environment (LOOM_CKPT_STANDBY), where spank_ckpt's batch step reads
// it, and the active count (LOOM_CKPT_ACTIVE): a job requeued after a
// standby took a node's place holds fewer nodes, never fewer ranks. Jobs
// without the option pass untouched. The plan is lib/ckpt's
// plan_submit; the node MTBF for --ckpt-standby=auto is jobcomp/health's
// failure statistics in StateSaveLocation, else 30 days.
#include "lib/ckpt/standby_plan.hpp"
#include "lib/exchange/failure_stats.hpp"
#include "lib/util/fs.hpp"
#include "plugins/common/slurm_internal.hpp"

extern "C" {
#include "src/common/env.h"
}

#include <exception>
#include <string>
#include <string_view>

namespace {

constexpr double default_node_mtbf_s = 30.0 * 86400;
constexpr double standby_p = 0.9;
constexpr int standby_max = 8;

std::string option_value(const job_desc_msg_t *d)
{
	std::string_view key = loom::ckpt::standby_option_env;
	for (uint32_t i = 0; d->environment && i < d->env_size; i++) {
		std::string_view e = d->environment[i] ? d->environment[i] : "";
		if (e.size() > key.size() && e.substr(0, key.size()) == key && e[key.size()] == '=')
			return std::string(e.substr(key.size() + 1));
	}
	return {};
}

uint32_t given(uint32_t v) { return v == NO_VAL || v == INFINITE ? 0 : v; }

double node_mtbf(uint32_t nodes)
{
	std::string dir = slurm_conf.state_save_location ? slurm_conf.state_save_location : "";
	if (dir.empty())
		return default_node_mtbf_s;
	auto stats = loom::exchange::load_failure_stats(loom::path_join(dir, "loom-failure-stats.json"));
	if (!stats)
		return default_node_mtbf_s;
	double fleet = loom::exchange::fleet_mtbf(*stats);
	(void)nodes;
	return fleet > 0 ? fleet : default_node_mtbf_s;
}

int submit(job_desc_msg_t *d, char **err_msg)
{
	std::string value = option_value(d);
	if (value.empty())
		return SLURM_SUCCESS;
	if (value == "(null)")
		value = "1";
	loom::ckpt::SubmitCounts c;
	c.min_nodes = given(d->min_nodes);
	c.max_nodes = given(d->max_nodes);
	c.num_tasks = given(d->num_tasks);
	c.ntasks_per_node = d->ntasks_per_node == NO_VAL16 ? 0 : d->ntasks_per_node;
	double limit_s = given(d->time_limit) * 60.0;
	auto plan = loom::ckpt::plan_submit(c, value, limit_s, node_mtbf(c.min_nodes), standby_p, standby_max);
	if (!plan) {
		std::string msg = "job_submit/loom: " + plan.error().str();
		info("%s", msg.c_str());
		if (err_msg)
			*err_msg = xstrdup(msg.c_str());
		return ESLURM_INVALID_NODE_COUNT;
	}
	// 0 (auto, nothing to fear) is said too: the batch step then knows the
	// option was seen.
	env_array_overwrite(&d->environment, loom::ckpt::standby_env, std::to_string(plan->standbys).c_str());
	env_array_overwrite(&d->environment, loom::ckpt::active_count_env, std::to_string(c.min_nodes).c_str());
	d->env_size = envcount(d->environment);
	if (plan->standbys == 0)
		return SLURM_SUCCESS;
	d->min_nodes = plan->after.min_nodes;
	if (c.max_nodes)
		d->max_nodes = plan->after.max_nodes;
	if (c.num_tasks)
		d->num_tasks = plan->after.num_tasks;
	d->kill_on_node_fail = 0;
	info("job_submit/loom: --ckpt-standby=%s: %d standby node(s) beside %u (%s): %u nodes, --no-kill",
	     value.c_str(), plan->standbys, c.min_nodes, plan->why.c_str(), d->min_nodes);
	return SLURM_SUCCESS;
}

} // namespace

#pragma GCC visibility push(default)
extern "C" {

extern const char plugin_name[] = "loom standby nodes for checkpointed jobs";
extern const char plugin_type[] = "job_submit/loom";
extern const uint32_t plugin_version = SLURM_VERSION_NUMBER;

int init(void) { return SLURM_SUCCESS; }
void fini(void) {}

int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid, char **err_msg)
{
	(void)submit_uid;
	try {
		return submit(job_desc, err_msg);
	} catch (const std::exception &e) {
		error("job_submit/loom: %s", e.what());
	} catch (...) {
		error("job_submit/loom: unexpected failure");
	}
	return SLURM_SUCCESS; // the job as submitted: never a crash in slurmctld
}

int job_modify(job_desc_msg_t *job_desc, job_record_t *job_ptr, uint32_t submit_uid, char **err_msg)
{
	(void)job_desc, (void)job_ptr, (void)submit_uid, (void)err_msg;
	return SLURM_SUCCESS;
}

} // extern "C"
#pragma GCC visibility pop
