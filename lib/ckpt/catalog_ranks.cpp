// loom ckpt: what a job restores (doc/loom-ckpt-protocol.md 7.3): the job's
// check, a rank's share of the verification, and the agreement of ranks.
#include "lib/ckpt/catalog.hpp"

#include "lib/ckpt/manifest.hpp"

#include <climits>
#include <map>

namespace loom::ckpt {
namespace {

std::string job_text(const Job &job)
{
	return "this job has " + std::to_string(job.world_size) + (job.world_size == 1 ? " process" : " ranks");
}

bool in_share(const RankPart &p, const Manifest &m, const Job &job)
{
	if (m.layout == layout_ranks)
		return p.rank == job.rank;
	return job.world_size > 0 && p.rank % job.world_size == job.rank; // dcp: r, r+W, r+2W...
}

// What one rank thinks of the checkpoints, each judged once, on demand.
struct Judge {
	const Job &job;
	std::vector<Entry> list;
	std::map<size_t, bool> judged;

	bool accepts(size_t i)
	{
		auto it = judged.find(i);
		if (it != judged.end())
			return it->second;
		Entry &e = list[i];
		bool good = false;
		if (e.manifest) {
			auto st = verify_share(e.path, *e.manifest, job, &e.reason);
			if (st)
				st = check_job(e.path, *e.manifest, job, &e.reason);
			if (!st)
				e.problem = st.error().str();
			good = st.has_value();
		}
		return judged[i] = good;
	}
	// The newest step at or below 'bound' this rank accepts; -1 for none.
	int64_t newest(int64_t bound)
	{
		for (size_t i = 0; i < list.size(); i++)
			if (list[i].step <= bound && accepts(i))
				return list[i].step;
		return -1;
	}
};

} // namespace

status check_job(const std::string &path, const Manifest &m, const Job &job, Problem *why)
{
	Problem scratch;
	Problem &w = why ? *why : scratch;
	w = Problem::none;
	if (m.version == 1 && job.world_size == 1)
		return ok();
	if (m.version == 2 && (m.layout == layout_dcp || m.world_size == job.world_size))
		return ok(); // dcp: DCP reshards
	w = Problem::world_size_mismatch;
	if (m.version == 1)
		return unexpected(path, "written by one process, " + job_text(job));
	return unexpected(path, "written by " + std::to_string(m.world_size) + " ranks, " + job_text(job));
}

status verify_share(const std::string &path, const Manifest &m, const Job &job, Problem *why)
{
	if (m.version != 2)
		return verify_checkpoint(path, m, Verify::full, why);
	std::vector<FileEntry> mine, others;
	for (const auto &p : m.ranks) {
		auto &to = in_share(p, m, job) ? mine : others;
		to.insert(to.end(), p.files.begin(), p.files.end());
	}
	if (auto st = verify_files(path, others, Verify::quick, why); !st)
		return st;
	return verify_files(path, mine, Verify::full, why);
}

expected<std::optional<Latest>> find_latest_agreed(const std::string &dir, const Job &job, const AllMin &all_min)
{
	auto list = list_checkpoints(dir);
	Judge judge{job, list ? std::move(*list) : std::vector<Entry>(), {}};
	int64_t agreed = -2, bound = INT64_MAX;
	while (true) {
		// A rank that cannot list proposes none: the others learn it here.
		int64_t m = all_min(list ? judge.newest(bound) : -1);
		if (m < 0 || m == agreed) {
			agreed = m;
			break;
		}
		agreed = bound = m;
	}
	if (!list)
		return unexpected(list.error());
	Latest l;
	for (size_t i = 0; i < judge.list.size(); i++) {
		Entry &e = judge.list[i];
		if (e.step == agreed) {
			l.entry = std::move(e);
			return std::optional<Latest>(std::move(l));
		}
		if (!judge.judged.count(i) || judge.judged[i]) { // not refused here
			e.reason = Problem::none;
			e.problem = "not taken: the ranks agreed on an older step (another rank refused it)";
		}
		l.skipped.push_back(std::move(e));
	}
	return std::optional<Latest>();
}

} // namespace loom::ckpt
