// select/topo's adapter for the select interface of Slurm 25.05 and newer
// (src/interfaces/select.c node_select_syms[]: plugin_id and 12 operations,
// 13 from 26.05 on with job_mem_reduce). slurmctld loads only the configured
// select plugin, and asks running_cons_tres() (plugin_id ==
// SELECT_PLUGIN_CONS_TRES) before it allows CoreCnt reservations, shared and
// per-task GRES, and cons_tres's node ordering. select/topo is cons_tres with
// a narrower choice of nodes, so it carries cons_tres's id: nothing else loads
// a second select plugin that the id could clash with.
#include "plugins/select_topo/placer.hpp"
#include "plugins/select_topo/select_api.hpp"

// clang-format off
#define LOOM_SELECT_OPS(X) \
	X(int, job_begin, (job_record_t *job_ptr), (job_ptr), LOOM_CHANGED) \
	X(int, job_ready, (job_record_t *job_ptr), (job_ptr), LOOM_KEEP) \
	X(int, job_expand, (job_record_t *from_job_ptr, job_record_t *to_job_ptr), (from_job_ptr, to_job_ptr), LOOM_CHANGED) \
	X(int, job_resized, (job_record_t *job_ptr, node_record_t *node_ptr), (job_ptr, node_ptr), LOOM_CHANGED) \
	X(int, job_fini, (job_record_t *job_ptr), (job_ptr), LOOM_CHANGED) \
	X(int, job_suspend, (job_record_t *job_ptr, bool indf_susp), (job_ptr, indf_susp), LOOM_CHANGED) \
	X(int, job_resume, (job_record_t *job_ptr, bool indf_susp), (job_ptr, indf_susp), LOOM_CHANGED) \
	X(int, select_nodeinfo_set_all, (void), (), LOOM_CHANGED) \
	X(int, select_nodeinfo_set, (job_record_t *job_ptr), (job_ptr), LOOM_CHANGED)
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
	void (*job_mem_reduce)(job_record_t *) = nullptr;
} g_ops;
} // namespace

const ConsTresOp k_cons_tres_ops[] = {
	LOOM_SELECT_OPS(LOOM_OP_SYMBOL)
	{"select_p_node_init", reinterpret_cast<void **>(&g_ops.node_init)},
	{"select_p_job_test", reinterpret_cast<void **>(&g_ops.job_test)},
	{"select_p_reconfigure", reinterpret_cast<void **>(&g_ops.reconfigure)},
	// 26.05 and newer: release memory of a job whose steps shrank.
	{"select_p_job_mem_reduce", reinterpret_cast<void **>(&g_ops.job_mem_reduce), true},
};
const size_t k_cons_tres_ops_count = sizeof(k_cons_tres_ops) / sizeof(k_cons_tres_ops[0]);
static_assert(sizeof(k_cons_tres_ops) / sizeof(k_cons_tres_ops[0]) == 13,
	      "Slurm 25.05+'s select plugins have 12 operations, 13 with 26.05's job_mem_reduce");

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
const uint32_t plugin_id = SELECT_PLUGIN_CONS_TRES;

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
// Slurm releases before 26.05 never call it; where cons_tres has it, it runs.
void select_p_job_mem_reduce(job_record_t *job_ptr)
{
	if (g_ops.job_mem_reduce) {
		g_ops.job_mem_reduce(job_ptr);
		loom::select_topo::changed(0);
	}
}

} // extern "C"
#pragma GCC visibility pop
