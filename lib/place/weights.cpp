// Weights: defaults in weights.hpp, a fail-closed key=value schema here.
#include "lib/place/weights.hpp"

#include "lib/util/log.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace loom::place {

namespace {

ConfigSchema::Setter number(double *out)
{
	return [out](std::string_view v) -> status {
		auto x = parse_real(v, 0, 1e6);
		if (!x)
			return unexpected(x.error());
		*out = *x;
		return ok();
	};
}

} // namespace

ConfigSchema weights_schema(Weights &w)
{
	ConfigSchema s;
	s.add("level", "per level above the leaves", number(&w.level))
		.add("leaf", "per extra leaf spanned", number(&w.leaf))
		.add("nvlink", "per extra NVLink domain spanned", number(&w.nvlink))
		.add("suspect", "per suspect node", number(&w.suspect))
		.add("health", "times (1 - health weight) per node", number(&w.health))
		.add("faster_class", "per node of a faster class", number(&w.faster_class))
		.add("mixed_class", "per extra GPU class in the gang", number(&w.mixed_class))
		.add("idle_leaf", "per idle leaf taken in part", number(&w.idle_leaf))
		.add("idle_node", "per idle node a sub-node job starts on", number(&w.idle_node))
		.add("stranded", "per node of capacity left in the common domain", number(&w.stranded))
		.add("load_heavy", "times the domain occupancy, heavy communication", number(&w.load_heavy))
		.add("load_normal", "times the domain occupancy, normal communication", number(&w.load_normal))
		.add("load_light", "times the domain occupancy, light communication", number(&w.load_light))
		.add("link_heavy", "times the leaves' link degradation, heavy communication", number(&w.link_heavy))
		.add("link_normal", "times the leaves' link degradation, normal communication", number(&w.link_normal))
		.add("link_light", "times the leaves' link degradation, light communication", number(&w.link_light))
		.add("value_wait", "share of its time limit a value-tier job may wait for its cheapest class", number(&w.value_wait))
		.add("balance_time", "exponent of time in the balanced tier's key", number(&w.balance_time))
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
				  "load_normal=%g\nload_light=%g\nlink_heavy=%g\nlink_normal=%g\nlink_light=%g\nvalue_wait=%g\nbalance_time=%g\nclass_order=",
				  w.level, w.leaf, w.nvlink, w.suspect, w.health, w.faster_class, w.mixed_class,
				  w.idle_leaf, w.idle_node, w.stranded, w.load_heavy, w.load_normal, w.load_light,
				  w.link_heavy, w.link_normal, w.link_light, w.value_wait, w.balance_time);
	for (size_t i = 0; i < w.class_order.size(); i++)
		s += (i ? "," : "") + w.class_order[i];
	return s + "\n";
}

} // namespace loom::place
