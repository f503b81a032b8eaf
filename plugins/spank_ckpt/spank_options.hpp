// spank_ckpt: its sbatch/srun/salloc options (--ckpt, --ckpt-dir, ...),
// each judged by lib/ckpt's apply_option against the site's configuration
// as Slurm parses it.
#pragma once

#include "lib/ckpt/options.hpp"

#include <optional>
#include <vector>

extern "C" {
#include <slurm/spank.h>
}

namespace loom::spank_ckpt {

// Where the options go: the site's configuration (unset: refused at init),
// the job's options, and a flag set when one is refused.
struct OptionTarget {
	const std::optional<ckpt::SiteConfig> *site = nullptr;
	ckpt::JobOptions *opts = nullptr;
	bool *bad = nullptr;
};
std::vector<spank_option> &ckpt_options(const OptionTarget &target);

} // namespace loom::spank_ckpt
