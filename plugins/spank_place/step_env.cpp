// spank_place in slurmstepd (step_env.hpp): the step's hostfiles and NCCL
// settings, from loom_fabric.so. Nothing here fails a task: the hooks turn
// each error into LOOM_RANK_ORDER_ERROR or LOOM_COMM_ENV_ERROR.
#include "plugins/spank_place/step_env.hpp"

#include "lib/util/fs.hpp"
#include "loom_slurm.h"

#include <cstdlib>
#include <dlfcn.h>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

extern "C" {
#include <slurm/slurm.h>
}

namespace loom::spank_place {

namespace {

// The step's files are written as the job's user (tasks run with its
// privileges), and whole: the tasks of a node each write the same file, so
// each writes its own temporary and renames it into place. TMPDIR may be
// /tmp, where others could plant a file under that temporary's name: it must
// be new. They die with the step: no fsync.
const AtomicWrite step_file{.mode = 0644, .exclusive = true, .durable = false};

std::string dir_of(const std::string &path)
{
	size_t slash = path.find_last_of('/');
	return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

// The job's own value of var is one loom did not make: a step inherits the
// batch step's values (another node's file), and mark (LOOM_NCCL_*) says
// which those were, so they are replaced, not kept.
bool jobs_own(spank_t sp, const char *var, const char *mark)
{
	std::string v = job_env(sp, var);
	return !v.empty() && v != job_env(sp, mark);
}

} // namespace

std::string job_env(spank_t sp, const char *name)
{
	std::vector<char> buf(1 << 16);
	if (spank_getenv(sp, name, buf.data(), static_cast<int>(buf.size())) != ESPANK_SUCCESS)
		return {};
	return buf.data();
}

std::string conf_dir(const Site &site, spank_t sp)
{
	if (!site.conf_dir.empty())
		return site.conf_dir;
	if (const char *c = std::getenv("SLURM_CONF"); c && *c)
		return dir_of(c);
	if (std::string c = job_env(sp, "SLURM_CONF"); !c.empty())
		return dir_of(c);
	return LOOM_SLURM_SYSCONFDIR;
}

void StepEnv::open_fabric_module(const Site &site)
{
	if (step_ranks_ || !module_error_.empty())
		return;
	std::string path = site.fabric_module;
	if (path.empty()) {
		Dl_info self{};
		if (::dladdr(reinterpret_cast<void *>(&dir_of), &self) == 0 || !self.dli_fname) {
			module_error_ = "cannot tell where spank_place.so is (dladdr)";
			return;
		}
		path = dir_of(self.dli_fname) + "/loom_fabric.so";
	}
	void *h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = ::dlerror();
		module_error_ = "cannot load " + path + ": " + (e ? e : "unknown error");
		return;
	}
	auto abi = reinterpret_cast<loom_fabric_abi_fn>(::dlsym(h, "loom_fabric_abi"));
	auto ranks = reinterpret_cast<loom_fabric_step_ranks_fn>(::dlsym(h, "loom_fabric_step_ranks"));
	auto release = reinterpret_cast<loom_fabric_free_fn>(::dlsym(h, "loom_fabric_free"));
	auto nccl = reinterpret_cast<loom_fabric_nccl_env_fn>(::dlsym(h, "loom_fabric_nccl_env"));
	auto release_nccl = reinterpret_cast<loom_fabric_free_nccl_fn>(::dlsym(h, "loom_fabric_free_nccl"));
	if (!abi || !ranks || !release || !nccl || !release_nccl || abi() != LOOM_FABRIC_ABI) {
		module_error_ = path + " is not loom_fabric.so of interface " + std::to_string(LOOM_FABRIC_ABI) +
				" (another loom's?)";
		::dlclose(h);
		return;
	}
	step_ranks_ = ranks;
	free_ = release;
	nccl_env_ = nccl;
	free_nccl_ = release_nccl;
}

// The job, the step and the node's place in it name the hostfile: one per
// node even where nodes share a TMPDIR, as the slurmd of one test host do.
status StepEnv::name_hostfile(spank_t sp)
{
	uint32_t job = 0, step = 0, nodeid = 0;
	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_NODEID, &nodeid) != ESPANK_SUCCESS)
		return unexpected("cannot read the job, step and node ids from Slurm");
	if (step == SLURM_EXTERN_CONT)
		return {};
	std::string tmp = job_env(sp, "TMPDIR");
	if (tmp.empty() || tmp[0] != '/' || ::access(tmp.c_str(), W_OK | X_OK) != 0)
		tmp = "/tmp";
	// slurmstepd's pid too: job ids repeat across clusters, and a TMPDIR may
	// be shared by several (test clusters on one host do).
	hostfile_ = tmp + "/loom-hosts." + std::to_string(job) + "." +
		    (step == SLURM_BATCH_SCRIPT ? std::string("batch") : std::to_string(step)) + "." +
		    std::to_string(nodeid) + "." + std::to_string(::getpid());
	return {};
}

// The order, from the environment Slurm gave the task. loom_fabric.so's
// texts are already the files' lines, each ended by a newline.
status StepEnv::set_rank_env(const Site &site, spank_t sp)
{
	uint32_t step = 0;
	if (spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS)
		return unexpected("cannot read the step id from Slurm");
	bool batch = step == SLURM_BATCH_SCRIPT;
	std::string nodes = batch ? job_env(sp, "SLURM_JOB_NODELIST") : job_env(sp, "SLURM_STEP_NODELIST");
	if (nodes.empty())
		nodes = job_env(sp, "SLURM_JOB_NODELIST");
	std::string tasks = batch ? job_env(sp, "SLURM_TASKS_PER_NODE") : job_env(sp, "SLURM_STEP_TASKS_PER_NODE");
	std::string me = job_env(sp, "SLURMD_NODENAME");
	if (nodes.empty())
		return unexpected("the task's environment has no SLURM_JOB_NODELIST");
	if (me.empty())
		return unexpected("the task's environment has no SLURMD_NODENAME");
	if (!step_ranks_)
		return unexpected(module_error_);
	std::string dir = conf_dir(site, sp);
	loom_step_ranks out{};
	int rc = step_ranks_(dir.c_str(), SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0), nodes.c_str(),
			     me.c_str(), tasks.c_str(), &out);
	std::string why = out.error ? out.error : "";
	std::string order = out.order ? out.order : "", task_hosts = out.task_hosts ? out.task_hosts : "";
	unsigned node_rank = out.node_rank;
	free_(&out);
	if (rc != 0)
		return unexpected(why.empty() ? std::string("the fabric module failed") : why);
	if (auto st = write_file_atomic(hostfile_, order, step_file); !st)
		return st;
	if (spank_setenv(sp, "LOOM_HOSTFILE", hostfile_.c_str(), 1) != ESPANK_SUCCESS ||
	    spank_setenv(sp, "LOOM_NODE_RANK", std::to_string(node_rank).c_str(), 1) != ESPANK_SUCCESS)
		return unexpected("cannot set LOOM_NODE_RANK and LOOM_HOSTFILE in the job's environment");
	if (!task_hosts.empty()) {
		std::string tf = hostfile_ + ".tasks";
		if (auto st = write_file_atomic(tf, task_hosts, step_file); !st)
			return st;
		if (spank_setenv(sp, "LOOM_TASK_HOSTFILE", tf.c_str(), 1) != ESPANK_SUCCESS)
			return unexpected("cannot set LOOM_TASK_HOSTFILE in the job's environment");
	}
	return {};
}

// NCCL settings loom made in the batch step and a step inherited: they
// name another node's file and HCAs; gone when this node's cannot be given.
void StepEnv::drop_inherited_comm_env(spank_t sp)
{
	for (auto [var, mark] :
	     {std::pair{"NCCL_TOPO_FILE", "LOOM_NCCL_TOPO_FILE"}, std::pair{"NCCL_IB_HCA", "LOOM_NCCL_IB_HCA"}}) {
		std::string v = job_env(sp, var);
		if (!v.empty() && v == job_env(sp, mark))
			(void)spank_unsetenv(sp, var);
		(void)spank_unsetenv(sp, mark);
	}
}

// NCCL_TOPO_FILE (written beside the hostfile) and NCCL_IB_HCA, each only
// where the job has not set it; what was set, or why nothing could be, in
// LOOM_COMM_ENV.
status StepEnv::set_comm_env(const Site &site, spank_t sp)
{
	if (!nccl_env_)
		return unexpected(module_error_);
	std::string me = job_env(sp, "SLURMD_NODENAME");
	if (me.empty())
		return unexpected("the task's environment has no SLURMD_NODENAME");
	std::string dir = conf_dir(site, sp);
	loom_nccl_env out{};
	int rc = nccl_env_(dir.c_str(), SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0), me.c_str(), &out);
	std::string why = out.error ? out.error : "", xml = out.topo_xml ? out.topo_xml : "",
		    no_topo = out.no_topo ? out.no_topo : "", hca = out.ib_hca ? out.ib_hca : "";
	free_nccl_(&out);
	if (rc != 0)
		return unexpected(why.empty() ? std::string("the fabric module failed") : why);
	std::vector<std::string> set, kept, notes;
	if (jobs_own(sp, "NCCL_TOPO_FILE", "LOOM_NCCL_TOPO_FILE")) {
		kept.push_back("NCCL_TOPO_FILE");
	} else if (xml.empty()) {
		notes.push_back("no NCCL_TOPO_FILE: " + no_topo);
		(void)spank_unsetenv(sp, "NCCL_TOPO_FILE"); // another node's, if inherited
		(void)spank_unsetenv(sp, "LOOM_NCCL_TOPO_FILE");
	} else {
		std::string path = hostfile_ + ".nccl-topo.xml";
		if (xml.back() != '\n') // a file of lines: the last one ended too
			xml += '\n';
		if (auto st = write_file_atomic(path, xml, step_file); !st)
			return st;
		if (spank_setenv(sp, "NCCL_TOPO_FILE", path.c_str(), 1) != ESPANK_SUCCESS ||
		    spank_setenv(sp, "LOOM_NCCL_TOPO_FILE", path.c_str(), 1) != ESPANK_SUCCESS)
			return unexpected("cannot set NCCL_TOPO_FILE in the job's environment");
		set.push_back("NCCL_TOPO_FILE");
	}
	if (jobs_own(sp, "NCCL_IB_HCA", "LOOM_NCCL_IB_HCA")) {
		kept.push_back("NCCL_IB_HCA");
	} else if (hca.empty()) {
		notes.push_back("no NCCL_IB_HCA: the fabric lists no HCA of " + me);
		(void)spank_unsetenv(sp, "NCCL_IB_HCA");
		(void)spank_unsetenv(sp, "LOOM_NCCL_IB_HCA");
	} else {
		if (spank_setenv(sp, "NCCL_IB_HCA", hca.c_str(), 1) != ESPANK_SUCCESS ||
		    spank_setenv(sp, "LOOM_NCCL_IB_HCA", hca.c_str(), 1) != ESPANK_SUCCESS)
			return unexpected("cannot set NCCL_IB_HCA in the job's environment");
		set.push_back("NCCL_IB_HCA");
	}
	std::string summary = "set: " + (set.empty() ? std::string("none") : join(set, " "));
	if (!kept.empty())
		summary += "; the job's own: " + join(kept, " ");
	if (!notes.empty())
		summary += "; " + join(notes, "; ");
	(void)spank_setenv(sp, "LOOM_COMM_ENV", summary.c_str(), 1);
	return {};
}

void StepEnv::remove_files() const
{
	if (hostfile_.empty())
		return;
	for (const char *suffix : {"", ".tasks", ".nccl-topo.xml"})
		(void)::unlink((hostfile_ + suffix).c_str());
}

} // namespace loom::spank_place
