#include "tools/command.hpp"

#include "lib/util/fs.hpp"

#include <cstdio>

#include <algorithm>

namespace loom::tool {

namespace {
std::vector<const Command *> &registry()
{
	static std::vector<const Command *> r;
	return r;
}
} // namespace

Command::Command(const char *n, const char *s, Main f) : name(n), summary(s), fn(f)
{
	auto &r = registry();
	r.push_back(this);
	std::sort(r.begin(), r.end(),
		  [](const Command *a, const Command *b) { return std::string(a->name) < std::string(b->name); });
}

const std::vector<const Command *> &commands() { return registry(); }

int bad_value(const std::string &cmd, const std::string &option, const std::string &value, const std::string &why)
{
	std::fprintf(stderr, "%s: %s '%s': %s\n", cmd.c_str(), option.c_str(), shown(value).c_str(), why.c_str());
	return exit_usage;
}

bool asks_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		if (a == "--")
			return false;
		if (a == "--help" || a == "-h")
			return true;
	}
	return false;
}

const Command *find_command(const std::string &name)
{
	for (const Command *c : registry())
		if (name == c->name)
			return c;
	return nullptr;
}

std::string features()
{
	std::string f = "json-c hwloc";
#ifdef HAVE_IBVERBS
	f += " ibverbs";
#else
	f += " -ibverbs(sysfs only)";
#endif
	f += " nvml,cudart,nccl(dlopen)";
	return f;
}

} // namespace loom::tool
