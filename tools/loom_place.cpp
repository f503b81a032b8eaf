// loom place: explain a placement decision: the same engine, the same answer
// as select/topo inside slurmctld.
//
//   loom place --explain --cluster FILE [--state FILE] --request "nodes=4 gpus_per_node=8"
//              [--weights FILE] [--candidates N] [--baseline] [--json]
//   loom place --spares [--spare-file FILE] [--json]
#include "tools/command.hpp"

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

void usage(FILE *out)
{
	std::fprintf(out,
		     "usage: loom place [--explain] --cluster FILE [--state FILE] --request \"KEY=VALUE ...\"\n"
		     "                  [--weights FILE] [--topo-conf FILE] [--clock HH:MM] [--candidates N]\n"
		     "                  [--baseline] [--json]\n"
		     "       loom place --spares [--spare-file FILE] [--json]\n"
		     "\n"
		     "Prints the nodes the placement engine chooses for the request, the runner-up and why.\n"
		     "  --cluster FILE    loom cluster file (loom topo build)\n"
		     "  --state FILE      nodes in use, suspect or down (default: all idle); see loom-place(1)\n"
		     "  --request TEXT    e.g. \"nodes=4 gpus_per_node=8 class=h100 comm=heavy\"\n"
		     "  --weights FILE    score weights (default: built in, see --show-weights)\n"
		     "  --topo-conf FILE  the GPU classes, prices and tiers of this loom-topo.conf (tier=, min_class=,\n"
		     "                    gpu_mem= in requests; a price per hour on each candidate)\n"
		     "  --clock HH:MM     the time of day for prices (default: now)\n"
		     "  --candidates N    how many candidates to list (default 2)\n"
		     "  --baseline        also show what Slurm's topology/tree would choose\n"
		     "  --json            machine-readable output\n"
		     "  --show-weights    print the weights in effect and exit\n"
		     "  --spares          the spare pool per domain, as select/topo keeps it (spares= in\n"
		     "                    loom-topo.conf); from --spare-file FILE, default the file in\n"
		     "                    StateSaveLocation (asked of scontrol show config)\n"
		     "Exit: 0 placed, 1 cannot fit now or bad input, 2 bad usage.\n");
}

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
			spares += "  (short: " + std::to_string(d.spares.size()) + " of " + std::to_string(d.want) + ")";
		std::printf("%-*s  %-*s  %5zu  %4d  %s\n", static_cast<int>(w_kind), d.kind.c_str(),
			    static_cast<int>(w_name), d.name.c_str(), d.nodes.size(), d.want, spares.c_str());
	}
	std::printf("%zu of %zu spares in %zu domains; jobs with a time limit up to %s may use them; %s\n", have, want,
		    pool->domains.size(), pool->lend_max_s ? format_duration(pool->lend_max_s).c_str() : "0 (none)",
		    file.c_str());
	return have < want ? tool::exit_problems : tool::exit_ok;
}

int place_main(int argc, char **argv)
{
	using namespace loom;
	std::string cluster_file, state_file, request_text, weights_file, topo_conf, clock;
	bool json = false, baseline = false, show_weights = false, have_request = false, spares = false;
	std::string spare_file;
	int64_t candidates = 2;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		auto value = [&](std::string &out) {
			if (i + 1 >= argc)
				return false;
			out = argv[++i];
			return true;
		};
		std::string v;
		if (a == "--help" || a == "-h") {
			usage(stdout);
			return tool::exit_ok;
		} else if (a == "--explain") {
		} else if (a == "--json") {
			json = true;
		} else if (a == "--baseline") {
			baseline = true;
		} else if (a == "--show-weights") {
			show_weights = true;
		} else if (a == "--spares") {
			spares = true;
		} else if (a == "--spare-file" && value(spare_file)) {
			spares = true;
		} else if (a == "--cluster" && value(cluster_file)) {
		} else if (a == "--state" && value(state_file)) {
		} else if (a == "--request" && value(request_text)) {
			have_request = true;
		} else if (a == "--weights" && value(weights_file)) {
		} else if (a == "--topo-conf" && value(topo_conf)) {
		} else if (a == "--clock" && value(clock)) {
		} else if (a == "--candidates" && value(v)) {
			auto n = parse_int(v, 1, 100);
			if (!n)
				return tool::bad_value("loom place", "--candidates", v, n.error().message);
			candidates = *n;
		} else {
			std::fprintf(stderr, "loom place: unknown or incomplete option '%s'\n", a.c_str());
			usage(stderr);
			return tool::exit_usage;
		}
	}
	if (spares)
		return spares_main(spare_file, json);
	place::Weights weights;
	if (!weights_file.empty()) {
		auto w = place::load_weights_file(weights_file);
		if (!w) {
			std::fprintf(stderr, "loom place: %s\n", w.error().str().c_str());
			return tool::exit_problems;
		}
		weights = *w;
	}
	if (!topo_conf.empty()) {
		auto t = place::read_tier_table(topo_conf);
		if (!t) {
			std::fprintf(stderr, "loom place: %s\n", t.error().str().c_str());
			return tool::exit_problems;
		}
		if (!t->empty())
			weights.tiers = std::make_shared<const place::TierTable>(std::move(*t));
	}
	if (!clock.empty()) {
		auto colon = clock.find(':');
		auto h = parse_int(clock.substr(0, colon), 0, 23);
		auto m = colon == std::string::npos ? h : parse_int(clock.substr(colon + 1), 0, 59);
		if (colon == std::string::npos || !h || !m)
			return tool::bad_value("loom place", "--clock", clock, "expected HH:MM");
		weights.clock_minute = static_cast<int>(*h * 60 + *m);
	}
	if (show_weights) {
		std::fputs(place::format_weights(weights).c_str(), stdout);
		return tool::exit_ok;
	}
	if (cluster_file.empty() || !have_request) {
		std::fprintf(stderr, "loom place: --cluster and --request are required\n");
		usage(stderr);
		return tool::exit_usage;
	}
	auto request = place::parse_request(request_text, "--request");
	if (!request) {
		std::fprintf(stderr, "loom place: %s\n", request.error().str().c_str());
		return tool::exit_usage;
	}
	auto cluster = topo::load_cluster_file(cluster_file);
	if (!cluster) {
		std::fprintf(stderr, "loom place: %s\n", cluster.error().str().c_str());
		return tool::exit_problems;
	}
	auto state = state_file.empty() ? expected<place::State>(place::State(*cluster))
					 : place::load_state_file(*cluster, state_file);
	if (!state) {
		std::fprintf(stderr, "loom place: %s\n", state.error().str().c_str());
		return tool::exit_problems;
	}
	auto d = place::place(*state, *request, nullptr, weights, static_cast<int>(candidates));
	if (!d) {
		std::fprintf(stderr, "loom place: %s\n", d.error().str().c_str());
		return tool::exit_problems;
	}
	expected<place::Decision> b = place::Decision{};
	if (baseline) {
		b = place::place_baseline(*state, *request, nullptr, weights);
		if (!b) {
			std::fprintf(stderr, "loom place: baseline: %s\n", b.error().str().c_str());
			return tool::exit_problems;
		}
	}
	if (json) {
		std::string out = place::decision_json(*cluster, *request, *d);
		if (baseline) // one JSON document: {"engine": ..., "baseline": ...}
			out = "{\"engine\": " + out + ", \"baseline\": " + place::decision_json(*cluster, *request, *b) + "}\n";
		std::fputs(out.c_str(), stdout);
	} else {
		std::fputs(place::format_decision(*cluster, *request, *d).c_str(), stdout);
		if (baseline) {
			std::string text = place::format_decision(*cluster, *request, *b);
			std::fputs(("\nSlurm topology/tree would choose:\n" + text.substr(text.find('\n') + 1)).c_str(),
				   stdout);
		}
	}
	return d->placed() ? tool::exit_ok : tool::exit_problems;
}

loom::tool::Command place_command{"place", "explain a gang placement: chosen nodes, runner-up and why", place_main};

} // namespace
