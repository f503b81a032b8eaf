#include "plugins/spank_ckpt/standby_setup.hpp"

#include "lib/ckpt/standby_plan.hpp"
#include "lib/exchange/progress_report.hpp"
#include "lib/util/config.hpp"
#include "lib/util/hostlist.hpp"

namespace loom::spank_ckpt {
namespace {

std::string env_of(const char *name, void *ctx) { return (*static_cast<const JobEnv *>(ctx))(name); }

KeeperConfig keeper_config(const ckpt::SiteConfig &site, const JobFacts &facts, const ckpt::StandbyLayout &layout,
			   const std::string &ckpt_dir, const JobEnv &get)
{
	KeeperConfig c;
	c.job_id = facts.job_id;
	c.uid = facts.cred.uid;
	c.gid = facts.cred.gid;
	c.dir = site.standby_dir + "/" + std::to_string(facts.job_id);
	c.scontrol = site.scontrol;
	c.loom = site.loom.empty() ? std::string(LOOM_PROGRAM) : site.loom;
	c.batch_host = facts.node;
	c.layout = layout;
	if (auto cpus = ckpt::expand_counts(get("SLURM_JOB_CPUS_PER_NODE")); cpus && cpus->size() == layout.job.size())
		c.cpus_per_node = *cpus;
	c.poll_s = static_cast<int>(site.poll_s);
	c.ckpt_dir = ckpt_dir;
	c.hang.k = static_cast<double>(site.hang_factor);
	c.hang.floor_s = static_cast<double>(site.hang_floor_s);
	c.hang.beat_stale_s = 15; // three of the SDKs' 5 s heartbeats missed
	return c;
}

} // namespace

StandbySetup plan_standby_job(const ckpt::SiteConfig &site, const ckpt::JobOptions &opts, const JobFacts &facts,
			      const std::string &ckpt_dir, const JobEnv &get)
{
	StandbySetup s;
	std::string count = get(ckpt::standby_env);
	if (count.empty()) {
		if (!opts.standby.empty() && opts.standby != "0")
			s.notice = "--ckpt-standby=" + opts.standby + ": this cluster does not add standby nodes " +
				   "(JobSubmitPlugins=loom is not set): the job runs without them";
		return s;
	}
	if (count == "0")
		return s;
	// The active count job_submit/loom recorded: a requeued job that lost a
	// node to a replacement holds fewer standbys, the same active nodes.
	auto nodes = hostlist_expand(facts.nodelist);
	auto active = parse_int(get(ckpt::active_count_env), 1, 1 << 20);
	auto layout = active && nodes
			      ? ckpt::split_active(*nodes, static_cast<int>(*active))
			      : expected<ckpt::StandbyLayout>(unexpected(
					ckpt::active_count_env, nodes ? active.error().str() : nodes.error().str()));
	if (!layout) {
		s.error = layout.error().str();
		return s;
	}
	// The counts Slurm gives the script include the standbys' tasks.
	s.env = ckpt::active_env(*layout, env_of, const_cast<JobEnv *>(&get));
	if (layout->standby.empty())
		return s; // none left (a requeued job that lost one): nothing to keep
	s.keeper = keeper_config(site, facts, *layout, ckpt_dir, get);
	s.env.emplace_back(ckpt::standby_dir_env, s.keeper->dir);
	s.env.emplace_back(exchange::progress_env, "1");
	return s;
}

} // namespace loom::spank_ckpt
