// The exception guard of loom's SPANK plugins: every hook runs inside it, so
// that no C++ exception unwinds into Slurm (sbatch, srun, slurmstepd). What
// was thrown is logged with the plugin's name and the hook's, and Slurm gets
// 'failed': -1 where the job may still be refused, 0 where a hook must never
// fail a task.
#pragma once

#include <exception>

extern "C" {
#include <slurm/spank.h>
}

namespace loom::plugin {

template <typename F>
int spank_guarded(const char *plugin, const char *hook, int failed, F &&fn)
{
	try {
		return fn();
	} catch (const std::exception &e) {
		slurm_error("%s: %s: %s", plugin, hook, e.what());
	} catch (...) {
		slurm_error("%s: %s: unexpected failure", plugin, hook);
	}
	return failed;
}

} // namespace loom::plugin
