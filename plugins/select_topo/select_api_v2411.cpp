// select/topo's adapter for Slurm 24.11's select interface
// (src/interfaces/select.c node_select_syms[]: plugin_id and 31 operations;
// job_test takes the reservation's excluded cores as resv_exc_t and backfill's
// will_run data; every select plugin in PluginDir is still loaded, so plugin_id
// must be unique).
#include "plugins/select_topo/placer.hpp"
#include "plugins/select_topo/select_api.hpp"

// clang-format off
#define LOOM_SELECT_OPS(X) \
	X(int, state_save, (char *dir_name), (dir_name), LOOM_KEEP) \
	X(int, state_restore, (char *dir_name), (dir_name), LOOM_CHANGED) \
	X(int, job_init, (xlist *job_list), (job_list), LOOM_CHANGED) \
	X(int, job_begin, (job_record_t *job_ptr), (job_ptr), LOOM_CHANGED) \
	X(int, job_ready, (job_record_t *job_ptr), (job_ptr), LOOM_KEEP) \
	X(int, job_expand, (job_record_t *from_job_ptr, job_record_t *to_job_ptr), (from_job_ptr, to_job_ptr), LOOM_CHANGED) \
	X(int, job_resized, (job_record_t *job_ptr, node_record_t *node_ptr), (job_ptr, node_ptr), LOOM_CHANGED) \
	X(int, job_fini, (job_record_t *job_ptr), (job_ptr), LOOM_CHANGED) \
	X(int, job_suspend, (job_record_t *job_ptr, bool indf_susp), (job_ptr, indf_susp), LOOM_CHANGED) \
	X(int, job_resume, (job_record_t *job_ptr, bool indf_susp), (job_ptr, indf_susp), LOOM_CHANGED) \
	X(bitstr_t *, step_pick_nodes, (job_record_t *job_ptr, select_jobinfo_t *step_jobinfo, uint32_t node_count, bitstr_t **avail_nodes), (job_ptr, step_jobinfo, node_count, avail_nodes), LOOM_KEEP) \
	X(int, step_start, (step_record_t *step_ptr), (step_ptr), LOOM_KEEP) \
	X(int, step_finish, (step_record_t *step_ptr, bool killing_step), (step_ptr, killing_step), LOOM_KEEP) \
	X(int, select_nodeinfo_pack, (select_nodeinfo_t *nodeinfo, buf_t *buffer, uint16_t protocol_version), (nodeinfo, buffer, protocol_version), LOOM_KEEP) \
	X(int, select_nodeinfo_unpack, (select_nodeinfo_t **nodeinfo, buf_t *buffer, uint16_t protocol_version), (nodeinfo, buffer, protocol_version), LOOM_KEEP) \
	X(select_nodeinfo_t *, select_nodeinfo_alloc, (void), (), LOOM_KEEP) \
	X(int, select_nodeinfo_free, (select_nodeinfo_t *nodeinfo), (nodeinfo), LOOM_KEEP) \
	X(int, select_nodeinfo_set_all, (void), (), LOOM_CHANGED) \
	X(int, select_nodeinfo_set, (job_record_t *job_ptr), (job_ptr), LOOM_CHANGED) \
	X(int, select_nodeinfo_get, (select_nodeinfo_t *nodeinfo, enum select_nodedata_type dinfo, enum node_states state, void *data), (nodeinfo, dinfo, state, data), LOOM_KEEP) \
	X(select_jobinfo_t *, select_jobinfo_alloc, (void), (), LOOM_KEEP) \
	X(int, select_jobinfo_free, (select_jobinfo_t *jobinfo), (jobinfo), LOOM_KEEP) \
	X(int, select_jobinfo_set, (select_jobinfo_t *jobinfo, enum select_jobdata_type data_type, void *data), (jobinfo, data_type, data), LOOM_KEEP) \
	X(int, select_jobinfo_get, (select_jobinfo_t *jobinfo, enum select_jobdata_type data_type, void *data), (jobinfo, data_type, data), LOOM_KEEP) \
	X(select_jobinfo_t *, select_jobinfo_copy, (select_jobinfo_t *jobinfo), (jobinfo), LOOM_KEEP) \
	X(int, select_jobinfo_pack, (select_jobinfo_t *jobinfo, buf_t *buffer, uint16_t protocol_version), (jobinfo, buffer, protocol_version), LOOM_KEEP) \
	X(int, select_jobinfo_unpack, (select_jobinfo_t **jobinfo_pptr, buf_t *buffer, uint16_t protocol_version), (jobinfo_pptr, buffer, protocol_version), LOOM_KEEP) \
	X(int, get_info_from_plugin, (enum select_plugindata_info dinfo, job_record_t *job_ptr, void *data), (dinfo, job_ptr, data), LOOM_KEEP)
// clang-format on

namespace loom::select_topo {

struct JobTestTail {
	xlist *preemptee_candidates;
	xlist **preemptee_job_list;
	resv_exc_t *resv_exc_ptr;
	will_run_data_t *will_run_ptr;
};

namespace {
struct Ops {
	LOOM_SELECT_OPS(LOOM_OP_SLOT)
	int (*node_init)(void) = nullptr;
	int (*job_test)(job_record_t *, bitstr_t *, uint32_t, uint32_t, uint32_t, uint16_t, xlist *, xlist **,
			resv_exc_t *, will_run_data_t *) = nullptr;
	int (*reconfigure)(void) = nullptr;
} g_ops;
} // namespace

const ConsTresOp k_cons_tres_ops[] = {
	LOOM_SELECT_OPS(LOOM_OP_SYMBOL)
	{"select_p_node_init", reinterpret_cast<void **>(&g_ops.node_init)},
	{"select_p_job_test", reinterpret_cast<void **>(&g_ops.job_test)},
	{"select_p_reconfigure", reinterpret_cast<void **>(&g_ops.reconfigure)},
};
const size_t k_cons_tres_ops_count = sizeof(k_cons_tres_ops) / sizeof(k_cons_tres_ops[0]);
static_assert(sizeof(k_cons_tres_ops) / sizeof(k_cons_tres_ops[0]) == 31,
	      "Slurm 24.11's select plugins have 31 operations (node_select_syms[])");

int cons_tres_job_test(job_record_t *job, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
		       uint32_t req_nodes, uint16_t mode, const JobTestTail &t)
{
	return g_ops.job_test(job, bitmap, min_nodes, max_nodes, req_nodes, mode, t.preemptee_candidates,
			      t.preemptee_job_list, t.resv_exc_ptr, t.will_run_ptr);
}

} // namespace loom::select_topo

using loom::select_topo::g_ops;

#pragma GCC visibility push(default)
extern "C" {

extern const uint32_t plugin_id;
// Unique among select plugins (Slurm loads all of them): 101-110 are Slurm's.
const uint32_t plugin_id = 150;

LOOM_SELECT_OPS(LOOM_OP_ENTRY)

int select_p_node_init(void) { return loom::select_topo::topo_after_node_init(LOOM_CHANGED(g_ops.node_init())); }
int select_p_reconfigure(void)
{
	return loom::select_topo::topo_after_reconfigure(LOOM_CHANGED(g_ops.reconfigure()));
}
int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
		      uint32_t req_nodes, uint16_t mode, xlist *preemptee_candidates, xlist **preemptee_job_list,
		      resv_exc_t *resv_exc_ptr, will_run_data_t *will_run_ptr)
{
	const loom::select_topo::JobTestTail tail{preemptee_candidates, preemptee_job_list, resv_exc_ptr, will_run_ptr};
	return loom::select_topo::placer_job_test(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode, tail);
}

} // extern "C"
#pragma GCC visibility pop
