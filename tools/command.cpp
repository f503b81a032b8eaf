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
