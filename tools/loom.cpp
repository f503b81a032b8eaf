// loom: command-line entry point. Dispatches to the registered subcommands.
#include "tools/command.hpp"

#include "lib/util/log.hpp"
#include "loom_slurm.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

namespace {

void usage(FILE *out)
{
	std::fprintf(out, "usage: loom [--version] [--help] <command> [<args>]\n\ncommands:\n");
	for (const auto *c : loom::tool::commands())
		std::fprintf(out, "  %-10s %s\n", c->name, c->summary);
	std::fprintf(out, "\n'loom <command> --help' describes a command. Exit codes: 0 ok, 1 problems found, "
			  "2 bad usage.\n");
}

} // namespace

int main(int argc, char **argv)
{
	loom::log_set_program("loom");
	if (argc < 2) {
		usage(stderr);
		return loom::tool::exit_usage;
	}
	std::string cmd = argv[1];
	if (cmd == "--help" || cmd == "-h" || cmd == "help") {
		usage(stdout);
		return 0;
	}
	if (cmd == "--version" || cmd == "-V") {
		std::printf("loom %s (Slurm %s)\nfeatures: %s\n", PACKAGE_VERSION, LOOM_SLURM_VERSION_STRING,
			    loom::tool::features().c_str());
		return 0;
	}
	const auto *c = loom::tool::find_command(cmd);
	if (!c) {
		std::fprintf(stderr, "loom: unknown command '%s'\n", cmd.c_str());
		usage(stderr);
		return loom::tool::exit_usage;
	}
	try {
		return c->fn(argc - 1, argv + 1);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "loom %s: internal error: %s\n", cmd.c_str(), e.what());
		return 3;
	}
}
