// loom command: subcommand registry.
//
// A subcommand file defines a function and registers it at static
// initialisation time:
//
//   static int topo_main(int argc, char **argv);
//   static loom::tool::Command topo{"topo", "fabric topology: discover, build, show, check, convert",
//                                   topo_main};
//
// argv[0] of the function is the subcommand name. Exit codes: 0 ok, 1 problems
// found, 2 bad usage (see exit_usage), >2 internal errors.
#pragma once

#include <string>
#include <vector>

namespace loom::tool {

constexpr int exit_ok = 0;
constexpr int exit_problems = 1;
constexpr int exit_usage = 2;

using Main = int (*)(int argc, char **argv);

struct Command {
	Command(const char *name, const char *summary, Main fn);
	const char *name;
	const char *summary;
	Main fn;
};

// --help or -h anywhere among a subcommand's arguments (before "--"): it
// prints its usage on stdout and exits 0, whatever else is there.
bool asks_help(int argc, char **argv);

const std::vector<const Command *> &commands();
const Command *find_command(const std::string &name);

// A bad option value, said one way everywhere: "loom CMD: --opt 'VALUE': why"
// on stderr (the value quoted safely, see shown()); returns exit_usage.
int bad_value(const std::string &cmd, const std::string &option, const std::string &value, const std::string &why);

// Built-in features, for `loom --version`.
std::string features();

} // namespace loom::tool
