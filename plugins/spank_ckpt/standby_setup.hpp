// spank_ckpt: what the batch step of a job with standby nodes sets up
// (spank_ckpt(8), STANDBY NODES): which nodes are active (job_submit/loom's
// LOOM_CKPT_STANDBY and LOOM_CKPT_ACTIVE), the script's environment that
// keeps its steps on them and asks the SDKs for progress reports, and the
// keeper's configuration.
#pragma once

#include "lib/ckpt/options.hpp"
#include "plugins/spank_ckpt/job.hpp"
#include "plugins/spank_ckpt/standby_keeper.hpp"

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace loom::spank_ckpt {

struct StandbySetup {
	std::string notice; // for the job's output: the option was given, no standbys were added
	std::string error;  // for slurmd's log: the layout could not be made
	std::vector<std::pair<std::string, std::string>> env;
	std::optional<KeeperConfig> keeper; // none without a standby left
};

using JobEnv = std::function<std::string(const char *name)>;
StandbySetup plan_standby_job(const ckpt::SiteConfig &site, const ckpt::JobOptions &opts, const JobFacts &facts,
			      const std::string &ckpt_dir, const JobEnv &get);

} // namespace loom::spank_ckpt
