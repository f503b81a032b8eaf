#include "plugins/select_topo/cons_tres.hpp"

#include <cstring>
#include <dlfcn.h>
#include <sstream>
#include <sys/stat.h>

namespace loom::select_topo {

slurm_select_ops_t cons_tres_ops;

namespace {

// Must match src/common/select.c node_select_syms[] (Slurm 22.05), one name
// per member of slurm_select_ops_t, in order.
const char *const k_syms[] = {
	"plugin_id",
	"select_p_state_save",
	"select_p_state_restore",
	"select_p_job_init",
	"select_p_node_init",
	"select_p_job_test",
	"select_p_job_begin",
	"select_p_job_ready",
	"select_p_job_expand",
	"select_p_job_resized",
	"select_p_job_signal",
	"select_p_job_fini",
	"select_p_job_suspend",
	"select_p_job_resume",
	"select_p_step_pick_nodes",
	"select_p_step_start",
	"select_p_step_finish",
	"select_p_select_nodeinfo_pack",
	"select_p_select_nodeinfo_unpack",
	"select_p_select_nodeinfo_alloc",
	"select_p_select_nodeinfo_free",
	"select_p_select_nodeinfo_set_all",
	"select_p_select_nodeinfo_set",
	"select_p_select_nodeinfo_get",
	"select_p_select_jobinfo_alloc",
	"select_p_select_jobinfo_free",
	"select_p_select_jobinfo_set",
	"select_p_select_jobinfo_get",
	"select_p_select_jobinfo_copy",
	"select_p_select_jobinfo_pack",
	"select_p_select_jobinfo_unpack",
	"select_p_select_jobinfo_sprint",
	"select_p_select_jobinfo_xstrdup",
	"select_p_get_info_from_plugin",
	"select_p_update_node_config",
	"select_p_reconfigure",
	"select_p_resv_test",
};
static_assert(sizeof(k_syms) / sizeof(k_syms[0]) == sizeof(slurm_select_ops_t) / sizeof(void *),
	      "select operation table and symbol list differ: check node_select_syms[] of this Slurm");

void *g_handle = nullptr;
bool g_we_ran_init = false;

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
	void **slots = reinterpret_cast<void **>(&cons_tres_ops);
	for (size_t i = 0; i < sizeof(k_syms) / sizeof(k_syms[0]); i++) {
		void *sym = ::dlsym(h, k_syms[i]);
		if (!sym) {
			why = path + " has no symbol " + k_syms[i] + " (built for another Slurm release?)";
			::dlclose(h);
			std::memset(&cons_tres_ops, 0, sizeof(cons_tres_ops));
			return false;
		}
		slots[i] = sym;
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
	std::memset(&cons_tres_ops, 0, sizeof(cons_tres_ops));
}

} // namespace loom::select_topo
