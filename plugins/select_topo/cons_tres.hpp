// The select/cons_tres plugin, loaded beside select/topo so that every select
// operation select/topo does not change is cons_tres's own.
//
// Which operations a select plugin has, and their signatures, is the one thing
// that differs between Slurm's select interface families; it lives in the
// adapter of this release's family (select_api_v*.cpp, chosen by configure),
// which hands this loader its table of names and slots.
#pragma once

#include "plugins/common/slurm_internal.hpp"

#include <cstddef>
#include <string>

namespace loom::select_topo {

// One cons_tres operation: its symbol and where to store its address.
// An optional one may be missing (an operation only newer micro releases have).
struct ConsTresOp {
	const char *symbol;
	void **slot;
	bool optional = false;
};

// This release's operations (defined by the family adapter).
extern const ConsTresOp k_cons_tres_ops[];
extern const size_t k_cons_tres_ops_count;

// Find select_cons_tres.so in PluginDir, load it (or take the copy Slurm has
// already loaded) and resolve every operation. On failure, 'why' says what.
bool cons_tres_load(std::string &why);
// Undo cons_tres_load: run cons_tres's fini() if we ran its init().
void cons_tres_unload();

// The arguments of select_p_job_test after 'mode', as this release passes
// them. Only the family adapter looks inside; the placer passes them on.
struct JobTestTail;

// cons_tres's job_test, with the tail select/topo was called with.
int cons_tres_job_test(job_record_t *job, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes, uint32_t req_nodes,
		       uint16_t mode, const JobTestTail &tail);

// Whether the tail offers jobs to preempt (cons_tres then returns the ones it
// would preempt in preemptee_job_list).
bool job_test_preempts(const JobTestTail &tail);

// What the family adapter calls around the operations select/topo changes
// (select_topo_plugin.cpp): node_init and reconfigure load the fabric after
// cons_tres has done its part, and return cons_tres's result.
int topo_after_node_init(int rc);
int topo_after_reconfigure(int rc);
// An operation that can change anything jobs hold (node_init, reconfigure,
// state restore): the next job_test reads the whole node table again.
// Returns rc unchanged.
int changed(int rc) noexcept;
// An operation on jobs (begin, end, resize, suspend, resume, expand): the
// next job_test reads again the nodes of each job among the arguments (and a
// node argument: the node a resize took from the job). Returns rc unchanged.
void changed_arg(const job_record_t *job) noexcept;
void changed_arg(const node_record_t *node) noexcept;
inline void changed_arg(bool) noexcept {}
template <class... A>
int changed_jobs(int rc, A... args) noexcept
{
	(changed_arg(args), ...);
	return rc;
}
// An operation on one node by its index (22.05's update_node_config).
int changed_node(int rc, int index) noexcept;

} // namespace loom::select_topo
