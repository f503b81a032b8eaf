#include "plugins/select_topo/config.hpp"

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
		.integer("max_candidates", &c.max_candidates, 1, 16, "node sets tried per job")
		.choice("placement", &c.placement, {"topo", "cons_tres"}, "who places jobs")
		.string("weights", &c.weights_file, "placement weights file")
		.string("explain_dir", &c.explain_dir, "where decisions are kept for loom place --explain");
	status r = s.parse_file(path);
	if (!r)
		return unexpected(r.error());
	return c;
}

} // namespace loom::select_topo
