// loom health: node health checks, job failure classification, failure statistics.
//
//   loom health check [options]     run every collector, judge, report, drain/resume
//   loom health config [FILE]       validate a health config, or list its keys
//   loom health classify [options]  classify a finished job's failure
//   loom health stats FILE          print the failure statistics (MTBF) file
//   loom health probe [options]     GPU probes: memory bandwidth, NCCL all-reduce
#include "tools/command.hpp"
#include "tools/options.hpp"

#include "lib/health/config.hpp"

#include <cstdio>
#include <cstring>
#include <string>

int loom_health_check_main(int argc, char **argv);
int loom_health_classify_main(int argc, char **argv);
int loom_health_stats_main(int argc, char **argv);
int loom_health_probe_main(int argc, char **argv);
int loom_health_netprobe_main(int argc, char **argv);

namespace {

void usage(FILE *out)
{
	std::fprintf(out,
		     "usage: loom health <command> [options]\n\n"
		     "  check     gather and judge this node's health (HealthCheckProgram, prolog, epilog)\n"
		     "  config    validate a health config (default /etc/loom/health.conf), or --keys to list keys\n"
		     "  classify  classify a finished job's failure from its state, exit code and logs\n"
		     "  stats     print the failure statistics file jobcomp/health keeps\n"
		     "  probe     active GPU probes: memory bandwidth, NCCL all-reduce (never pass without a GPU);\n"
		     "            with --pairs/--serve/--measure/--judge, network probes between nodes\n\n"
		     "'loom health <command> --help' describes a command; see loom-health(1).\n");
}

int config_main(int argc, char **argv)
{
	using namespace loom::tool;
	std::string path;
	bool keys = false;
	OptionTable t("loom health config", "[FILE | --keys]",
		      "Checks a health configuration (default /etc/loom/health.conf) as loom health check reads it.");
	t.add("--keys", "", "list every key with its default and meaning", set_flag(keys))
		.positional([&path](const std::string &v) {
			if (!path.empty())
				return "one FILE only ('" + path + "', '" + v + "')";
			path = v;
			return std::string();
		});
	t.epilog("Exit: 0 valid, 1 not, 2 bad usage.");
	if (int rc = t.parse(argc, argv); rc >= 0)
		return rc;
	if (keys) {
		if (!path.empty())
			return bad_value("loom health config", "--keys", path, "a FILE or --keys, not both");
		std::fputs(loom::health::describe_health_config().c_str(), stdout);
		return 0;
	}
	if (path.empty())
		path = "/etc/loom/health.conf";
	auto c = loom::health::load_health_config(path);
	if (!c) {
		std::fprintf(stderr, "loom health config: %s\n", c.error().str().c_str());
		return exit_problems;
	}
	std::printf("%s: ok\n", path.c_str());
	return 0;
}

int health_main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return loom::tool::exit_usage;
	}
	std::string sub = argv[1];
	if (sub == "--help" || sub == "-h" || sub == "help") {
		usage(stdout);
		return 0;
	}
	// The subcommand's own messages name it in full.
	static std::string full;
	full = "loom health " + sub;
	argv[1] = full.data();
	if (sub == "check")
		return loom_health_check_main(argc - 1, argv + 1);
	if (sub == "config")
		return config_main(argc - 1, argv + 1);
	if (sub == "classify")
		return loom_health_classify_main(argc - 1, argv + 1);
	if (sub == "probe") {
		// Network probes between nodes (--pairs, --serve, --measure, --judge);
		// the rest are this node's GPU probes.
		std::string mode = argc > 2 ? argv[2] : "";
		if (mode == "--pairs" || mode == "--serve" || mode == "--measure" || mode == "--judge")
			return loom_health_netprobe_main(argc - 1, argv + 1);
		return loom_health_probe_main(argc - 1, argv + 1);
	}
	if (sub == "stats")
		return loom_health_stats_main(argc - 1, argv + 1);
	std::fprintf(stderr, "loom health: unknown command '%s'\n", sub.c_str());
	usage(stderr);
	return loom::tool::exit_usage;
}

loom::tool::Command health_command{"health", "node health checks, drain/resume, job failure classification",
				   health_main};

} // namespace
