#include "lib/ckpt/standby_plan.hpp"

#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/json.hpp"

#include <algorithm>

namespace loom::ckpt {

expected<StandbyLayout> split_standbys(const std::vector<std::string> &job_nodes, int standbys)
{
	if (standbys < 0)
		return unexpected(standby_env, "a negative number of standbys");
	if (static_cast<size_t>(standbys) >= job_nodes.size())
		return unexpected(standby_env,
				  std::to_string(standbys) + " standbys in a job of " +
					  std::to_string(job_nodes.size()) +
					  " nodes: no node would run the job (is JobSubmitPlugins=loom set?)");
	StandbyLayout l;
	l.job = job_nodes;
	size_t n_active = job_nodes.size() - static_cast<size_t>(standbys);
	l.active.assign(job_nodes.begin(), job_nodes.begin() + static_cast<long>(n_active));
	l.standby.assign(job_nodes.begin() + static_cast<long>(n_active), job_nodes.end());
	return l;
}

expected<StandbyLayout> split_active(const std::vector<std::string> &job_nodes, int active)
{
	if (active < 1 || static_cast<size_t>(active) > job_nodes.size())
		return unexpected(active_count_env, std::to_string(active) + " active nodes in a job of " +
							    std::to_string(job_nodes.size()) + " nodes");
	return split_standbys(job_nodes, static_cast<int>(job_nodes.size()) - active);
}

namespace {

bool contains(const std::vector<std::string> &v, const std::string &s)
{
	return std::find(v.begin(), v.end(), s) != v.end();
}

void erase(std::vector<std::string> &v, const std::string &s) { v.erase(std::remove(v.begin(), v.end(), s), v.end()); }

} // namespace

Replacement replace_node(const StandbyLayout &l, const std::string &culprit, const std::string &batch_host)
{
	Replacement r;
	if (!contains(l.active, culprit)) {
		r.why = culprit + " is not one of the job's active nodes";
		return r;
	}
	if (l.standby.empty()) {
		r.why = "no standby left for " + culprit;
		return r;
	}
	r.after = l;
	r.taken = l.standby.front();
	r.release = culprit != batch_host;
	erase(r.after.active, culprit);
	r.after.standby.erase(r.after.standby.begin());
	if (r.release)
		erase(r.after.job, culprit);
	else
		r.after.exclude.push_back(culprit);
	// The new active nodes, in the allocation's order.
	std::vector<std::string> active;
	for (const auto &n : r.after.job)
		if (contains(r.after.active, n) || n == r.taken)
			active.push_back(n);
	r.after.active = std::move(active);
	r.done = true;
	r.why = culprit + " replaced by standby " + r.taken + (r.release ? "" : " (the batch host stays, excluded)");
	return r;
}

expected<std::vector<std::string>> expand_counts(std::string_view text)
{
	std::vector<std::string> out;
	for (size_t start = 0; start <= text.size();) {
		size_t comma = std::min(text.find(',', start), text.size());
		std::string p(trim(text.substr(start, comma - start)));
		start = comma + 1;
		auto open = p.find("(x");
		if (open == std::string::npos) {
			if (!parse_int(p, 0, INT32_MAX))
				return unexpected("per-node counts",
						  "'" + shown(text) + "': bad entry '" + shown(p) + "'");
			out.push_back(p);
			continue;
		}
		auto value = p.substr(0, open);
		auto times = p.back() == ')' ? parse_int(p.substr(open + 2, p.size() - open - 3), 1, 1 << 20)
					     : expected<int64_t>(unexpected("", "no closing parenthesis"));
		if (!times || !parse_int(value, 0, INT32_MAX))
			return unexpected("per-node counts", "'" + shown(text) + "': bad entry '" + shown(p) + "'");
		out.insert(out.end(), static_cast<size_t>(*times), value);
	}
	return out;
}

std::string compress_counts(const std::vector<std::string> &per_node)
{
	std::string out;
	for (size_t i = 0; i < per_node.size();) {
		size_t j = i;
		while (j < per_node.size() && per_node[j] == per_node[i])
			j++;
		out += (out.empty() ? "" : ",") + per_node[i] + (j - i > 1 ? "(x" + std::to_string(j - i) + ")" : "");
		i = j;
	}
	return out;
}

std::vector<std::pair<std::string, std::string>> active_env(const StandbyLayout &l, EnvGet get, void *ctx)
{
	std::vector<std::pair<std::string, std::string>> env;
	std::string n = std::to_string(l.active.size());
	env.emplace_back("SLURM_JOB_NUM_NODES", n);
	env.emplace_back("SLURM_NNODES", n);
	// The allocation's per-node task counts, for the active nodes only.
	if (auto tasks = expand_counts(get("SLURM_TASKS_PER_NODE", ctx)); tasks && tasks->size() == l.job.size()) {
		std::vector<std::string> mine;
		for (size_t i = 0; i < l.job.size(); i++)
			if (std::find(l.active.begin(), l.active.end(), l.job[i]) != l.active.end())
				mine.push_back((*tasks)[i]);
		env.emplace_back("SLURM_TASKS_PER_NODE", compress_counts(mine));
	}
	if (auto per = parse_int(get("SLURM_NTASKS_PER_NODE", ctx), 1, 1 << 20); per) {
		std::string total = std::to_string(*per * static_cast<int64_t>(l.active.size()));
		env.emplace_back("SLURM_NTASKS", total);
		env.emplace_back("SLURM_NPROCS", total);
	}
	env.emplace_back(standby_nodes_env, hostlist_compress(l.standby));
	return env;
}

namespace {

Json names(const std::vector<std::string> &v) { return Json::string(hostlist_compress(v)); }

expected<std::vector<std::string>> read_names(ObjectReader &r, const char *key)
{
	auto s = r.str(key);
	if (!s)
		return unexpected(s.error());
	if (s->empty())
		return std::vector<std::string>{};
	auto v = hostlist_expand(*s);
	if (!v)
		return unexpected(r.field_path(key), v.error().message);
	return v;
}

} // namespace

std::string format_verdict(const StepVerdict &v)
{
	Json j = Json::object();
	j.set("step", Json::integer(v.step));
	j.set("relaunch", Json::boolean(v.relaunch));
	j.set("generation", Json::integer(v.generation));
	j.set("job", names(v.layout.job));
	j.set("active", names(v.layout.active));
	j.set("standby", names(v.layout.standby));
	j.set("exclude", names(v.layout.exclude));
	j.set("cpus_per_node", Json::string(v.cpus_per_node));
	j.set("why", Json::string(v.why));
	return j.dump(false);
}

expected<StepVerdict> parse_verdict(std::string_view text, const std::string &where)
{
	auto doc = json_parse(text, where);
	if (!doc)
		return unexpected(doc.error());
	ObjectReader r(doc->get(), where);
	StepVerdict v;
	auto step = r.integer("step", 0, INT64_MAX);
	auto relaunch = r.boolean("relaunch");
	auto gen = r.integer("generation", 0, 1 << 20);
	auto job = read_names(r, "job"), active = read_names(r, "active");
	auto standby = read_names(r, "standby"), exclude = read_names(r, "exclude");
	auto cpus = r.str("cpus_per_node");
	auto why = r.str("why");
	for (const Error *e :
	     {step ? nullptr : &step.error(), relaunch ? nullptr : &relaunch.error(), gen ? nullptr : &gen.error(),
	      job ? nullptr : &job.error(), active ? nullptr : &active.error(), standby ? nullptr : &standby.error(),
	      exclude ? nullptr : &exclude.error(), cpus ? nullptr : &cpus.error(), why ? nullptr : &why.error()})
		if (e)
			return unexpected(*e);
	if (auto st = r.finish(); !st)
		return unexpected(st.error());
	v.step = *step, v.relaunch = *relaunch, v.generation = static_cast<int>(*gen);
	v.layout = {*job, *active, *standby, *exclude};
	v.cpus_per_node = *cpus, v.why = *why;
	if (v.relaunch && v.layout.active.empty())
		return unexpected(where, "a relaunch on no active node");
	return v;
}

std::vector<std::pair<std::string, std::string>> relaunch_env(const StepVerdict &v)
{
	// The active count does not change: SLURM_TASKS_PER_NODE and
	// SLURM_NTASKS, the active nodes' already, stay as they are.
	std::string n = std::to_string(v.layout.active.size());
	std::string list = hostlist_compress(v.layout.job);
	std::vector<std::pair<std::string, std::string>> env = {
		{"SLURM_JOB_NUM_NODES", n},
		{"SLURM_NNODES", n},
		{"SLURM_JOB_NODELIST", list},
		{"SLURM_NODELIST", list},
		{standby_nodes_env, hostlist_compress(v.layout.standby)},
		{"LOOM_CKPT_GENERATION", std::to_string(v.generation)}};
	if (!v.cpus_per_node.empty())
		env.emplace_back("SLURM_JOB_CPUS_PER_NODE", v.cpus_per_node);
	return env;
}

std::string relaunch_exclude(const StepVerdict &v) { return hostlist_compress(v.layout.exclude); }

} // namespace loom::ckpt

#include "lib/ckpt/standby.hpp"

namespace loom::ckpt {

expected<SubmitPlan> plan_submit(const SubmitCounts &job, std::string_view value, double time_limit_s,
				 double node_mtbf_s, double p, int max_standby)
{
	const std::string what = "--ckpt-standby=" + shown(value);
	if (job.min_nodes == 0)
		return unexpected(what, "needs a node count (-N): standbys are whole nodes beside the job's");
	if (job.max_nodes != 0 && job.max_nodes != job.min_nodes)
		return unexpected(what, "needs one node count (-N " + std::to_string(job.min_nodes) +
						", not a range): the standbys are counted beside it");
	SubmitPlan plan;
	if (value == "auto") {
		double run = time_limit_s > 0 ? time_limit_s : 0;
		StandbyNeed need = standby_count(static_cast<int>(job.min_nodes), run, node_mtbf_s, p, max_standby);
		plan.standbys = time_limit_s > 0 ? need.nodes : max_standby;
		plan.why = time_limit_s > 0 ? need.why() : "no time limit: the most a job may hold";
	} else {
		auto n = parse_int(value, 0, max_standby);
		if (!n)
			return unexpected(what, n.error().message + " (or auto)");
		plan.standbys = static_cast<int>(*n);
		plan.why = "asked for";
	}
	plan.after = job;
	auto s = static_cast<uint32_t>(plan.standbys);
	plan.after.min_nodes += s;
	if (job.max_nodes != 0)
		plan.after.max_nodes += s;
	if (job.num_tasks != 0 && job.ntasks_per_node != 0)
		plan.after.num_tasks += s * job.ntasks_per_node;
	return plan;
}

} // namespace loom::ckpt
