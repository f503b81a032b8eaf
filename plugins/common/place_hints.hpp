// Placement hints a user gives at submit time through SPANK options
// (plugins/spank_place) and select/topo reads back in slurmctld from the
// job's SPANK environment. The words are lib/place/hints.hpp's, parsed by the
// same code on both sides, so that whatever sbatch accepted is exactly what
// the scheduler sees; this file only carries them.
#pragma once

#include "lib/place/hints.hpp"
#include "lib/util/expected.hpp"

#include <string_view>

namespace loom::plugin {

// The option names as sbatch shows them, and their argument words.
constexpr const char *opt_comm = "comm";
constexpr const char *opt_locality = "locality";
constexpr const char *opt_gpu_tier = "gpu-tier";
constexpr const char *opt_gpu_min_class = "gpu-min-class";
constexpr const char *opt_gpu_mem = "gpu-mem";
constexpr const char *opt_gpu_workload = "gpu-workload";
constexpr const char *opt_gpu_mixed = "gpu-mixed"; // no argument

// One option's value; errors name the option, the value and what is allowed:
// "--comm: bad value 'loud': expected heavy, normal or light".
expected<place::Comm> comm_option(std::string_view value);
expected<place::LocalityHint> locality_option(std::string_view value);
// A tier or class name (letters, digits, '-', '_'; the site's table says
// which exist), a size per GPU, train|infer.
expected<std::string> gpu_name_option(const char *option, std::string_view value);
expected<uint64_t> gpu_mem_option(std::string_view value);
expected<place::Workload> gpu_workload_option(std::string_view value);

// Environment variable names sbatch gives these options in the job's SPANK
// environment (Slurm: _SLURM_SPANK_OPTION_<plugin>_<option>).
constexpr const char *spank_plugin_name = "loom_place";
constexpr const char *env_comm = "_SLURM_SPANK_OPTION_loom_place_comm";
constexpr const char *env_locality = "_SLURM_SPANK_OPTION_loom_place_locality";
// Slurm writes an option name's '-' as '_' there.
constexpr const char *env_gpu_tier = "_SLURM_SPANK_OPTION_loom_place_gpu_tier";
constexpr const char *env_gpu_min_class = "_SLURM_SPANK_OPTION_loom_place_gpu_min_class";
constexpr const char *env_gpu_mem = "_SLURM_SPANK_OPTION_loom_place_gpu_mem";
constexpr const char *env_gpu_workload = "_SLURM_SPANK_OPTION_loom_place_gpu_workload";
// An option without an argument is there with an empty value (or "(null)",
// as Slurm writes a missing one): its presence is the flag.
constexpr const char *env_gpu_mixed = "_SLURM_SPANK_OPTION_loom_place_gpu_mixed";

// Read the hints from a job's SPANK environment ("NAME=value" strings).
// Values that do not parse are an error naming the option and the value.
expected<place::Hints> hints_from_env(char **env, unsigned count);

} // namespace loom::plugin
