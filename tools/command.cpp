#include "tools/command.hpp"

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
	std::sort(r.begin(), r.end(), [](const Command *a, const Command *b) {
		return std::string(a->name) < std::string(b->name);
	});
}

const std::vector<const Command *> &commands() { return registry(); }

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
