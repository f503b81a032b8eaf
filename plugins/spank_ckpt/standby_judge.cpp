#include "plugins/spank_ckpt/standby_keeper.hpp"

#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/json.hpp"
#include "lib/util/log.hpp"
#include "lib/util/subprocess.hpp"
#include "plugins/spank_ckpt/slurm_api.hpp"
#include "plugins/spank_ckpt/standby_calls.hpp"

#include "lib/exchange/progress_report.hpp"
#include "lib/exchange/suspect_mark.hpp"
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace loom::spank_ckpt {

using namespace standby;

// The job's node list and output files, the active nodes' states, and what
// jobcomp/health's classifier makes of them and of the step's output.
Evidence StandbyKeeper::gather()
{
	Evidence e;
	auto job = call({c_.scontrol, "-o", "show", "job", std::to_string(c_.job_id)});
	if (!job) {
		log_warning("job %u: standby check: %s", c_.job_id, job.error().str().c_str());
		return e;
	}
	std_out_ = field(*job, "StdOut"), std_err_ = field(*job, "StdErr");
	std::vector<std::string> in_job;
	if (auto h = hostlist_expand(field(*job, "NodeList")); h)
		in_job = *h;
	std::vector<std::string> argv = {c_.loom,
					 "health",
					 "classify",
					 "--state",
					 "FAILED",
					 "--checkpointed",
					 "--json",
					 "--from",
					 std::to_string(log_from_),
					 "--nodes",
					 join(c_.layout.active, ",")};
	auto nodes = call({c_.scontrol, "-o", "show", "node", join(c_.layout.active, ",")});
	for (const auto &line : nodes ? split_lines(*nodes) : std::vector<std::string>{})
		if (auto name = field(line, "NodeName"); !name.empty())
			argv.push_back("--node-state=" + name + "=" + field(line, "State"));
	for (const auto &n : c_.layout.active)
		if (!in_job.empty() && std::find(in_job.begin(), in_job.end(), n) == in_job.end())
			argv.push_back("--node-state=" + n + "=DOWN");
	std::vector<std::string> logs = {std_out_};
	if (std_err_ != std_out_)
		logs.push_back(std_err_);
	for (const auto &f : logs)
		if (!f.empty() && ::access(f.c_str(), R_OK) == 0)
			argv.insert(argv.end(), {"--log", f});
	RunOptions o;
	o.timeout_s = call_timeout_s;
	o.merge_stderr = false;
	auto r = run_command(argv, o);
	auto doc = r ? json_parse(r->output, "loom health classify") : expected<Json>(unexpected(r.error()));
	if (!doc) {
		log_warning("job %u: standby check: %s", c_.job_id, doc.error().str().c_str());
		return e;
	}
	json_object *cls = nullptr, *infra = nullptr, *culprits = nullptr, *ev = nullptr;
	json_object_object_get_ex(doc->get(), "class", &cls);
	json_object_object_get_ex(doc->get(), "infrastructure", &infra);
	json_object_object_get_ex(doc->get(), "culprits", &culprits);
	json_object_object_get_ex(doc->get(), "evidence", &ev);
	e.cls = cls ? json_object_get_string(cls) : "?";
	if (!infra || !json_object_get_boolean(infra) || !culprits)
		return e;
	for (size_t i = 0; i < json_object_array_length(culprits); i++) {
		std::string n = json_object_get_string(json_object_array_get_idx(culprits, i));
		if (!handled_.count(n) &&
		    std::find(c_.layout.active.begin(), c_.layout.active.end(), n) != c_.layout.active.end()) {
			e.culprit = n;
			e.evidence = ev ? json_object_get_string(ev) : "";
			break;
		}
	}
	return e;
}

} // namespace loom::spank_ckpt

namespace loom::spank_ckpt {

namespace {

struct Reports {
	std::vector<ckpt::RankProgress> ranks;
	int world = 0;   // the ranks' own count
	int stepped = 0; // of them, those with a step in this run
};

// Every rank's report under the job's checkpoint directory beating since
// 'since' (this run's), a step before it counted as none.
Reports read_reports(const std::string &ckpt_dir, double since)
{
	Reports out;
	std::string dir = path_join(ckpt_dir, exchange::progress_dir_name);
	int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return out;
	DIR *d = ::fdopendir(dfd);
	if (!d) {
		::close(dfd);
		return out;
	}
	while (struct dirent *e = ::readdir(d)) {
		std::string name = e->d_name;
		if (name.rfind("rank.", 0) != 0 || name.find(".tmp") != std::string::npos)
			continue;
		int fd = ::openat(dfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		char buf[4096];
		ssize_t n = ::read(fd, buf, sizeof buf);
		::close(fd);
		auto r = n > 0 ? exchange::parse_progress(std::string_view(buf, static_cast<size_t>(n)),
							  dir + "/" + name)
			       : expected<exchange::ProgressReport>(unexpected(name, "empty"));
		if (!r || r->beat < since)
			continue;
		int64_t step = r->time >= since ? r->step : -1;
		out.ranks.push_back({r->rank, r->node, step, r->time, r->step_s, r->beat});
		out.world = std::max(out.world, r->world);
		out.stepped += step >= 0;
	}
	::closedir(d);
	return out;
}

// "step 1.21 s, its peers' median 0.20 s"
std::string straggler_why(const std::vector<ckpt::RankProgress> &reports, int rank)
{
	std::vector<double> peers;
	double mine = 0;
	for (const auto &r : reports) {
		if (r.rank == rank)
			mine = r.step_s;
		else
			peers.push_back(r.step_s);
	}
	std::sort(peers.begin(), peers.end());
	double median = peers.empty() ? 0 : peers[peers.size() / 2];
	char buf[128];
	std::snprintf(buf, sizeof buf, "step %.2f s, its peers' median %.2f s", mine, median);
	return buf;
}

double now_unix() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

} // namespace

// The ranks' progress (exchange/progress_report.hpp) judged by ProgressJudge:
// a hang names the rank that stopped (its node is the culprit); a straggler
// is named in the job's record and its node marked suspect, once.
Evidence StandbyKeeper::watch_progress()
{
	Evidence e;
	if (c_.ckpt_dir.empty())
		return e;
	auto got = read_reports(c_.ckpt_dir, gen_start_);
	// Judged once every rank of the run has stepped: ranks load minutes
	// apart, and one still loading is not a hang of the others.
	if (got.ranks.empty() || got.stepped < got.world)
		return e;
	const auto &reports = got.ranks;
	auto v = judge_.judge(reports, now_unix());
	auto node_of = [&](int rank) {
		for (const auto &r : reports)
			if (r.rank == rank)
				return r.node;
		return std::string();
	};
	for (int rank : v.stragglers)
		if (stragglers_.insert(rank).second)
			mark_straggler(rank, node_of(rank), straggler_why(reports, rank));
	if (v.state != ckpt::Progress::hang)
		return e;
	for (int rank : v.culprits)
		if (auto n = node_of(rank);
		    std::find(c_.layout.active.begin(), c_.layout.active.end(), n) != c_.layout.active.end() &&
		    !handled_.count(n)) {
			e.culprit = n;
			e.cls = "hang";
			e.evidence = "rank " + std::to_string(rank) + " on " + n + ": " + v.why;
			return e;
		}
	if (!hang_told_) {
		hang_told_ = true;
		log_warning("job %u: no progress (%s), and no rank to blame on an active node: left to the job",
			    c_.job_id, v.why.c_str());
	}
	return e;
}

void StandbyKeeper::mark_straggler(int rank, const std::string &node, const std::string &why)
{
	std::string text = "rank " + std::to_string(rank) + " on " + node + ": " + why;
	log_info("job %u: straggler: %s; %s marked suspect", c_.job_id, text.c_str(), node.c_str());
	mark_suspect(node, "straggler", text);
	post_note("loom straggler: ", "loom straggler: " + text);
}

// loom's suspect mark in the node's Extra field (lib/exchange/suspect_mark.hpp),
// never over someone else's note there.
void StandbyKeeper::mark_suspect(const std::string &node, const std::string &check, const std::string &evidence)
{
	std::string mark = exchange::suspect_mark(check, "job " + std::to_string(c_.job_id) + ": " + evidence);
	auto shown = call({c_.scontrol, "show", "node", node});
	std::string extra;
	for (const auto &line : shown ? split_lines(*shown) : std::vector<std::string>{})
		if (auto at = line.find("Extra="); at != std::string::npos && line.find_first_not_of(' ') == at)
			extra = line.substr(at + 6);
	if (!extra.empty() && extra != "(null)" && !exchange::is_loom_suspect_mark(extra))
		log_info("job %u: %s's Extra holds someone else's note: not marked %s", c_.job_id, node.c_str(),
			 check.c_str());
	else if (auto st = call({c_.scontrol, "update", "NodeName=" + node, "Extra=" + mark}); !st)
		log_warning("job %u: cannot mark %s suspect: %s", c_.job_id, node.c_str(), st.error().str().c_str());
}

} // namespace loom::spank_ckpt
