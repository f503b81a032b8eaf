// What the select interface adapters (select_api_v*.cpp, one per family of
// Slurm releases, configure compiles one) share: the operations select/topo
// hands to cons_tres unchanged, listed once, and the entry points select/topo
// changes.
//
// An operation is listed as
//   X(return type, operation, (parameters), (arguments), WRAP)
// where the operation is the name after "select_p_" and WRAP says what the
// call may have changed in what jobs hold: LOOM_KEEP nothing, LOOM_JOB the
// nodes of the job(s) among its arguments (their GPUs were allocated or
// freed: only those nodes are read again), LOOM_NODE the node of its index
// argument, LOOM_CHANGED anything (the whole node table is read again). From a list
// come the slots for cons_tres's functions, the symbol table cons_tres.cpp
// resolves, and the extern "C" entry points Slurm calls. A family adds its
// own operations to the lists here and defines JobTestTail (the arguments of
// job_test after 'mode', which differ).
#pragma once

#include "plugins/select_topo/cons_tres.hpp"
#include "plugins/select_topo/placer.hpp"

#define LOOM_UNPAREN(...) __VA_ARGS__
#define LOOM_KEEP(args, v) v
#define LOOM_CHANGED(args, v) ::loom::select_topo::changed(v)
#define LOOM_JOB(args, v) ::loom::select_topo::changed_jobs(v, LOOM_UNPAREN args)
#define LOOM_NODE(args, v) ::loom::select_topo::changed_node(v, LOOM_UNPAREN args)

#define LOOM_OP_SLOT(ret, op, params, args, wrap) ret(*op) params = nullptr;
#define LOOM_OP_SYMBOL(ret, op, params, args, wrap) {"select_p_" #op, reinterpret_cast<void **>(&g_ops.op)},
#define LOOM_OP_ENTRY(ret, op, params, args, wrap)                                                                     \
	ret select_p_##op params { return wrap(args, g_ops.op args); }

// clang-format off
// Every family (22.05, 24.11, 25.05+).
#define LOOM_SELECT_OPS_ALL(X) \
	X(int, job_begin, (job_record_t *job_ptr), (job_ptr), LOOM_JOB) \
	X(int, job_ready, (job_record_t *job_ptr), (job_ptr), LOOM_KEEP) \
	X(int, job_expand, (job_record_t *from_job_ptr, job_record_t *to_job_ptr), (from_job_ptr, to_job_ptr), LOOM_JOB) \
	X(int, job_resized, (job_record_t *job_ptr, node_record_t *node_ptr), (job_ptr, node_ptr), LOOM_JOB) \
	X(int, job_fini, (job_record_t *job_ptr), (job_ptr), LOOM_JOB) \
	X(int, job_suspend, (job_record_t *job_ptr, bool indf_susp), (job_ptr, indf_susp), LOOM_JOB) \
	X(int, job_resume, (job_record_t *job_ptr, bool indf_susp), (job_ptr, indf_susp), LOOM_JOB) \
	X(int, select_nodeinfo_set_all, (void), (), LOOM_KEEP) \
	X(int, select_nodeinfo_set, (job_record_t *job_ptr), (job_ptr), LOOM_JOB)

// 22.05 and 24.11 (25.05 removed them: state, steps and node/job info are no
// longer the select plugin's).
#define LOOM_SELECT_OPS_BEFORE_2505(X) \
	X(int, state_save, (char *dir_name), (dir_name), LOOM_KEEP) \
	X(int, state_restore, (char *dir_name), (dir_name), LOOM_CHANGED) \
	X(int, job_init, (xlist *job_list), (job_list), LOOM_CHANGED) \
	X(bitstr_t *, step_pick_nodes, (job_record_t *job_ptr, select_jobinfo_t *step_jobinfo, uint32_t node_count, bitstr_t **avail_nodes), (job_ptr, step_jobinfo, node_count, avail_nodes), LOOM_KEEP) \
	X(int, step_start, (step_record_t *step_ptr), (step_ptr), LOOM_KEEP) \
	X(int, step_finish, (step_record_t *step_ptr, bool killing_step), (step_ptr, killing_step), LOOM_KEEP) \
	X(int, select_nodeinfo_pack, (select_nodeinfo_t *nodeinfo, buf_t *buffer, uint16_t protocol_version), (nodeinfo, buffer, protocol_version), LOOM_KEEP) \
	X(int, select_nodeinfo_unpack, (select_nodeinfo_t **nodeinfo, buf_t *buffer, uint16_t protocol_version), (nodeinfo, buffer, protocol_version), LOOM_KEEP) \
	X(select_nodeinfo_t *, select_nodeinfo_alloc, (void), (), LOOM_KEEP) \
	X(int, select_nodeinfo_free, (select_nodeinfo_t *nodeinfo), (nodeinfo), LOOM_KEEP) \
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

// The operations select/topo changes: their slots and symbols (inside the
// family's Ops and k_cons_tres_ops), and node_init/reconfigure's entry points,
// which load the fabric after cons_tres has done its part.
#define LOOM_SELECT_OWN_SLOTS(...)                                                                                     \
	int (*node_init)(void) = nullptr;                                                                              \
	int (*reconfigure)(void) = nullptr;                                                                            \
	int (*job_test)(job_record_t *, bitstr_t *, uint32_t, uint32_t, uint32_t, uint16_t, __VA_ARGS__) = nullptr;
#define LOOM_SELECT_OWN_SYMBOLS                                                                                        \
	{"select_p_node_init", reinterpret_cast<void **>(&g_ops.node_init)},                                           \
		{"select_p_job_test", reinterpret_cast<void **>(&g_ops.job_test)},                                     \
		{"select_p_reconfigure", reinterpret_cast<void **>(&g_ops.reconfigure)},
#define LOOM_SELECT_OWN_ENTRIES                                                                                        \
	int select_p_node_init(void)                                                                                   \
	{                                                                                                              \
		return ::loom::select_topo::topo_after_node_init(::loom::select_topo::changed(g_ops.node_init()));     \
	}                                                                                                              \
	int select_p_reconfigure(void)                                                                                 \
	{                                                                                                              \
		return ::loom::select_topo::topo_after_reconfigure(::loom::select_topo::changed(g_ops.reconfigure())); \
	}

// job_test as 24.05 and newer call it, with the reservation's excluded cores
// as resv_exc_t and backfill's will_run data: the tail (inside namespace
// loom::select_topo, after Ops) and the entry point (extern "C").
#define LOOM_SELECT_JOB_TEST_RESV_EXC_TAIL                                                                             \
	struct JobTestTail {                                                                                           \
		xlist *preemptee_candidates;                                                                           \
		xlist **preemptee_job_list;                                                                            \
		resv_exc_t *resv_exc_ptr;                                                                              \
		will_run_data_t *will_run_ptr;                                                                         \
	};                                                                                                             \
	int cons_tres_job_test(job_record_t *job, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,            \
			       uint32_t req_nodes, uint16_t mode, const JobTestTail &t)                                \
	{                                                                                                              \
		return g_ops.job_test(job, bitmap, min_nodes, max_nodes, req_nodes, mode, t.preemptee_candidates,      \
				      t.preemptee_job_list, t.resv_exc_ptr, t.will_run_ptr);                           \
	}                                                                                                              \
	bool job_test_preempts(const JobTestTail &t)                                                                   \
	{                                                                                                              \
		return t.preemptee_candidates && list_count(t.preemptee_candidates) > 0;                               \
	}
#define LOOM_SELECT_JOB_TEST_RESV_EXC_ENTRY                                                                            \
	int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,         \
			      uint32_t req_nodes, uint16_t mode, xlist *preemptee_candidates,                          \
			      xlist **preemptee_job_list, resv_exc_t *resv_exc_ptr, will_run_data_t *will_run_ptr)     \
	{                                                                                                              \
		const ::loom::select_topo::JobTestTail tail{preemptee_candidates, preemptee_job_list, resv_exc_ptr,    \
							    will_run_ptr};                                             \
		return ::loom::select_topo::placer_job_test(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode,    \
							    tail);                                                     \
	}
