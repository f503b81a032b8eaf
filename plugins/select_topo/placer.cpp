// select/topo's placer: the loaded Snapshot behind one lock, (re)loaded at
// node_init and reconfigure, and the job_test entry that never throws into
// Slurm. The snapshot is snapshot.cpp's, the job_test loop job_test.cpp's.
#include "plugins/select_topo/placer.hpp"

#include "lib/topo/cluster_json.hpp"
#include "plugins/select_topo/explain.hpp"
#include "plugins/select_topo/history.hpp"
#include "plugins/select_topo/job_test.hpp"
#include "plugins/select_topo/snapshot.hpp"

#include <memory>
#include <mutex>

namespace loom::select_topo {
namespace {

std::mutex g_mu;
std::unique_ptr<Snapshot> g_cur;

// jobcomp/health's statistics file, when that plugin is the JobCompType
// (its state directory: JobCompLoc if absolute, else StateSaveLocation).
std::string failure_stats_path(const place::TopoConf &c)
{
	if (c.failure_stats == "none")
		return {};
	if (!c.failure_stats.empty())
		return c.failure_stats;
	if (!slurm_conf.job_comp_type || std::string(slurm_conf.job_comp_type) != "jobcomp/health")
		return {};
	std::string dir = slurm_conf.job_comp_loc && slurm_conf.job_comp_loc[0] == '/' ? slurm_conf.job_comp_loc
			  : slurm_conf.state_save_location                             ? slurm_conf.state_save_location
										       : "";
	return dir.empty() ? std::string() : dir + "/loom-failure-stats.json";
}

std::string join(const std::vector<std::string> &v, size_t max = 8)
{
	std::string s;
	for (size_t i = 0; i < v.size() && i < max; i++)
		s += (i ? "," : "") + v[i];
	if (v.size() > max)
		s += ",... (" + std::to_string(v.size()) + " in all)";
	return s;
}

int forward(job_record_t *job, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes, uint32_t req_nodes,
	    uint16_t mode, const JobTestTail &tail)
{
	return cons_tres_job_test(job, bitmap, min_nodes, max_nodes, req_nodes, mode, tail);
}

} // namespace

bool placer_load(bool starting, std::string &why)
{
	try {
		auto l = load_snapshot();
		if (!l) {
			why = l.error().str();
			return false;
		}
		std::lock_guard<std::mutex> g(g_mu);
		Snapshot &n = **l;
		info("select/topo: fabric from %s: %zu nodes, %lld GPUs, %zu domains, %u levels%s",
		     n.fabric.source.c_str(), n.fabric.cluster.nodes.size(),
		     static_cast<long long>(n.fabric.cluster.total_gpus()), n.fabric.cluster.domains.size(),
		     n.fabric.cluster.levels, starting ? "" : " (reconfigured)");
		if (!n.fabric.alone.empty())
			info("select/topo: warning: %zu node(s) in slurm.conf but not in the fabric, each placed as if "
			     "on a "
			     "leaf of its own: %s",
			     n.fabric.alone.size(), join(n.fabric.alone).c_str());
		g_cur = std::move(*l);
		history_start(failure_stats_path(g_cur->config), g_cur->config.failure_stats_poll_s);
		if (std::string dir = explain_dir(*g_cur); !dir.empty())
			explain_fabric(dir, topo::write_cluster_json(g_cur->fabric.cluster));
		return true;
	} catch (const std::exception &e) {
		why = e.what();
		return false;
	} catch (...) {
		why = "unknown error";
		return false;
	}
}

void placer_unload()
{
	explain_stop();
	history_stop();
	std::lock_guard<std::mutex> g(g_mu);
	g_cur.reset();
}

void placer_note_change() noexcept { snapshot_note_change(); }
void placer_note_job(const job_record_t *job) noexcept { snapshot_note_job(job); }
void placer_note_node(int index) noexcept { snapshot_note_node(index); }

bool placer_loaded()
{
	std::lock_guard<std::mutex> g(g_mu);
	return g_cur != nullptr;
}

int placer_job_test(job_record_t *job, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes, uint32_t req_nodes,
		    uint16_t mode, const JobTestTail &tail)
{
	std::unique_lock<std::mutex> lock(g_mu);
	Snapshot *s = g_cur.get();
	if (!s || !running_in_slurmctld())
		return forward(job, bitmap, min_nodes, max_nodes, req_nodes, mode, tail);
	try {
		return topo_job_test(*s, job, bitmap, min_nodes, max_nodes, req_nodes, mode, tail);
	} catch (const std::exception &e) {
		error("select/topo: JobId=%u: %s: placed by cons_tres", job->job_id, e.what());
	} catch (...) {
		error("select/topo: JobId=%u: internal error: placed by cons_tres", job->job_id);
	}
	return forward(job, bitmap, min_nodes, max_nodes, req_nodes, mode, tail);
}

} // namespace loom::select_topo
