// select/topo's adapter for Slurm 24.11's select interface
// (src/interfaces/select.c node_select_syms[]: plugin_id and 31 operations;
// job_test takes the reservation's excluded cores as resv_exc_t and backfill's
// will_run data; every select plugin in PluginDir is still loaded, so
// plugin_id must be unique).
#include "plugins/select_topo/select_api.hpp"
#include "plugins/select_topo/slurm_view.hpp"

#define LOOM_SELECT_OPS(X) LOOM_SELECT_OPS_ALL(X) LOOM_SELECT_OPS_BEFORE_2505(X)

namespace loom::select_topo {

namespace {
struct Ops {
	LOOM_SELECT_OPS(LOOM_OP_SLOT)
	LOOM_SELECT_OWN_SLOTS(xlist *, xlist **, resv_exc_t *, will_run_data_t *)
} g_ops;
} // namespace

const ConsTresOp k_cons_tres_ops[] = {LOOM_SELECT_OPS(LOOM_OP_SYMBOL) LOOM_SELECT_OWN_SYMBOLS};
const size_t k_cons_tres_ops_count = sizeof(k_cons_tres_ops) / sizeof(k_cons_tres_ops[0]);
static_assert(sizeof(k_cons_tres_ops) / sizeof(k_cons_tres_ops[0]) == 31,
	      "Slurm 24.11's select plugins have 31 operations (node_select_syms[])");

LOOM_SELECT_JOB_TEST_RESV_EXC_TAIL

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
LOOM_SELECT_JOB_TEST_RESV_EXC_ENTRY

} // extern "C"
#pragma GCC visibility pop
