// select/topo: the symbols Slurm's select plugin loader looks up.
//
// Every operation is select/cons_tres's own (cons_tres.cpp loads it beside
// us); select/topo only narrows where a job may go. This file holds nothing
// but the extern "C" entry points and their forwarding.
#include "plugins/select_topo/cons_tres.hpp"
#include "plugins/select_topo/placer.hpp"

#include "lib/util/log.hpp"
#include "plugins/common/slurm_log.hpp"

#include <exception>
#include <string>

using loom::select_topo::cons_tres_ops;

// Built with -fvisibility=hidden: these, and only these, are Slurm's to see
// (select_topo.map keeps the list exact).
namespace {
// After a call that can change what jobs hold: select/topo's next job_test
// rereads free GPUs (placer_note_change). Passes the return code through.
int changed(int rc) noexcept
{
	loom::select_topo::placer_note_change();
	return rc;
}
} // namespace

#pragma GCC visibility push(default)
extern "C" {

extern const char plugin_name[];
extern const char plugin_type[];
extern const uint32_t plugin_version;
extern const uint32_t plugin_id;

const char plugin_name[] = "Topology-aware GPU gang placement (loom), over cons_tres";
const char plugin_type[] = "select/topo";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;
// Unique among select plugins (Slurm loads all of them): 101-110 are Slurm's.
const uint32_t plugin_id = 150;

int init(void);
int fini(void);

int init(void)
{
	try {
		loom::plugin::install_slurm_log_sink(plugin_type);
		std::string why;
		if (!loom::select_topo::cons_tres_load(why)) {
			error("%s: cannot load select/cons_tres, which select/topo runs on: %s", plugin_type,
			      why.c_str());
			return SLURM_ERROR;
		}
		// Clients (sinfo, srun, ...) load every select plugin: stay quiet there.
		if (running_in_slurmctld())
			info("%s loaded (over select/cons_tres)", plugin_type);
		else
			debug("%s loaded (over select/cons_tres)", plugin_type);
		return SLURM_SUCCESS;
	} catch (const std::exception &e) {
		error("%s: init failed: %s", plugin_type, e.what());
		return SLURM_ERROR;
	} catch (...) {
		error("%s: init failed", plugin_type);
		return SLURM_ERROR;
	}
}

int fini(void)
{
	loom::select_topo::placer_unload();
	loom::select_topo::cons_tres_unload();
	loom::plugin::remove_slurm_log_sink();
	return SLURM_SUCCESS;
}

int select_p_state_save(char *dir_name) { return cons_tres_ops.state_save(dir_name); }
int select_p_state_restore(char *dir_name) { return changed(cons_tres_ops.state_restore(dir_name)); }
int select_p_job_init(List job_list) { return changed(cons_tres_ops.job_init(job_list)); }
// slurmctld has (re)built its node table: load the fabric for it. At start a
// bad fabric file is fatal; afterwards the last good one stays in use.
int select_p_node_init(void)
{
	int rc = changed(cons_tres_ops.node_init());
	if (rc != SLURM_SUCCESS || !running_in_slurmctld())
		return rc;
	std::string why;
	bool starting = true, loaded = false;
	try {
		starting = !loom::select_topo::placer_loaded();
		loaded = loom::select_topo::placer_load(starting, why);
	} catch (...) {
		why = "internal error while loading the fabric";
	}
	if (!loaded) {
		if (starting)
			fatal("%s: cannot load the fabric: %s", plugin_type, why.c_str());
		error("%s: fabric not reloaded, keeping the last good one: %s", plugin_type, why.c_str());
	}
	return rc;
}

int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
		      uint32_t req_nodes, uint16_t mode, List preemptee_candidates, List *preemptee_job_list,
		      bitstr_t *exc_core_bitmap)
{
	return loom::select_topo::placer_job_test(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode,
						  preemptee_candidates, preemptee_job_list, exc_core_bitmap);
}

int select_p_job_begin(job_record_t *job_ptr) { return changed(cons_tres_ops.job_begin(job_ptr)); }
int select_p_job_ready(job_record_t *job_ptr) { return cons_tres_ops.job_ready(job_ptr); }
int select_p_job_expand(job_record_t *from_job_ptr, job_record_t *to_job_ptr)
{
	return changed(cons_tres_ops.job_expand(from_job_ptr, to_job_ptr));
}
int select_p_job_resized(job_record_t *job_ptr, node_record_t *node_ptr)
{
	return changed(cons_tres_ops.job_resized(job_ptr, node_ptr));
}
int select_p_job_signal(job_record_t *job_ptr, int signal) { return cons_tres_ops.job_signal(job_ptr, signal); }
int select_p_job_fini(job_record_t *job_ptr) { return changed(cons_tres_ops.job_fini(job_ptr)); }
int select_p_job_suspend(job_record_t *job_ptr, bool indf_susp)
{
	return changed(cons_tres_ops.job_suspend(job_ptr, indf_susp));
}
int select_p_job_resume(job_record_t *job_ptr, bool indf_susp)
{
	return changed(cons_tres_ops.job_resume(job_ptr, indf_susp));
}
bitstr_t *select_p_step_pick_nodes(job_record_t *job_ptr, select_jobinfo_t *step_jobinfo, uint32_t node_count,
				   bitstr_t **avail_nodes)
{
	return cons_tres_ops.step_pick_nodes(job_ptr, step_jobinfo, node_count, avail_nodes);
}
int select_p_step_start(step_record_t *step_ptr) { return cons_tres_ops.step_start(step_ptr); }
int select_p_step_finish(step_record_t *step_ptr, bool killing_step)
{
	return cons_tres_ops.step_finish(step_ptr, killing_step);
}
int select_p_select_nodeinfo_pack(select_nodeinfo_t *nodeinfo, buf_t *buffer, uint16_t protocol_version)
{
	return cons_tres_ops.nodeinfo_pack(nodeinfo, buffer, protocol_version);
}
int select_p_select_nodeinfo_unpack(select_nodeinfo_t **nodeinfo, buf_t *buffer, uint16_t protocol_version)
{
	return cons_tres_ops.nodeinfo_unpack(nodeinfo, buffer, protocol_version);
}
select_nodeinfo_t *select_p_select_nodeinfo_alloc(void) { return cons_tres_ops.nodeinfo_alloc(); }
int select_p_select_nodeinfo_free(select_nodeinfo_t *nodeinfo) { return cons_tres_ops.nodeinfo_free(nodeinfo); }
int select_p_select_nodeinfo_set_all(void) { return changed(cons_tres_ops.nodeinfo_set_all()); }
int select_p_select_nodeinfo_set(job_record_t *job_ptr) { return changed(cons_tres_ops.nodeinfo_set(job_ptr)); }
int select_p_select_nodeinfo_get(select_nodeinfo_t *nodeinfo, enum select_nodedata_type dinfo,
				 enum node_states state, void *data)
{
	return cons_tres_ops.nodeinfo_get(nodeinfo, dinfo, state, data);
}
select_jobinfo_t *select_p_select_jobinfo_alloc(void) { return cons_tres_ops.jobinfo_alloc(); }
int select_p_select_jobinfo_free(select_jobinfo_t *jobinfo) { return cons_tres_ops.jobinfo_free(jobinfo); }
int select_p_select_jobinfo_set(select_jobinfo_t *jobinfo, enum select_jobdata_type data_type, void *data)
{
	return cons_tres_ops.jobinfo_set(jobinfo, data_type, data);
}
int select_p_select_jobinfo_get(select_jobinfo_t *jobinfo, enum select_jobdata_type data_type, void *data)
{
	return cons_tres_ops.jobinfo_get(jobinfo, data_type, data);
}
select_jobinfo_t *select_p_select_jobinfo_copy(select_jobinfo_t *jobinfo)
{
	return cons_tres_ops.jobinfo_copy(jobinfo);
}
int select_p_select_jobinfo_pack(select_jobinfo_t *jobinfo, buf_t *buffer, uint16_t protocol_version)
{
	return cons_tres_ops.jobinfo_pack(jobinfo, buffer, protocol_version);
}
int select_p_select_jobinfo_unpack(select_jobinfo_t **jobinfo_pptr, buf_t *buffer, uint16_t protocol_version)
{
	return cons_tres_ops.jobinfo_unpack(jobinfo_pptr, buffer, protocol_version);
}
char *select_p_select_jobinfo_sprint(select_jobinfo_t *jobinfo, char *buf, size_t size, int mode)
{
	return cons_tres_ops.jobinfo_sprint(jobinfo, buf, size, mode);
}
char *select_p_select_jobinfo_xstrdup(select_jobinfo_t *jobinfo, int mode)
{
	return cons_tres_ops.jobinfo_xstrdup(jobinfo, mode);
}
int select_p_get_info_from_plugin(enum select_plugindata_info dinfo, job_record_t *job_ptr, void *data)
{
	return cons_tres_ops.get_info_from_plugin(dinfo, job_ptr, data);
}
int select_p_update_node_config(int index) { return changed(cons_tres_ops.update_node_config(index)); }
int select_p_reconfigure(void)
{
	int rc = changed(cons_tres_ops.reconfigure());
	if (!running_in_slurmctld())
		return rc;
	std::string why;
	bool loaded = false;
	try {
		loaded = loom::select_topo::placer_load(!loom::select_topo::placer_loaded(), why);
	} catch (...) {
		why = "internal error while loading the fabric";
	}
	if (!loaded)
		error("%s: reconfigure: fabric not reloaded, keeping the last good one: %s", plugin_type, why.c_str());
	return rc;
}
bitstr_t *select_p_resv_test(resv_desc_msg_t *resv_desc_ptr, uint32_t node_cnt, bitstr_t *avail_bitmap,
			     bitstr_t **core_bitmap)
{
	return cons_tres_ops.resv_test(resv_desc_ptr, node_cnt, avail_bitmap, core_bitmap);
}

} // extern "C"
#pragma GCC visibility pop
