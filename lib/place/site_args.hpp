// spank_place's plugstack.conf arguments, parsed fail-closed:
//   required spank_place.so [rank_order=yes|no] [comm_env=yes|no] [conf_dir=DIR] [fabric_module=PATH]
// spank_place(8) CONFIGURATION is their spec; tests/tools/man_keys.py checks
// that page against site_args_schema.
#pragma once

#include "lib/util/config.hpp"
#include "lib/util/expected.hpp"

#include <string>

namespace loom::place {

struct SiteArgs {
	bool rank_order = true;    // LOOM_NODE_RANK, LOOM_HOSTFILE, LOOM_TASK_HOSTFILE in each step
	bool comm_env = false;     // jobs may ask for --comm-env=auto
	std::string conf_dir;      // "": the directory of SLURM_CONF, else Slurm's own
	std::string fabric_module; // "": loom_fabric.so beside spank_place.so
};

// The keys, bound to 'args'; read before parsing, its values are the defaults.
ConfigSchema site_args_schema(SiteArgs &args);
// The words Slurm passes the plugin; an unknown word or a bad value is an
// error naming 'where', the word and what is allowed.
expected<SiteArgs> parse_site_args(int argc, char *const argv[], const std::string &where);

} // namespace loom::place
