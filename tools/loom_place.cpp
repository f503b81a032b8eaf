// loom place: explain a placement decision: the same engine, the same answer
// as select/topo inside slurmctld.
//
//   loom place --explain --cluster FILE [--state FILE] --request "nodes=4 gpus_per_node=8"
//              [--weights FILE] [--candidates N] [--baseline] [--json]
//   loom place --spares [--spare-file FILE] [--json]
#include "tools/command.hpp"
#include "tools/options.hpp"

#include "lib/exchange/spare_file.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/subprocess.hpp"

#include "lib/place/engine.hpp"
#include "lib/place/explain.hpp"
#include "lib/place/state_file.hpp"
#include "lib/topo/cluster_json.hpp"
#include "lib/util/config.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

namespace {

// StateSaveLocation/loom-spares.json, as slurmctld's configuration has it.
loom::expected<std::string> default_spare_file()
{
	auto r = loom::run_command({"scontrol", "show", "config"}, 10);
	if (!r)
		return loom::unexpected(r.error());
	if (r->exit_code != 0)
		return loom::unexpected("scontrol show config", std::string(loom::trim(r->output)));
	for (const std::string &l : loom::split_lines(r->output)) {
		std::string_view t = loom::trim(l);
		if (t.rfind("StateSaveLocation", 0) != 0)
			continue;
		auto eq = t.find('=');
		if (eq != std::string_view::npos)
			return loom::path_join(loom::trim(t.substr(eq + 1)), "loom-spares.json");
	}
	return loom::unexpected("scontrol show config", "no StateSaveLocation line (give --spare-file)");
}

int spares_main(std::string file, bool json)
{
	using namespace loom;
	if (file.empty()) {
		auto f = default_spare_file();
		if (!f) {
			std::fprintf(stderr, "loom place --spares: %s\n", f.error().str().c_str());
			return tool::exit_problems;
		}
		file = *f;
	}
	auto pool = exchange::read_spare_file(file);
	if (!pool) {
		std::fprintf(stderr, "loom place --spares: %s\n", pool.error().str().c_str());
		return tool::exit_problems;
	}
	if (json) {
		std::fputs(exchange::spare_file_json(*pool).c_str(), stdout);
		return tool::exit_ok;
	}
	size_t want = 0, have = 0, w_kind = 4, w_name = 6;
	for (const auto &d : pool->domains) {
		w_kind = std::max(w_kind, d.kind.size());
		w_name = std::max(w_name, d.name.size());
	}
	std::printf("%-*s  %-*s  %5s  %4s  %s\n", static_cast<int>(w_kind), "KIND", static_cast<int>(w_name), "DOMAIN",
		    "NODES", "WANT", "SPARES");
	for (const auto &d : pool->domains) {
		want += static_cast<size_t>(d.want);
		have += d.spares.size();
		std::string spares = d.spares.empty() ? "-" : hostlist_compress(d.spares);
		if (static_cast<int>(d.spares.size()) < d.want)
			spares +=
				"  (short: " + std::to_string(d.spares.size()) + " of " + std::to_string(d.want) + ")";
		std::printf("%-*s  %-*s  %5zu  %4d  %s\n", static_cast<int>(w_kind), d.kind.c_str(),
			    static_cast<int>(w_name), d.name.c_str(), d.nodes.size(), d.want, spares.c_str());
	}
	std::printf("%zu of %zu spares in %zu domains; jobs with a time limit up to %s may use them; %s\n", have, want,
		    pool->domains.size(), pool->lend_max_s ? format_duration(pool->lend_max_s).c_str() : "0 (none)",
		    file.c_str());
	return have < want ? tool::exit_problems : tool::exit_ok;
}

struct PlaceArgs {
	std::string cluster_file, state_file, request_text, spare_file;
	bool json = false, baseline = false, show_weights = false, have_request = false, spares = false;
	int64_t candidates = 2;
	loom::place::Weights weights;
};

loom::tool::Setter read_weights(loom::place::Weights &w)
{
	return [&w](const std::string &v) {
		auto f = loom::place::load_weights_file(v);
		if (!f)
			return f.error().str();
		auto tiers = w.tiers;
		int clock = w.clock_minute;
		w = *f;
		w.tiers = tiers;
		w.clock_minute = clock;
		return std::string();
	};
}

loom::tool::Setter read_tiers(loom::place::Weights &w)
{
	return [&w](const std::string &v) {
		auto t = loom::place::read_tier_table(v);
		if (!t)
			return t.error().str();
		if (!t->empty())
			w.tiers = std::make_shared<const loom::place::TierTable>(std::move(*t));
		return std::string();
	};
}

loom::tool::Setter set_clock(int &minute)
{
	return [&minute](const std::string &v) {
		auto colon = v.find(':');
		auto h = loom::parse_int(v.substr(0, colon), 0, 23);
		auto m = colon == std::string::npos ? h : loom::parse_int(v.substr(colon + 1), 0, 59);
		if (colon == std::string::npos || !h || !m)
			return std::string("expected HH:MM");
		minute = static_cast<int>(*h * 60 + *m);
		return std::string();
	};
}

loom::tool::OptionTable place_options(PlaceArgs &a)
{
	using namespace loom::tool;
	OptionTable t("loom place", "[--explain] --cluster FILE [--state FILE] --request \"KEY=VALUE ...\" [OPTION]...",
		      "Prints the nodes the placement engine chooses for the request, the runner-up and why.");
	t.also("--spares [--spare-file FILE] [--json]");
	t.add("--explain", "", "the decision and why (the default)", [](const std::string &) { return std::string(); })
		.add("--cluster", "FILE", "loom cluster file (loom topo build)", set_string(a.cluster_file))
		.add("--state", "FILE", "nodes in use, suspect or down (default: all idle); see loom-place(1)",
		     set_string(a.state_file))
		.add("--request", "TEXT", "e.g. \"nodes=4 gpus_per_node=8 class=h100 comm=heavy\"",
		     [&a](const std::string &v) {
			     a.request_text = v;
			     a.have_request = true;
			     return std::string();
		     })
		.add_input("--weights", "FILE", "score weights (default: built in, see --show-weights)",
			   read_weights(a.weights))
		.add_input("--topo-conf", "FILE",
			   "the GPU classes, prices and tiers of this loom-topo.conf (tier=, min_class=,\n"
			   "gpu_mem= in requests; a price per hour on each candidate)",
			   read_tiers(a.weights))
		.add("--clock", "HH:MM", "the time of day for prices (default: now)", set_clock(a.weights.clock_minute))
		.add("--candidates", "N", "how many candidates to list (default 2)", set_int(a.candidates, 1, 100))
		.add("--baseline", "", "also show what Slurm's topology/tree would choose", set_flag(a.baseline))
		.add("--json", "", "machine-readable output", set_flag(a.json))
		.add("--show-weights", "", "print the weights in effect and exit", set_flag(a.show_weights))
		.add("--spares", "",
		     "the spare pool per domain, as select/topo keeps it (spares= in\n"
		     "loom-topo.conf); from --spare-file FILE, default the file in\n"
		     "StateSaveLocation (asked of scontrol show config)",
		     set_flag(a.spares))
		.add("--spare-file", "FILE", "the spare pool file --spares reads", [&a](const std::string &v) {
			a.spare_file = v;
			a.spares = true;
			return std::string();
		});
	t.epilog("Exit: 0 placed, 1 cannot fit now or bad input, 2 bad usage.");
	return t;
}

void print_decision(const loom::topo::Cluster &c, const loom::place::Request &r, const loom::place::Decision &d,
		    const loom::place::Decision *b, bool json)
{
	using namespace loom;
	if (json) {
		std::string out = place::decision_json(c, r, d);
		if (b) // one JSON document: {"engine": ..., "baseline": ...}
			out = "{\"engine\": " + out + ", \"baseline\": " + place::decision_json(c, r, *b) + "}\n";
		std::fputs(out.c_str(), stdout);
		return;
	}
	std::fputs(place::format_decision(c, r, d).c_str(), stdout);
	if (b) {
		std::string text = place::format_decision(c, r, *b);
		std::fputs(("\nSlurm topology/tree would choose:\n" + text.substr(text.find('\n') + 1)).c_str(),
			   stdout);
	}
}

int explain(const PlaceArgs &a, const loom::place::Request &request)
{
	using namespace loom;
	auto cluster = topo::load_cluster_file(a.cluster_file);
	if (!cluster) {
		std::fprintf(stderr, "loom place: %s\n", cluster.error().str().c_str());
		return tool::exit_problems;
	}
	auto state = a.state_file.empty() ? expected<place::State>(place::State(*cluster))
					  : place::load_state_file(*cluster, a.state_file);
	if (!state) {
		std::fprintf(stderr, "loom place: %s\n", state.error().str().c_str());
		return tool::exit_problems;
	}
	auto d = place::place(*state, request, nullptr, a.weights, static_cast<int>(a.candidates));
	if (!d) {
		std::fprintf(stderr, "loom place: %s\n", d.error().str().c_str());
		return tool::exit_problems;
	}
	expected<place::Decision> b = place::Decision{};
	if (a.baseline) {
		b = place::place_baseline(*state, request, nullptr, a.weights);
		if (!b) {
			std::fprintf(stderr, "loom place: baseline: %s\n", b.error().str().c_str());
			return tool::exit_problems;
		}
	}
	print_decision(*cluster, request, *d, a.baseline ? &*b : nullptr, a.json);
	return d->placed() ? tool::exit_ok : tool::exit_problems;
}

int place_main(int argc, char **argv)
{
	using namespace loom;
	PlaceArgs a;
	tool::OptionTable t = place_options(a);
	if (int rc = t.parse(argc, argv); rc >= 0)
		return rc;
	if (a.spares)
		return spares_main(a.spare_file, a.json);
	if (a.show_weights) {
		std::fputs(place::format_weights(a.weights).c_str(), stdout);
		return tool::exit_ok;
	}
	if (a.cluster_file.empty() || !a.have_request) {
		std::fprintf(stderr, "loom place: --cluster and --request are required\n");
		t.usage(stderr);
		return tool::exit_usage;
	}
	auto request = place::parse_request(a.request_text, "--request");
	if (!request) {
		std::fprintf(stderr, "loom place: %s\n", request.error().str().c_str());
		return tool::exit_usage;
	}
	return explain(a, *request);
}

loom::tool::Command place_command{"place", "explain a gang placement: chosen nodes, runner-up and why", place_main};

} // namespace
