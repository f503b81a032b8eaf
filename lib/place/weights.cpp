// Weights: defaults in weights.hpp, a fail-closed key=value schema here.
#include "lib/place/weights.hpp"

#include "lib/util/log.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace loom::place {

ConfigSchema weights_schema(Weights &w)
{
	ConfigSchema s;
	s.real("level", &w.level, 0, 1e6, "per level above the leaves")
		.real("leaf", &w.leaf, 0, 1e6, "per extra leaf spanned")
		.real("nvlink", &w.nvlink, 0, 1e6, "per extra NVLink domain spanned")
		.real("suspect", &w.suspect, 0, 1e6, "per suspect node")
		.real("health", &w.health, 0, 1e6, "times (1 - health weight) per node")
		.real("faster_class", &w.faster_class, 0, 1e6, "per node of a faster class")
		.real("mixed_class", &w.mixed_class, 0, 1e6, "per extra GPU class in the gang")
		.real("idle_leaf", &w.idle_leaf, 0, 1e6, "per idle leaf taken in part")
		.real("idle_node", &w.idle_node, 0, 1e6, "per idle node a sub-node job starts on")
		.real("stranded", &w.stranded, 0, 1e6, "per node of capacity left in the common domain")
		.real("load_heavy", &w.load_heavy, 0, 1e6, "times the domain occupancy, heavy communication")
		.real("load_normal", &w.load_normal, 0, 1e6, "times the domain occupancy, normal communication")
		.real("load_light", &w.load_light, 0, 1e6, "times the domain occupancy, light communication")
		.real("link_heavy", &w.link_heavy, 0, 1e6, "times the leaves' link degradation, heavy communication")
		.real("link_normal", &w.link_normal, 0, 1e6, "times the leaves' link degradation, normal communication")
		.real("link_light", &w.link_light, 0, 1e6, "times the leaves' link degradation, light communication")
		.real("value_wait", &w.value_wait, 0, 1e6,
		      "share of its time limit a value-tier job may wait for its cheapest class")
		.real("balance_time", &w.balance_time, 0, 1e6, "exponent of time in the balanced tier's key")
		.list("class_order", &w.class_order, "GPU classes from slowest to fastest");
	return s;
}

expected<Weights> parse_weights(std::string_view words, const std::string &where)
{
	Weights w;
	if (auto st = weights_schema(w).parse_words(words, where); !st)
		return unexpected(st.error());
	return w;
}

expected<Weights> load_weights_file(const std::string &path)
{
	Weights w;
	if (auto st = weights_schema(w).parse_file(path); !st)
		return unexpected(st.error());
	return w;
}

std::string format_weights(const Weights &w)
{
	std::string s = strprintf("level=%g\nleaf=%g\nnvlink=%g\nsuspect=%g\nhealth=%g\nfaster_class=%g\n"
				  "mixed_class=%g\nidle_leaf=%g\nidle_node=%g\nstranded=%g\nload_heavy=%g\n"
				  "load_normal=%g\nload_light=%g\nlink_heavy=%g\nlink_normal=%g\nlink_light=%g\nvalue_"
				  "wait=%g\nbalance_time=%g\nclass_order=",
				  w.level, w.leaf, w.nvlink, w.suspect, w.health, w.faster_class, w.mixed_class,
				  w.idle_leaf, w.idle_node, w.stranded, w.load_heavy, w.load_normal, w.load_light,
				  w.link_heavy, w.link_normal, w.link_light, w.value_wait, w.balance_time);
	for (size_t i = 0; i < w.class_order.size(); i++)
		s += (i ? "," : "") + w.class_order[i];
	return s + "\n";
}

} // namespace loom::place
