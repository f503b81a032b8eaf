// The state file: read and written line by line with the fail-closed parser.
#include "lib/place/state_file.hpp"

#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/log.hpp"

#include <cmath>
#include <cstdlib>

namespace loom::place {

namespace {

struct Line {
	int64_t used_gpus = 0, used_cores = 0, gpus = -1, cores = -1;
	std::string health = "1";
	bool suspect = false, down = false, link_suspect = false;

	ConfigSchema schema()
	{
		ConfigSchema s;
		s.integer("used_gpus", &used_gpus, 0, 65535)
			.integer("used_cores", &used_cores, 0, 1 << 24)
			.integer("gpus", &gpus, 0, 65535)
			.integer("cores", &cores, 0, 1 << 24)
			.add("health", "health weight 0..1",
			     [this](std::string_view v) -> status {
				     std::string t(v);
				     char *end = nullptr;
				     double x = t.empty() ? NAN : std::strtod(t.c_str(), &end);
				     if (t.empty() || *end || !(x >= 0 && x <= 1))
					     return unexpected("expected a number between 0 and 1");
				     health = t;
				     return ok();
			     })
			.boolean("suspect", &suspect)
			.boolean("link_suspect", &link_suspect)
			.boolean("down", &down);
		return s;
	}
};

status apply_line(State &state, std::string_view line, const std::string &where)
{
	size_t sp = line.find_first_of(" \t");
	std::string_view names = line.substr(0, sp);
	std::string_view rest = sp == std::string_view::npos ? std::string_view() : line.substr(sp + 1);
	auto list = hostlist_expand(names, state.node_count() + 1);
	if (!list)
		return unexpected(list.error().within(where));
	Line v;
	if (auto st = v.schema().parse_words(rest, where); !st)
		return st;
	double health = std::strtod(v.health.c_str(), nullptr);
	for (const std::string &name : *list) {
		Index n = state.cluster().find_node(name);
		if (n == topo::none)
			return unexpected(where, "node '" + name + "' is not in the cluster");
		int gpus = v.gpus >= 0 ? static_cast<int>(v.gpus) : state.cluster().nodes[n].gpu_count;
		int cores = v.cores >= 0 ? static_cast<int>(v.cores) : state.model_cores(n);
		if (v.used_gpus > gpus || v.used_cores > cores)
			return unexpected(where, strprintf("node '%s': uses %lld GPUs and %lld cores of %d and %d",
							   name.c_str(), static_cast<long long>(v.used_gpus),
							   static_cast<long long>(v.used_cores), gpus, cores));
		status st = state.set_capacity(n, gpus, cores);
		if (st)
			st = state.set_node_free(n, gpus - static_cast<int>(v.used_gpus),
						 cores - static_cast<int>(v.used_cores));
		if (st)
			st = state.set_health(n, health, v.suspect);
		if (st)
			st = state.set_link_suspect(n, v.link_suspect);
		if (st)
			st = state.set_available(n, !v.down);
		if (!st)
			return unexpected(st.error().within(where));
	}
	return ok();
}

} // namespace

status apply_state(State &state, std::string_view text, const std::string &source)
{
	size_t lineno = 0;
	for (const std::string &raw : split_lines(text)) {
		lineno++;
		std::string_view line = raw;
		if (size_t hash = line.find('#'); hash != std::string_view::npos)
			line = line.substr(0, hash);
		line = trim(line);
		if (line.empty())
			continue;
		if (auto st = apply_line(state, line, source + ":" + std::to_string(lineno)); !st)
			return st;
	}
	return ok();
}

expected<State> read_state(const topo::Cluster &cluster, std::string_view text, const std::string &source)
{
	State s(cluster);
	if (auto st = apply_state(s, text, source); !st)
		return unexpected(st.error());
	return s;
}

expected<State> load_state_file(const topo::Cluster &cluster, const std::string &path)
{
	auto text = read_file(path);
	if (!text)
		return unexpected(text.error());
	return read_state(cluster, *text, path);
}

std::string write_state(const State &s)
{
	std::string out = "# loom place state 1\n";
	const topo::Cluster &c = s.cluster();
	for (size_t i = 0; i < s.node_count(); i++) {
		Index n = static_cast<Index>(i);
		std::string line;
		if (s.total_gpus(n) != c.nodes[i].gpu_count || s.total_cores(n) != s.model_cores(n))
			line += strprintf(" gpus=%d cores=%d", s.total_gpus(n), s.total_cores(n));
		if (s.free_gpus(n) != s.total_gpus(n))
			line += strprintf(" used_gpus=%d", s.total_gpus(n) - s.free_gpus(n));
		if (s.free_cores(n) != s.total_cores(n))
			line += strprintf(" used_cores=%d", s.total_cores(n) - s.free_cores(n));
		if (s.health(n) != 1.0)
			line += strprintf(" health=%.9g", s.health(n));
		if (s.suspect(n))
			line += " suspect=yes";
		if (s.link_suspect(n))
			line += " link_suspect=yes";
		if (!s.available(n))
			line += " down=yes";
		if (!line.empty())
			out += c.nodes[i].name + line + "\n";
	}
	return out;
}

} // namespace loom::place
