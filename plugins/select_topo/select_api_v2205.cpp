// select/topo's adapter for Slurm 22.05's select interface (src/common/select.c
// node_select_syms[]: plugin_id and 36 operations; every select plugin in
// PluginDir is loaded, so plugin_id must be unique).
#include "plugins/select_topo/select_api.hpp"
#include "plugins/select_topo/slurm_view.hpp"

// clang-format off
#define LOOM_SELECT_OPS_2205(X) \
	X(int, job_signal, (job_record_t *job_ptr, int signal), (job_ptr, signal), LOOM_KEEP) \
	X(char *, select_jobinfo_sprint, (select_jobinfo_t *jobinfo, char *buf, size_t size, int mode), (jobinfo, buf, size, mode), LOOM_KEEP) \
	X(char *, select_jobinfo_xstrdup, (select_jobinfo_t *jobinfo, int mode), (jobinfo, mode), LOOM_KEEP) \
	X(int, update_node_config, (int index), (index), LOOM_NODE) \
	X(bitstr_t *, resv_test, (resv_desc_msg_t *resv_desc_ptr, uint32_t node_cnt, bitstr_t *avail_bitmap, bitstr_t **core_bitmap), (resv_desc_ptr, node_cnt, avail_bitmap, core_bitmap), LOOM_KEEP)
#define LOOM_SELECT_OPS(X) LOOM_SELECT_OPS_ALL(X) LOOM_SELECT_OPS_BEFORE_2505(X) LOOM_SELECT_OPS_2205(X)
// clang-format on

namespace loom::select_topo {

// job_test's tail in 22.05: the reservation's excluded cores as a bitmap.
struct JobTestTail {
	xlist *preemptee_candidates;
	xlist **preemptee_job_list;
	bitstr_t *exc_core_bitmap;
};

namespace {
struct Ops {
	LOOM_SELECT_OPS(LOOM_OP_SLOT)
	LOOM_SELECT_OWN_SLOTS(xlist *, xlist **, bitstr_t *)
} g_ops;
} // namespace

const ConsTresOp k_cons_tres_ops[] = {LOOM_SELECT_OPS(LOOM_OP_SYMBOL) LOOM_SELECT_OWN_SYMBOLS};
const size_t k_cons_tres_ops_count = sizeof(k_cons_tres_ops) / sizeof(k_cons_tres_ops[0]);
static_assert(sizeof(k_cons_tres_ops) / sizeof(k_cons_tres_ops[0]) == 36,
	      "Slurm 22.05's select plugins have 36 operations (node_select_syms[])");

int cons_tres_job_test(job_record_t *job, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes, uint32_t req_nodes,
		       uint16_t mode, const JobTestTail &t)
{
	return g_ops.job_test(job, bitmap, min_nodes, max_nodes, req_nodes, mode, t.preemptee_candidates,
			      t.preemptee_job_list, t.exc_core_bitmap);
}

bool job_test_preempts(const JobTestTail &t)
{
	return t.preemptee_candidates && list_count(t.preemptee_candidates) > 0;
}

bool select_lln() { return slurm_conf.select_type_param & CR_LLN; }

} // namespace loom::select_topo

using loom::select_topo::g_ops;

#pragma GCC visibility push(default)
extern "C" {

extern const uint32_t plugin_id;
// Unique among select plugins (Slurm loads all of them): 101-110 are Slurm's.
const uint32_t plugin_id = 150;

LOOM_SELECT_OPS(LOOM_OP_ENTRY)
LOOM_SELECT_OWN_ENTRIES

int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
		      uint32_t req_nodes, uint16_t mode, xlist *preemptee_candidates, xlist **preemptee_job_list,
		      bitstr_t *exc_core_bitmap)
{
	const loom::select_topo::JobTestTail tail{preemptee_candidates, preemptee_job_list, exc_core_bitmap};
	return loom::select_topo::placer_job_test(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode, tail);
}

} // extern "C"
#pragma GCC visibility pop
