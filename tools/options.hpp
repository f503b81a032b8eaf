// loom command: one table per command line. The table gives the options'
// names, value words and help; parsing, `--help`'s option list, and the
// errors ("loom CMD: unknown option '--x'", "loom CMD: --opt 'VALUE': why")
// all come from it, and so does bash completion, which reads the usage
// (etc/bash-completion/loom; tests/tools/cli_walk.sh and completion.sh).
//
//   std::string out;
//   int64_t days = 0;
//   tool::OptionTable t{"loom sim", "--out DIR [OPTION]...", "Replays jobs ..."};
//   t.add("--out", "DIR", "write CSV files and plots here", tool::set_string(out));
//   t.add("--days", "N", "simulated days", tool::set_int(days, 1, 36500));
//   if (int rc = t.parse(argc, argv); rc >= 0)
//           return rc;
//
// A value word names its kind for completion and for cli_walk's bad-value
// walk: FILE, DIR, N (an integer), DUR (a duration), BYTES, "a|b|c" (one
// of the words), or any other word (free text).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace loom::tool {

// Takes an option's value (a flag's: ""): "" when taken, else why not.
using Setter = std::function<std::string(const std::string &value)>;

struct Option {
	std::string name; // "--cluster"
	std::string arg;  // "FILE"; empty: a flag
	std::string help; // "\n" starts a continuation line
	Setter set;
	bool input = false; // its file is read at once: an error is bad input (exit 1)
};

class OptionTable {
public:
	// cmd: "loom sim"; synopsis: what follows it on the usage line (the
	// options a call needs; "[OPTION]..." for the others); about: the
	// paragraph under it.
	OptionTable(std::string cmd, std::string synopsis, std::string about);

	OptionTable &add(std::string name, std::string arg, std::string help, Setter set);
	// An option whose setter reads the file it names: what is wrong in the
	// file is bad input, "loom CMD: WHY" and exit 1, not bad usage.
	OptionTable &add_input(std::string name, std::string arg, std::string help, Setter set);
	// Words that are not options (a file, a directory): 'set' takes each
	// in turn; without one, such a word is an error.
	OptionTable &positional(Setter set);
	// Lines after the option list ("Exit: 0 ok, 1 problems, 2 bad usage.").
	OptionTable &epilog(std::string text);
	// Further usage lines, each printed under the first as "       TEXT".
	OptionTable &also(std::string line);

	void usage(FILE *out) const;
	// Every argument of argv[1..argc). -1: all taken, go on; otherwise the
	// exit code: 0 after --help (usage on stdout), exit_usage after an
	// error (said on stderr, first line naming the command and option).
	int parse(int argc, char **argv) const;

	const std::string &cmd() const { return cmd_; }
	const std::string &synopsis() const { return synopsis_; }

private:
	const Option *find(const std::string &name) const;
	int refuse(const std::string &what) const;

	std::string cmd_, synopsis_, about_, epilog_;
	std::vector<std::string> also_;
	std::vector<Option> options_;
	Setter positional_;
};

// Setters for the usual kinds of value.
Setter set_string(std::string &out);
Setter set_flag(bool &out);
Setter set_choice(std::string &out, std::vector<std::string> words);
Setter set_yes_no(bool &out);
Setter set_int(int64_t &out, int64_t lo, int64_t hi);
// A real number in [lo, hi]; 'expected' says what is (the error's why).
Setter set_real(double &out, double lo, double hi, std::string expected);
// A duration such as 30m, 2h (lib/util/config.hpp), at least 'min' seconds.
Setter set_duration(int64_t &out, int64_t min = 0);
// 'set', the option's name also added to 'given' (for checks of which
// options came together).
Setter noted(std::vector<std::string> &given, const char *name, Setter set);

} // namespace loom::tool
