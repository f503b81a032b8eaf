#include "plugins/select_topo/slurm_view.hpp"

#include "lib/exchange/suspect_mark.hpp"
#include "lib/place/gpu_class.hpp"

#include <cstring>
#include <dlfcn.h>
#include <sstream>

namespace loom::select_topo {
namespace {

uint32_t gpu_plugin_id()
{
	static uint32_t id = gres_build_id(const_cast<char *>("gpu"));
	return id;
}

gres_state_t *find_gpu(xlist *gres_list)
{
	if (!gres_list)
		return nullptr;
	listIterator *it = list_iterator_create(gres_list);
	gres_state_t *found = nullptr;
	while (auto *g = static_cast<gres_state_t *>(list_next(it))) {
		if (g->plugin_id == gpu_plugin_id()) {
			found = g;
			break;
		}
	}
	list_iterator_destroy(it);
	return found;
}

std::vector<std::string> split_features(const char *s)
{
	std::vector<std::string> out;
	if (!s)
		return out;
	std::stringstream ss(s);
	std::string f;
	while (std::getline(ss, f, ','))
		if (!f.empty())
			out.push_back(f);
	return out;
}

} // namespace

NodeGpus node_gpus(node_record_t *node)
{
	NodeGpus r;
	gres_state_t *g = find_gpu(node ? node->gres_list : nullptr);
	if (!g || !g->gres_data)
		return r;
	auto *ns = static_cast<gres_node_state_t *>(g->gres_data);
	r.total = static_cast<int>(ns->gres_cnt_avail);
	int64_t free = static_cast<int64_t>(ns->gres_cnt_avail) - static_cast<int64_t>(ns->gres_cnt_alloc);
	r.free = free > 0 ? static_cast<int>(free) : 0;
	return r;
}

// The node's loom:suspect mark: Extra first, then Comment; null without one.
static const char *suspect_mark_of(node_record_t *node)
{
	auto is_mark = [](const char *s) { return s && exchange::is_loom_suspect_mark(s); };
	return !node ? nullptr : is_mark(node->extra) ? node->extra : is_mark(node->comment) ? node->comment : nullptr;
}

bool node_suspect(node_record_t *node) { return suspect_mark_of(node) != nullptr; }

bool node_link_suspect(node_record_t *node)
{
	const char *m = suspect_mark_of(node);
	return m && exchange::is_link_suspect_mark(m);
}

place::SpareNodeState spare_node_state(node_record_t *node)
{
	if (!node || IS_NODE_DOWN(node) || IS_NODE_DRAIN(node) || IS_NODE_NO_RESPOND(node) || IS_NODE_FAIL(node) ||
	    IS_NODE_FUTURE(node) || IS_NODE_POWERED_DOWN(node) || IS_NODE_POWERING_UP(node) || IS_NODE_MAINT(node) ||
	    IS_NODE_REBOOT_REQUESTED(node) || (node->node_state & NODE_STATE_RES) || node_suspect(node))
		return place::SpareNodeState::unusable;
	return IS_NODE_IDLE(node) && !IS_NODE_COMPLETING(node) ? place::SpareNodeState::idle
							       : place::SpareNodeState::busy;
}

std::vector<place::SlurmNodeInfo> slurm_nodes()
{
	std::vector<place::SlurmNodeInfo> out;
	node_record_t *node;
	for (int i = 0; (node = next_node(&i)); i++) {
		place::SlurmNodeInfo n;
		n.name = node->name;
		n.gpus = node_gpus(node).total;
		n.features = split_features(node->features);
		out.push_back(std::move(n));
	}
	return out;
}

JobAsk job_ask(job_record_t *job)
{
	JobAsk a;
	a.job_id = job->job_id;
	if (gres_state_t *g = find_gpu(job->gres_list_req); g && g->gres_data) {
		auto *js = static_cast<gres_job_state_t *>(g->gres_data);
		if (js->gres_per_node)
			a.gpus_per_node = static_cast<int>(js->gres_per_node);
		if (js->gres_per_job)
			a.gpus_total = static_cast<int64_t>(js->gres_per_job);
		// --gpus-per-task with -n: a GPU total that cons_tres lays out in tasks.
		if (!a.gpus_per_node && !a.gpus_total && js->gres_per_task && job->details && job->details->num_tasks)
			a.gpus_total = static_cast<int64_t>(js->gres_per_task) * job->details->num_tasks;
	}
	if (job->details) {
		a.whole_node = job->details->whole_node == WHOLE_NODE_REQUIRED || job->details->share_res == 0;
		if (job->details->features)
			a.features = job->details->features;
	}
	for (const char *t : {job->tres_per_node, job->tres_per_job, job->tres_per_task})
		if (t && gres_gpu(t).gpus) {
			a.gpu_tres = t;
			break;
		}
	a.max_switches = job->req_switch;
	a.policies.spread_job = job->bit_flags & SPREAD_JOB;
	a.policies.contiguous = job->details && job->details->contiguous;
	a.policies.least_loaded = job->part_ptr && (job->part_ptr->flags & PART_FLAG_LLN);
	a.policies.select_lln = select_lln();
#ifdef WHOLE_TOPO // 24.05 and newer (topology/block): whole segments, segments of a size
	a.policies.whole_topo = job->details && IS_JOB_WHOLE_TOPO(job);
	a.policies.segment = job->details && job->details->segment_size > 0;
#endif
	a.use_min_nodes = job->bit_flags & USE_MIN_NODES;
	if (job->details && job->details->req_node_bitmap)
		for (int64_t i = 0, n = bit_size(job->details->req_node_bitmap); i < n; i++)
			if (bit_test(job->details->req_node_bitmap, i))
				a.required.push_back(static_cast<int>(i));
	a.spank_env = job->spank_job_env;
	a.spank_env_size = job->spank_job_env_size;
	uint32_t limit = job->time_limit;
	if (limit == NO_VAL && job->part_ptr)
		limit = job->part_ptr->default_time != NO_VAL ? job->part_ptr->default_time : job->part_ptr->max_time;
	a.time_limit_s = limit == NO_VAL || limit == INFINITE ? 0 : static_cast<int64_t>(limit) * 60;
	a.in_reservation = job->resv_name && job->resv_name[0];
	if (job->details)
		a.eligible_at = job->details->begin_time ? job->details->begin_time : job->details->submit_time;
	a.deadline = job->deadline;
	return a;
}

std::vector<std::pair<int, int>> gpus_freed_by(time_t when)
{
	std::vector<std::pair<int, int>> out;
	// slurmctld's job list, looked up at run time: slurmd and the clients load
	// select plugins too (22.05, 24.11) and have no such symbol.
	static xlist **jobs = reinterpret_cast<xlist **>(dlsym(RTLD_DEFAULT, "job_list"));
	if (!jobs || !*jobs)
		return out;
	listIterator *it = list_iterator_create(*jobs);
	while (auto *j = static_cast<job_record_t *>(list_next(it))) {
		if (!(IS_JOB_RUNNING(j) || IS_JOB_SUSPENDED(j)) || !j->node_bitmap || j->end_time > when)
			continue;
		gres_state_t *g = find_gpu(j->gres_list_alloc);
		if (!g || !g->gres_data)
			continue;
		auto *js = static_cast<gres_job_state_t *>(g->gres_data);
		if (!js->gres_cnt_node_alloc)
			continue;
		uint32_t k = 0; // the job's k-th node
		for (int64_t i = 0, n = bit_size(j->node_bitmap); i < n && k < js->node_cnt; i++) {
			if (!bit_test(j->node_bitmap, i))
				continue;
			if (uint64_t c = js->gres_cnt_node_alloc[k++])
				out.emplace_back(static_cast<int>(i), static_cast<int>(c));
		}
	}
	list_iterator_destroy(it);
	return out;
}

uint64_t node_sched_weight(int index, bool run_now)
{
	node_record_t *node = index >= 0 && index < node_record_count ? node_record_table_ptr[index] : nullptr;
	if (!node)
		return 0;
	return run_now ? node->sched_weight >> 8 : node->weight;
}

} // namespace loom::select_topo
