// spank_place: the placement options select/topo has no Slurm field for.
//
//   sbatch --comm=heavy ...          communication-heavy gang: tightest, least loaded domain
//   sbatch --locality=leaf:strict    the gang must fit under one leaf switch (waits otherwise)
//
// Values are checked where the user typed them (sbatch, salloc, srun): a bad
// value is refused at submit time naming the option, the value and the words
// allowed (lib/place/hints.hpp: the same words as `loom place --request` and
// --explain). Slurm carries accepted options to slurmctld in the job's SPANK
// environment, where select/topo reads them (plugins/common/place_hints.hpp).
#include "plugins/common/place_hints.hpp"

#include <cstring>
#include <exception>

extern "C" {
#include <slurm/spank.h>
}

#pragma GCC visibility push(default)
extern "C" {
extern const char plugin_name[];
extern const char plugin_type[];
extern const unsigned int plugin_version;
const char plugin_name[] = "loom_place";
const char plugin_type[] = "spank";
const unsigned int plugin_version = SLURM_VERSION_NUMBER;
int slurm_spank_init(spank_t sp, int ac, char **av);
}
#pragma GCC visibility pop

namespace {

int opt_comm(int, const char *optarg, int)
{
	try {
		auto c = loom::plugin::comm_option(optarg ? optarg : "");
		if (!c) {
			slurm_error("loom: %s", c.error().str().c_str());
			return -1;
		}
		return 0;
	} catch (...) {
		return -1;
	}
}

int opt_locality(int, const char *optarg, int)
{
	try {
		auto h = loom::plugin::locality_option(optarg ? optarg : "");
		if (!h) {
			slurm_error("loom: %s", h.error().str().c_str());
			return -1;
		}
		return 0;
	} catch (...) {
		return -1;
	}
}

struct spank_option g_options[] = {
	{const_cast<char *>(loom::plugin::opt_comm), const_cast<char *>(loom::place::comm_words),
	 const_cast<char *>("[loom] communication intensity of the job: heavy gets the tightest, least "
			    "loaded part of the fabric (default: normal)"),
	 1, 0, opt_comm},
	{const_cast<char *>(loom::plugin::opt_locality), const_cast<char *>(loom::place::locality_words),
	 const_cast<char *>("[loom] fit the whole job under one fabric domain of this kind (leaf, pod, "
			    "nvlink, ...); strict: wait until it fits, prefer: best effort (default)"),
	 1, 0, opt_locality},
	SPANK_OPTIONS_TABLE_END};

} // namespace

extern "C" int slurm_spank_init(spank_t sp, int ac, char **av)
{
	try {
		// It takes no arguments: a word on its plugstack.conf line is a
		// mistake (meant for another plugin?) and is refused, not ignored.
		if (ac > 0) {
			slurm_error("spank_place: unknown argument '%s' in plugstack.conf (it takes none)", av[0]);
			return -1;
		}
		// Slurm 22.05's sbatch/salloc ignore a static spank_options table:
		// register in every context.
		for (struct spank_option *o = g_options; o->name; o++) {
			spank_err_t rc = spank_option_register(sp, o);
			if (rc != ESPANK_SUCCESS) {
				slurm_error("loom: cannot register --%s: %s", o->name, spank_strerror(rc));
				return -1;
			}
		}
		return 0;
	} catch (...) {
		return -1;
	}
}
