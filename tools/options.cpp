// loom command: option tables (options.hpp).
#include "tools/options.hpp"

#include "tools/command.hpp"

#include "lib/util/config.hpp"

#include <utility>

namespace loom::tool {

namespace {

constexpr size_t help_column = 24;

// "  --name ARG" padded to the help column (its own line when longer).
std::string option_head(const Option &o)
{
	std::string head = "  " + o.name + (o.arg.empty() ? "" : " " + o.arg);
	if (head.size() + 2 > help_column)
		return head + "\n" + std::string(help_column, ' ');
	return head + std::string(help_column - head.size(), ' ');
}

std::string indented_help(const std::string &help)
{
	std::string out;
	for (char c : help) {
		out += c;
		if (c == '\n')
			out += std::string(help_column, ' ');
	}
	return out;
}

} // namespace

OptionTable::OptionTable(std::string cmd, std::string synopsis, std::string about)
	: cmd_(std::move(cmd)), synopsis_(std::move(synopsis)), about_(std::move(about))
{
}

OptionTable &OptionTable::add(std::string name, std::string arg, std::string help, Setter set)
{
	options_.push_back({std::move(name), std::move(arg), std::move(help), std::move(set)});
	return *this;
}

OptionTable &OptionTable::add_input(std::string name, std::string arg, std::string help, Setter set)
{
	add(std::move(name), std::move(arg), std::move(help), std::move(set));
	options_.back().input = true;
	return *this;
}

OptionTable &OptionTable::positional(Setter set)
{
	positional_ = std::move(set);
	return *this;
}

OptionTable &OptionTable::epilog(std::string text)
{
	epilog_ = std::move(text);
	return *this;
}

OptionTable &OptionTable::also(std::string line)
{
	also_.push_back(std::move(line));
	return *this;
}

void OptionTable::usage(FILE *out) const
{
	std::fprintf(out, "usage: %s %s\n", cmd_.c_str(), synopsis_.c_str());
	for (const std::string &l : also_)
		std::fprintf(out, "       %s %s\n", cmd_.c_str(), l.c_str());
	if (!about_.empty())
		std::fprintf(out, "\n%s\n", about_.c_str());
	for (const Option &o : options_)
		std::fprintf(out, "%s%s\n", option_head(o).c_str(), indented_help(o.help).c_str());
	if (!epilog_.empty())
		std::fprintf(out, "%s\n", epilog_.c_str());
}

const Option *OptionTable::find(const std::string &name) const
{
	for (const Option &o : options_)
		if (o.name == name)
			return &o;
	return nullptr;
}

int OptionTable::refuse(const std::string &what) const
{
	std::fprintf(stderr, "%s: %s\n", cmd_.c_str(), what.c_str());
	usage(stderr);
	return exit_usage;
}

int OptionTable::parse(int argc, char **argv) const
{
	if (asks_help(argc, argv)) {
		usage(stdout);
		return exit_ok;
	}
	bool words_only = false; // after "--": every argument is a word, none an option
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		if (!words_only && a == "--") {
			words_only = true;
			continue;
		}
		if (!words_only && a.size() > 1 && a[0] == '-') {
			std::string value;
			size_t eq = a.find('=');
			if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
				value = a.substr(eq + 1);
				a.resize(eq);
			}
			const Option *o = find(a);
			if (!o)
				return refuse("unknown option '" + a + "'");
			if (o->arg.empty() && eq != std::string::npos)
				return refuse(a + " takes no value");
			if (!o->arg.empty() && eq == std::string::npos) {
				if (i + 1 >= argc)
					return refuse(a + " needs a value (" + o->arg + ")");
				value = argv[++i];
			}
			std::string why = o->set(value);
			if (why.empty())
				continue;
			if (!o->input)
				return bad_value(cmd_, a, value, why);
			std::fprintf(stderr, "%s: %s\n", cmd_.c_str(), why.c_str());
			return exit_problems;
		}
		if (!positional_)
			return refuse("unexpected argument '" + a + "'");
		if (std::string why = positional_(a); !why.empty())
			return refuse(why);
	}
	return -1;
}

Setter set_string(std::string &out)
{
	return [&out](const std::string &v) {
		out = v;
		return std::string();
	};
}

Setter set_flag(bool &out)
{
	return [&out](const std::string &) {
		out = true;
		return std::string();
	};
}

Setter set_choice(std::string &out, std::vector<std::string> words)
{
	return [&out, words = std::move(words)](const std::string &v) {
		std::string list;
		for (size_t i = 0; i < words.size(); i++) {
			if (v == words[i]) {
				out = v;
				return std::string();
			}
			list += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
		}
		return "expected " + list;
	};
}

Setter set_yes_no(bool &out)
{
	return [&out](const std::string &v) {
		if (v != "yes" && v != "no")
			return std::string("expected yes or no");
		out = v == "yes";
		return std::string();
	};
}

Setter set_int(int64_t &out, int64_t lo, int64_t hi)
{
	return [&out, lo, hi](const std::string &v) {
		auto n = parse_int(v, lo, hi);
		if (!n)
			return n.error().message;
		out = *n;
		return std::string();
	};
}

Setter set_real(double &out, double lo, double hi, std::string expected)
{
	return [&out, lo, hi, expected = std::move(expected)](const std::string &v) {
		auto x = parse_real(v, lo, hi);
		if (!x)
			return expected;
		out = *x;
		return std::string();
	};
}

Setter noted(std::vector<std::string> &given, const char *name, Setter set)
{
	return [&given, name, set = std::move(set)](const std::string &v) {
		given.push_back(name);
		return set(v);
	};
}

Setter set_duration(int64_t &out, int64_t min)
{
	return [&out, min](const std::string &v) {
		auto d = parse_duration(v);
		if (!d)
			return d.error().message;
		if (*d < min)
			return "expected a duration of at least " + format_duration(min);
		out = *d;
		return std::string();
	};
}

} // namespace loom::tool
