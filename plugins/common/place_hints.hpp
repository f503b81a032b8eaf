// Placement hints a user gives at submit time through SPANK options
// (plugins/spank_place) and select/topo reads back in slurmctld from the
// job's SPANK environment. One parser for both sides, so that whatever sbatch
// accepted is exactly what the scheduler sees.
#pragma once

#include "lib/util/expected.hpp"

#include <string>
#include <string_view>

namespace loom::plugin {

enum class Comm { light, normal, heavy };

struct PlaceHints {
	Comm comm = Comm::normal;
	// Domain kind the gang should fit in ("leaf", "pod", "nvlink", ...); "" = no preference.
	std::string locality;
	bool strict = false;    // must fit in one such domain (wait otherwise)
};

// --comm=heavy|normal|light
expected<Comm> parse_comm(std::string_view value);
const char *comm_name(Comm c);
// --locality=KIND[:strict|:prefer]  e.g. "leaf", "pod:strict", "nvlink:prefer"
status parse_locality(std::string_view value, PlaceHints &hints);

// Environment variable names sbatch gives these options in the job's SPANK
// environment (Slurm: _SLURM_SPANK_OPTION_<plugin>_<option>).
constexpr const char *spank_plugin_name = "loom_place";
constexpr const char *env_comm = "_SLURM_SPANK_OPTION_loom_place_comm";
constexpr const char *env_locality = "_SLURM_SPANK_OPTION_loom_place_locality";

// Read the hints from a job's SPANK environment ("NAME=value" strings).
// Values that do not parse are an error naming the option and the value.
expected<PlaceHints> hints_from_env(char **env, unsigned count);

} // namespace loom::plugin
