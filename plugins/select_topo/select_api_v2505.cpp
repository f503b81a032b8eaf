// select/topo's adapter for the select interface of Slurm 25.05 and newer
// (src/interfaces/select.c node_select_syms[]: plugin_id and 12 operations,
// 13 from 26.05 on with job_mem_reduce). slurmctld loads only the configured
// select plugin, and asks running_cons_tres() (plugin_id ==
// SELECT_PLUGIN_CONS_TRES) before it allows CoreCnt reservations, shared and
// per-task GRES, and cons_tres's node ordering. select/topo is cons_tres with
// a narrower choice of nodes, so it carries cons_tres's id: nothing else loads
// a second select plugin that the id could clash with.
#include "plugins/select_topo/select_api.hpp"
#include "plugins/select_topo/slurm_view.hpp"

#define LOOM_SELECT_OPS(X) LOOM_SELECT_OPS_ALL(X)

namespace loom::select_topo {

namespace {
struct Ops {
	LOOM_SELECT_OPS(LOOM_OP_SLOT)
	LOOM_SELECT_OWN_SLOTS(xlist *, xlist **, resv_exc_t *, will_run_data_t *)
	void (*job_mem_reduce)(job_record_t *) = nullptr;
} g_ops;
} // namespace

const ConsTresOp k_cons_tres_ops[] = {
	LOOM_SELECT_OPS(LOOM_OP_SYMBOL) LOOM_SELECT_OWN_SYMBOLS
	// 26.05 and newer: release memory of a job whose steps shrank.
	{"select_p_job_mem_reduce", reinterpret_cast<void **>(&g_ops.job_mem_reduce), true},
};
const size_t k_cons_tres_ops_count = sizeof(k_cons_tres_ops) / sizeof(k_cons_tres_ops[0]);
static_assert(sizeof(k_cons_tres_ops) / sizeof(k_cons_tres_ops[0]) == 13,
	      "Slurm 25.05+'s select plugins have 12 operations, 13 with 26.05's job_mem_reduce");

LOOM_SELECT_JOB_TEST_RESV_EXC_TAIL

bool select_lln() { return slurm_conf.select_type_param & SELECT_LLN; }

} // namespace loom::select_topo

using loom::select_topo::g_ops;

#pragma GCC visibility push(default)
extern "C" {

extern const uint32_t plugin_id;
const uint32_t plugin_id = SELECT_PLUGIN_CONS_TRES;

LOOM_SELECT_OPS(LOOM_OP_ENTRY)
LOOM_SELECT_OWN_ENTRIES
LOOM_SELECT_JOB_TEST_RESV_EXC_ENTRY

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
