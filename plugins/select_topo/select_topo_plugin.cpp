// select/topo: the plugin's identity, init/fini, and what it does around the
// operations it changes. Every operation is select/cons_tres's own
// (cons_tres.cpp loads it beside us); select/topo only narrows where a job
// may go. The entry points of each family of Slurm releases, and their
// forwarding, are in that family's adapter (select_api_v*.cpp).
#include "plugins/select_topo/cons_tres.hpp"
#include "plugins/select_topo/placer.hpp"

#include "lib/util/log.hpp"
#include "plugins/common/slurm_log.hpp"

#include <exception>
#include <string>

// Built with -fvisibility=hidden: these, and only these, are Slurm's to see
// (select_topo.map keeps the list exact).
#pragma GCC visibility push(default)
extern "C" {

extern const char plugin_name[];
extern const char plugin_type[];
extern const uint32_t plugin_version;

const char plugin_name[] = "Topology-aware GPU gang placement (loom), over cons_tres";
const char plugin_type[] = "select/topo";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

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
		// Clients (sinfo, srun, ...) of older releases load every select plugin: stay quiet there.
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

} // extern "C"
#pragma GCC visibility pop

namespace loom::select_topo {

int changed(int rc) noexcept
{
	placer_note_change();
	return rc;
}

void changed_arg(const job_record_t *job) noexcept { placer_note_job(job); }
void changed_arg(const node_record_t *node) noexcept
{
	if (node)
		placer_note_node(static_cast<int>(node->index));
}

int changed_node(int rc, int index) noexcept
{
	placer_note_node(index);
	return rc;
}

// slurmctld has (re)built its node table: load the fabric for it. At start a
// bad fabric file is fatal; afterwards the last good one stays in use.
int topo_after_node_init(int rc)
{
	if (rc != SLURM_SUCCESS || !running_in_slurmctld())
		return rc;
	std::string why;
	bool starting = true, loaded = false;
	try {
		starting = !placer_loaded();
		loaded = placer_load(starting, why);
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

int topo_after_reconfigure(int rc)
{
	if (!running_in_slurmctld())
		return rc;
	std::string why;
	bool loaded = false;
	try {
		loaded = placer_load(!placer_loaded(), why);
	} catch (...) {
		why = "internal error while loading the fabric";
	}
	if (!loaded)
		error("%s: reconfigure: fabric not reloaded, keeping the last good one: %s", plugin_type, why.c_str());
	return rc;
}

} // namespace loom::select_topo
