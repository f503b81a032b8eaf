// loom_fabric.so (fabric_module.hpp): select/topo's fabric loader
// (lib/place/fabric.hpp) and the rank order, behind a C interface for
// spank_place in slurmstepd.
#include "plugins/spank_place/fabric_module.hpp"

#include "lib/place/fabric.hpp"
#include "lib/place/ranks.hpp"
#include "lib/topo/nccl_env.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

namespace {

char *dup(const std::string &s)
{
	char *p = static_cast<char *>(std::malloc(s.size() + 1));
	if (p)
		std::memcpy(p, s.c_str(), s.size() + 1);
	return p;
}

std::string lines(const std::vector<std::string> &v)
{
	std::string s;
	for (const std::string &l : v)
		s += l + "\n";
	return s;
}

int failed(loom_step_ranks *out, const std::string &why)
{
	out->error = dup(why);
	return -1;
}

} // namespace

extern "C" __attribute__((visibility("default"))) int loom_fabric_abi(void) { return LOOM_FABRIC_ABI; }

extern "C" __attribute__((visibility("default"))) int loom_fabric_step_ranks(const char *conf_dir, int yaml,
									     const char *nodelist, const char *node,
									     const char *tasks, loom_step_ranks *out)
{
	if (!out)
		return -1;
	*out = loom_step_ranks{0, nullptr, nullptr, nullptr};
	try {
		if (!conf_dir || !nodelist || !node)
			return failed(out, "no configuration directory, node list or node name");
		auto fabric = loom::place::load_fabric_in(conf_dir, yaml != 0);
		if (!fabric)
			return failed(out, fabric.error().str());
		std::string t = tasks ? tasks : "";
		auto r = loom::place::step_ranks(fabric->cluster, nodelist, node, t);
		if (!r && !t.empty()) // the order without the task lines, rather than none
			r = loom::place::step_ranks(fabric->cluster, nodelist, node, "");
		if (!r)
			return failed(out, r.error().str());
		out->node_rank = static_cast<unsigned>(r->node_rank);
		out->order = dup(lines(r->order));
		out->task_hosts = dup(lines(r->task_hosts));
		if (!out->order || !out->task_hosts) {
			loom_fabric_free(out);
			return failed(out, "out of memory");
		}
		return 0;
	} catch (const std::exception &e) {
		loom_fabric_free(out);
		return failed(out, std::string("internal error: ") + e.what());
	} catch (...) {
		loom_fabric_free(out);
		return failed(out, "internal error");
	}
}

extern "C" __attribute__((visibility("default"))) void loom_fabric_free(loom_step_ranks *r)
{
	if (!r)
		return;
	std::free(r->order);
	std::free(r->task_hosts);
	std::free(r->error);
	*r = loom_step_ranks{0, nullptr, nullptr, nullptr};
}

extern "C" __attribute__((visibility("default"))) void loom_fabric_free_nccl(loom_nccl_env *e)
{
	if (!e)
		return;
	std::free(e->topo_xml);
	std::free(e->no_topo);
	std::free(e->ib_hca);
	std::free(e->error);
	*e = loom_nccl_env{nullptr, nullptr, nullptr, nullptr};
}

extern "C" __attribute__((visibility("default"))) int loom_fabric_nccl_env(const char *conf_dir, int yaml,
									   const char *node, loom_nccl_env *out)
{
	if (!out)
		return -1;
	*out = loom_nccl_env{nullptr, nullptr, nullptr, nullptr};
	auto fail = [&](const std::string &why) {
		loom_fabric_free_nccl(out);
		out->error = dup(why);
		return -1;
	};
	try {
		if (!conf_dir || !node)
			return fail("no configuration directory or node name");
		auto fabric = loom::place::load_fabric_in(conf_dir, yaml != 0);
		if (!fabric)
			return fail(fabric.error().str());
		auto env = loom::topo::nccl_env(fabric->cluster, node);
		if (!env)
			return fail(fabric->source + ": " + env.error().str());
		out->topo_xml = dup(env->topo_xml);
		out->no_topo = dup(env->no_topo);
		out->ib_hca = dup(env->ib_hca);
		if (!out->topo_xml || !out->no_topo || !out->ib_hca)
			return fail("out of memory");
		return 0;
	} catch (const std::exception &e) {
		return fail(std::string("internal error: ") + e.what());
	} catch (...) {
		return fail("internal error");
	}
}
