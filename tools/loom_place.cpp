// loom place: explain a placement decision: the same engine, the same answer
// as select/topo inside slurmctld.
//
//   loom place --explain --cluster FILE [--state FILE] --request "nodes=4 gpus_per_node=8"
//              [--weights FILE] [--candidates N] [--baseline] [--json]
#include "tools/command.hpp"

#include "lib/place/engine.hpp"
#include "lib/place/explain.hpp"
#include "lib/place/state_file.hpp"
#include "lib/topo/cluster_json.hpp"
#include "lib/util/config.hpp"

#include <cstdio>
#include <cstring>
#include <string>

namespace {

void usage(FILE *out)
{
	std::fprintf(out,
		     "usage: loom place [--explain] --cluster FILE [--state FILE] --request \"KEY=VALUE ...\"\n"
		     "                  [--weights FILE] [--candidates N] [--baseline] [--json]\n"
		     "\n"
		     "Prints the nodes the placement engine chooses for the request, the runner-up and why.\n"
		     "  --cluster FILE    loom cluster file (loom topo build)\n"
		     "  --state FILE      nodes in use, suspect or down (default: all idle); see loom-place(1)\n"
		     "  --request TEXT    e.g. \"nodes=4 gpus_per_node=8 class=h100 comm=heavy\"\n"
		     "  --weights FILE    score weights (default: built in, see --show-weights)\n"
		     "  --candidates N    how many candidates to list (default 2)\n"
		     "  --baseline        also show what Slurm's topology/tree would choose\n"
		     "  --json            machine-readable output\n"
		     "  --show-weights    print the weights in effect and exit\n"
		     "Exit: 0 placed, 1 cannot fit now or bad input, 2 bad usage.\n");
}

int place_main(int argc, char **argv)
{
	using namespace loom;
	std::string cluster_file, state_file, request_text, weights_file;
	bool json = false, baseline = false, show_weights = false, have_request = false;
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
		} else if (a == "--cluster" && value(cluster_file)) {
		} else if (a == "--state" && value(state_file)) {
		} else if (a == "--request" && value(request_text)) {
			have_request = true;
		} else if (a == "--weights" && value(weights_file)) {
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
	place::Weights weights;
	if (!weights_file.empty()) {
		auto w = place::load_weights_file(weights_file);
		if (!w) {
			std::fprintf(stderr, "loom place: %s\n", w.error().str().c_str());
			return tool::exit_problems;
		}
		weights = *w;
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
