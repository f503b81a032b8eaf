// loom ckpt: the site's configuration (plugin arguments in plugstack.conf)
// and a job's --ckpt* options, both parsed fail-closed.
//
// Every refusal names the option (or key) and the value: "--ckpt-keep: '0':
// must be between 1 and 20". The plugin only forwards the strings Slurm hands
// it; everything that decides lives here and is unit-tested.
#pragma once

#include "lib/ckpt/policy.hpp"
#include "lib/exchange/ckpt_job_env.hpp"
#include "lib/util/config.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loom::ckpt {

struct SiteConfig {
	std::string dir = "/var/tmp/loom-ckpt/%u/%j"; // default checkpoint directory pattern
	std::vector<std::string> roots;               // where users may put theirs (default: dir's fixed prefix)
	std::string interval = "auto";                // default --ckpt-interval
	IntervalBounds bounds;                        // interval_min, interval_max
	int64_t margin_min_s = 120;                   // least time-limit margin
	std::string signal = "USR2";                  // default --ckpt-signal
	int64_t keep = 3, keep_max = 20;
	int64_t max_restarts = 10, max_restarts_limit = 100;
	int64_t node_mtbf_s = 30LL * 86400; // per-node MTBF when no statistics say otherwise
	std::string failure_stats;          // JSON file (policy.hpp), optional
	int64_t ckpt_cost_s = 60;           // assumed write time before the first measurement
	std::string suspect_flag;           // per-node flag file pattern (%n = node), optional
	int64_t poll_s = 2;                 // coordinator's poll period
	bool requeue_on_time_limit = true;
	bool migrate = true;             // move a job off a suspect node after its checkpoint
	int64_t migrate_window_s = 3600; // at most one move per job per window
	std::string helper;              // loom-ckpt-helper; empty: where it was installed
	// Standbys (--ckpt-standby, job_submit/loom): the most a job may ask
	// for, where its srun and the coordinator meet on the batch host, and
	// the programs the coordinator runs.
	int64_t standby_max = 8;
	std::string standby_dir = "/run/loom-ckpt";
	std::string scontrol = "scontrol";
	std::string loom; // the loom program; empty: where it was installed
	// A hang (the ranks' progress reports): no step for max(factor x the
	// job's recent step time, floor).
	int64_t hang_factor = 10;
	int64_t hang_floor_s = 30;

	ConfigSchema schema();
	// Parse plugin arguments into a fresh config; check the result as a whole.
	static expected<SiteConfig> from_args(int argc, char *const argv[], const std::string &where);
};

struct JobOptions {
	bool enabled = false; // --ckpt, or any --ckpt-* option, unless --ckpt=off
	bool off = false;     // --ckpt=off given
	std::string dir;      // pattern; empty: the site's
	bool interval_auto = true;
	bool interval_given = false; // --ckpt-interval was given
	int64_t interval_s = 0;      // when not auto
	int signal = 0;              // 0: the site's
	std::string signal_name;
	int64_t keep = 0;          // 0: the site's
	int64_t max_restarts = -1; // -1: the site's
	std::string standby;       // --ckpt-standby: "N" or "auto"; empty: none
};

// Apply one option as the user typed it: name without dashes ("ckpt-keep"),
// value nullptr when none was given.
status apply_option(JobOptions &o, const SiteConfig &site, std::string_view name, const char *value);
// Fill in site defaults and check the options together (directory under the
// roots, interval within the bounds).
status finalize(JobOptions &o, const SiteConfig &site);
// What a finalized request carries to slurmctld with the job, for
// jobcomp/health (lib/exchange/ckpt_job_env.hpp): nothing when --ckpt is off.
exchange::CkptRequest job_request(const JobOptions &o);

struct PatternVars {
	std::string user, uid, job_id, node;
};
// %u user, %U uid, %j job id, %n node, %% a percent sign; other % escapes are errors.
expected<std::string> expand_pattern(std::string_view pattern, const PatternVars &v);
// Absolute, no '.', '..' or empty components, no control characters.
status check_clean_path(std::string_view path);
// The root (from roots) the path lies at or below; error when none.
expected<std::string> root_for(std::string_view path, const std::vector<std::string> &roots);

} // namespace loom::ckpt
