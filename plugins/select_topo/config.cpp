#include "plugins/select_topo/config.hpp"

#include "lib/place/spares.hpp"
#include "lib/util/config.hpp"

#include <cerrno>
#include <sys/stat.h>

namespace loom::select_topo {

expected<Config> read_config(const std::string &path)
{
	Config c;
	struct stat st;
	if (path.empty() || ::stat(path.c_str(), &st) != 0) {
		if (errno != ENOENT && !path.empty())
			return unexpected(path, "cannot read");
		return c;
	}
	c.path = path;
	ConfigSchema s;
	s.string("cluster_file", &c.cluster_file, "fabric file (default: Slurm's topology.conf)")
		.list("gpu_classes", &c.gpu_classes, "GPU generation features, slowest first")
		.list("level_names", &c.level_names, "names of the fabric's levels from the leaves up (--locality kinds)")
		.integer("max_candidates", &c.max_candidates, 1, 16, "node sets tried per job")
		.choice("placement", &c.placement, {"topo", "cons_tres"}, "who places jobs")
		.choice("will_run", &c.will_run, {"engine", "cons_tres"}, "who plans backfill's starts")
		.string("weights", &c.weights_file, "placement weights file")
		.string("explain_dir", &c.explain_dir, "where decisions are kept for loom place --explain")
		.string("failure_stats", &c.failure_stats,
			"jobcomp/health failure statistics for health weights (none: off)")
		.duration("failure_stats_poll", &c.failure_stats_poll_s, 1, 3600, "how often failure_stats is checked")
		.duration("node_sweep", &c.node_sweep_s, 0, 3600,
			  "how often, at most, the whole node table is read (0: at every node record change)")
		.boolean("snapshot_check", &c.snapshot_check,
			 "compare the engine's state with a full read at every job_test (tests)")
		.string("spares", &c.spares, "spare nodes per domain kind (leaf:1,nvlink:2,pod:5%)")
		.duration("spare_lend", &c.spare_lend_s, 0, 30 * 86400, "longest time limit of a job that may use spares")
		.string("spare_file", &c.spare_file, "where the spare pool is published (absolute path)");
	place::add_tier_keys(s, &c.tiers);
	status r = s.parse_file(path);
	if (!r)
		return unexpected(r.error());
	if (status t = place::check_tiers(c.tiers, c.gpu_classes, path); !t)
		return unexpected(t.error());
	if (auto sp = place::parse_spares(c.spares); !sp)
		return unexpected(path, sp.error().str());
	if (!c.spare_file.empty() && c.spare_file[0] != '/')
		return unexpected(path, "spare_file='" + c.spare_file + "': expected an absolute path");
	if (!c.failure_stats.empty() && c.failure_stats != "none" && c.failure_stats[0] != '/')
		return unexpected(path, "failure_stats='" + c.failure_stats + "': expected an absolute path or none");
	return c;
}

} // namespace loom::select_topo
