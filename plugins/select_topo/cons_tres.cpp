#include "plugins/select_topo/cons_tres.hpp"

#include <dlfcn.h>
#include <sstream>
#include <sys/stat.h>

namespace loom::select_topo {

namespace {

void *g_handle = nullptr;
bool g_we_ran_init = false;

void clear_slots()
{
	for (size_t i = 0; i < k_cons_tres_ops_count; i++)
		*k_cons_tres_ops[i].slot = nullptr;
}

std::string find_in_plugindir()
{
	const char *dirs = slurm_conf.plugindir ? slurm_conf.plugindir : "";
	std::stringstream ss(dirs);
	std::string dir;
	while (std::getline(ss, dir, ':')) {
		if (dir.empty())
			continue;
		std::string p = dir + "/select_cons_tres.so";
		struct stat st;
		if (::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode))
			return p;
	}
	return {};
}

} // namespace

bool cons_tres_load(std::string &why)
{
	if (g_handle)
		return true;
	std::string path = find_in_plugindir();
	if (path.empty()) {
		why = std::string("select_cons_tres.so not found in PluginDir=") +
		      (slurm_conf.plugindir ? slurm_conf.plugindir : "(unset)");
		return false;
	}
	// Slurm loads every select plugin in PluginDir: cons_tres may be loaded
	// (and initialised) already. Then share that copy and leave init alone.
	void *h = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
	bool fresh = false;
	if (!h) {
		h = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
		fresh = true;
	}
	if (!h) {
		const char *e = ::dlerror();
		why = "dlopen " + path + ": " + (e ? e : "unknown error");
		return false;
	}
	for (size_t i = 0; i < k_cons_tres_ops_count; i++) {
		const ConsTresOp &op = k_cons_tres_ops[i];
		void *sym = ::dlsym(h, op.symbol);
		if (!sym && !op.optional) {
			why = path + " has no symbol " + op.symbol + " (built for another Slurm release?)";
			::dlclose(h);
			clear_slots();
			return false;
		}
		*op.slot = sym;
	}
	if (fresh) {
		auto init_fn = reinterpret_cast<int (*)(void)>(::dlsym(h, "init"));
		if (init_fn && init_fn() != SLURM_SUCCESS) {
			why = path + ": init() failed";
			::dlclose(h);
			return false;
		}
		g_we_ran_init = init_fn != nullptr;
	}
	g_handle = h;
	return true;
}

void cons_tres_unload()
{
	if (!g_handle)
		return;
	if (g_we_ran_init) {
		auto fini_fn = reinterpret_cast<int (*)(void)>(::dlsym(g_handle, "fini"));
		if (fini_fn)
			fini_fn();
	}
	::dlclose(g_handle);
	g_handle = nullptr;
	g_we_ran_init = false;
	clear_slots();
}

} // namespace loom::select_topo
