// loom-topo.conf, read whole and fail-closed (topo_conf.hpp).
#include "lib/place/topo_conf.hpp"

#include "lib/place/spare_spec.hpp"
#include "lib/util/config.hpp"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace loom::place {
namespace {

// A path select/topo opens from slurmctld, whatever its working directory.
ConfigSchema::Setter absolute_path(std::string *out, bool or_none)
{
	return [out, or_none](std::string_view v) -> status {
		if (v.empty() || (v[0] != '/' && !(or_none && v == "none")))
			return unexpected(or_none ? "expected an absolute path or none" : "expected an absolute path");
		*out = std::string(v);
		return ok();
	};
}

void add_keys(ConfigSchema &s, TopoConf &c)
{
	s.string("cluster_file", &c.cluster_file, "fabric file (default: Slurm's topology.conf)")
		.list("gpu_classes", &c.gpu_classes, "GPU generation features, slowest first")
		.list("level_names", &c.level_names, "names of the fabric's levels from the leaves up (--locality kinds)")
		.integer("max_candidates", &c.max_candidates, 1, 16, "node sets tried per job")
		.choice("placement", &c.placement, {"topo", "cons_tres"}, "who places jobs")
		.choice("will_run", &c.will_run, {"engine", "cons_tres"}, "who plans backfill's starts")
		.string("weights", &c.weights_file, "placement weights file")
		.string("explain_dir", &c.explain_dir, "where decisions are kept for loom place --explain")
		.add("failure_stats", "jobcomp/health failure statistics for health weights (none: off)",
		     absolute_path(&c.failure_stats, true), [&c] { return c.failure_stats; })
		.duration("failure_stats_poll", &c.failure_stats_poll_s, 1, 3600, "how often failure_stats is checked")
		.duration("node_sweep", &c.node_sweep_s, 0, 3600,
			  "how often, at most, the whole node table is read (0: at every node record change)")
		.boolean("snapshot_check", &c.snapshot_check,
			 "compare the engine's state with a full read at every job_test (tests)")
		.add("spares", "spare nodes per domain kind (leaf:1,nvlink:2,pod:5%)",
		     [&c](std::string_view v) -> status {
			     if (v.empty())
				     return unexpected("empty value");
			     if (auto sp = parse_spares(v); !sp)
				     return unexpected(sp.error());
			     c.spares = std::string(v);
			     return ok();
		     },
		     [&c] { return c.spares; })
		.duration("spare_lend", &c.spare_lend_s, 0, 30 * 86400, "longest time limit of a job that may use spares")
		.add("spare_file", "where the spare pool is published", absolute_path(&c.spare_file, false),
		     [&c] { return c.spare_file; });
	add_tier_keys(s, &c.tiers);
}

} // namespace

ConfigSchema topo_conf_schema(TopoConf &c)
{
	ConfigSchema s;
	add_keys(s, c);
	return s;
}

expected<TopoConf> read_topo_conf(const std::string &path)
{
	TopoConf c;
	struct stat st;
	if (path.empty())
		return c;
	if (::stat(path.c_str(), &st) != 0) {
		if (errno == ENOENT)
			return c;
		return unexpected(path, std::string("cannot read: ") + std::strerror(errno));
	}
	c.path = path;
	ConfigSchema s = topo_conf_schema(c);
	if (status r = s.parse_file(path); !r)
		return unexpected(r.error());
	if (status t = check_tiers(c.tiers, c.gpu_classes, path); !t)
		return unexpected(t.error());
	return c;
}

} // namespace loom::place
