#include "plugins/spank_ckpt/standby_keeper.hpp"

#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/json.hpp"
#include "lib/util/log.hpp"
#include "lib/util/subprocess.hpp"
#include "plugins/spank_ckpt/slurm_api.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <sys/stat.h>
#include <unistd.h>

namespace loom::spank_ckpt {
namespace {

constexpr double tick_s = 0.25;    // how soon an ended step is answered
constexpr int call_timeout_s = 20; // one scontrol, squeue, scancel or loom call
constexpr int settle_s = 30;       // steps ending, the job letting go of a node

// The value of " key=" in one line of `scontrol -o show ...` (up to the next
// space or the line's end).
std::string field(const std::string &line, const std::string &key)
{
	std::string k = " " + key + "=";
	size_t at = (" " + line).find(k);
	if (at == std::string::npos)
		return {};
	size_t start = at + k.size() - 1;
	size_t end = line.find_first_of(" \n", start);
	return line.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

expected<std::string> call(const std::vector<std::string> &argv)
{
	RunOptions o;
	o.timeout_s = call_timeout_s;
	o.merge_stderr = true;
	auto r = run_command(argv, o);
	if (!r)
		return unexpected(r.error());
	if (r->exit_code != 0)
		return unexpected(command_line(argv),
				  trim(r->output).empty() ? "failed" : std::string(trim(r->output)));
	return r->output;
}

std::string sibling(const std::string &scontrol, const char *name)
{
	auto slash = scontrol.rfind('/');
	return slash == std::string::npos ? name : scontrol.substr(0, slash + 1) + name;
}

uint64_t file_size(const std::string &path)
{
	struct stat st;
	return !path.empty() && ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

} // namespace

void StandbyKeeper::start(KeeperConfig c)
{
	stop();
	c_ = std::move(c);
	stop_ = false;
	thread_ = std::thread([this] { run(); });
}

void StandbyKeeper::stop()
{
	if (!thread_.joinable())
		return;
	{
		std::lock_guard<std::mutex> lk(mu_);
		stop_ = true;
	}
	cv_.notify_all();
	thread_.join();
}

bool StandbyKeeper::open_dir()
{
	auto slash = c_.dir.rfind('/');
	if (auto st = make_dirs(c_.dir.substr(0, slash), 0755); !st) {
		log_error("job %u: standby directory: %s", c_.job_id, st.error().str().c_str());
		return false;
	}
	if (::mkdir(c_.dir.c_str(), 0700) != 0 && errno != EEXIST) {
		log_error("job %u: cannot create %s: %s", c_.job_id, c_.dir.c_str(), std::strerror(errno));
		return false;
	}
	dirfd_ = ::open(c_.dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (dirfd_ < 0 || ::fstat(dirfd_, &st) != 0 || (st.st_uid != 0 && st.st_uid != c_.uid) ||
	    ::fchown(dirfd_, c_.uid, c_.gid) != 0 || ::fchmod(dirfd_, 0700) != 0) {
		log_error("job %u: standby directory %s unusable: %s", c_.job_id, c_.dir.c_str(), std::strerror(errno));
		return false;
	}
	return true;
}

std::vector<int64_t> StandbyKeeper::ended_unanswered() { return unanswered("ended."); }

// The directory's entries (its descriptor's offset is shared: rewound each time).
std::set<std::string> StandbyKeeper::names()
{
	std::set<std::string> out;
	int fd = ::dup(dirfd_);
	DIR *d = fd >= 0 ? ::fdopendir(fd) : nullptr;
	if (!d) {
		if (fd >= 0)
			::close(fd);
		return out;
	}
	::rewinddir(d);
	while (struct dirent *e = ::readdir(d))
		if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
			out.insert(e->d_name);
	::closedir(d);
	return out;
}

// Empty the directory: an earlier run of the job (requeued) left its notices.
void StandbyKeeper::clear()
{
	for (const auto &n : names())
		::unlinkat(dirfd_, n.c_str(), 0);
}

// Steps with a 'kind' notice (started., ended.) and no verdict yet.
std::vector<int64_t> StandbyKeeper::unanswered(const std::string &kind)
{
	std::vector<int64_t> steps;
	auto all = names();
	for (const auto &n : all)
		if (n.rfind(kind, 0) == 0)
			if (auto id = n.substr(kind.size()); !all.count("verdict." + id))
				if (auto s = parse_int(id, 0, INT64_MAX); s)
					steps.push_back(*s);
	return steps;
}

// The answer to one step, written whole (a new file renamed over the name).
void StandbyKeeper::answer(int64_t step, bool relaunch, const std::string &why)
{
	ckpt::StepVerdict v{step, relaunch, generation_, c_.layout, "", why};
	if (!c_.cpus_per_node.empty())
		v.cpus_per_node = ckpt::compress_counts(c_.cpus_per_node);
	std::string text = ckpt::format_verdict(v) + "\n";
	std::string tmp = ".verdict." + std::to_string(step), name = "verdict." + std::to_string(step);
	::unlinkat(dirfd_, tmp.c_str(), 0);
	int fd = ::openat(dirfd_, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
	if (fd >= 0)
		ok = ::close(fd) == 0 && ok;
	if (!ok || ::renameat(dirfd_, tmp.c_str(), dirfd_, name.c_str()) != 0)
		log_error("job %u: cannot answer step %lld in %s: %s", c_.job_id, static_cast<long long>(step),
			  c_.dir.c_str(), std::strerror(errno));
}

void StandbyKeeper::run()
{
	if (!open_dir())
		return;
	clear();
	// The output so far is the job's (an earlier run's, appended to), not a step's.
	if (auto job = call({c_.scontrol, "-o", "show", "job", std::to_string(c_.job_id)}); job)
		log_from_ = file_size(field(*job, "StdOut"));
	auto last = std::chrono::steady_clock::now();
	for (;;) {
		{
			std::unique_lock<std::mutex> lk(mu_);
			cv_.wait_for(lk, std::chrono::duration<double>(tick_s), [this] { return stop_; });
			if (stop_)
				break;
		}
		auto ended = ended_unanswered();
		// Steps that ran when a node was replaced start again when they end.
		for (auto it = ended.begin(); it != ended.end();)
			if (relaunch_.count(*it)) {
				answer(*it, true, replaced_);
				relaunch_.erase(*it);
				it = ended.erase(it);
			} else {
				++it;
			}
		auto now = std::chrono::steady_clock::now();
		if (ended.empty() && now - last < std::chrono::seconds(c_.poll_s))
			continue;
		last = now;
		if (!ended.empty())
			settle_output();
		Evidence e = gather();
		bool relaunched = !e.culprit.empty() && recover(e, ended);
		if (!relaunched)
			for (int64_t s : ended) {
				std::string why = e.culprit.empty() ? "no fault of an active node found (" + e.cls + ")"
								    : "not recovered in the allocation";
				log_info("job %u: step %lld ended: %s", c_.job_id, static_cast<long long>(s),
					 why.c_str());
				answer(s, false, why);
			}
	}
	clear();
	::close(dirfd_);
	::rmdir(c_.dir.c_str());
}

// The job's record of its replacements (AdminComment).
void StandbyKeeper::post_note(const std::string &note)
{
	std::string err;
	if (!note_segment(c_.job_id, "loom standby: ", note, &err))
		log_warning("job %u: cannot note the replacement in its AdminComment: %s", c_.job_id, err.c_str());
}

// srun's I/O thread may still be writing the step's last lines while its
// exit handler reports the end: judge once the output stopped growing.
void StandbyKeeper::settle_output()
{
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
	uint64_t size = file_size(std_out_);
	while (std::chrono::steady_clock::now() < deadline) {
		std::this_thread::sleep_for(std::chrono::milliseconds(300));
		uint64_t now = file_size(std_out_);
		if (now == size)
			return;
		size = now;
	}
}

std::vector<int64_t> StandbyKeeper::running_steps()
{
	std::vector<int64_t> steps;
	auto out = call({sibling(c_.scontrol, "squeue"), "-h", "-s", "-j", std::to_string(c_.job_id), "-o", "%i"});
	if (!out)
		return steps;
	std::string prefix = std::to_string(c_.job_id) + ".";
	for (const auto &line : split_lines(*out)) {
		std::string id(trim(line));
		if (id.rfind(prefix, 0) == 0)
			if (auto s = parse_int(id.substr(prefix.size()), 0, INT32_MAX); s)
				steps.push_back(*s);
	}
	return steps;
}

} // namespace loom::spank_ckpt

namespace loom::spank_ckpt {

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

bool StandbyKeeper::recover(const Evidence &e, const std::vector<int64_t> &ended)
{
	handled_.insert(e.culprit);
	auto r = ckpt::replace_node(c_.layout, e.culprit, c_.batch_host);
	if (!r.done) {
		log_info("job %u: %s on %s (%s): %s: the job goes the requeue path", c_.job_id, e.cls.c_str(),
			 e.culprit.c_str(), e.evidence.c_str(), r.why.c_str());
		return false;
	}
	std::string job = std::to_string(c_.job_id);
	std::string reason = "loom: standby: " + e.cls + ": job " + job + ": " + e.evidence;
	if (reason.size() > 200)
		reason.resize(200);
	// The record first: without slurmdbd, Slurm refuses every update of a
	// job that changed size (its db_index stays unset, proc_req.c), and a
	// node set DOWN leaves the job.
	std::string what = e.culprit + " -> " + r.taken + " (" + e.cls + ")";
	post_note("loom standby: " + what + ", restart " + std::to_string(generation_ + 1) + " in the allocation, " +
		  std::to_string(r.after.standby.size()) + " standby left");
	// A node that stopped answering is set DOWN: Slurm takes it out of the
	// --no-kill job and ends the step on it at once, instead of after
	// SlurmdTimeout. DRAIN keeps it out when its slurmd comes back.
	if (e.cls == "node_failure")
		if (auto st = call({c_.scontrol, "update", "NodeName=" + e.culprit, "State=DOWN", "Reason=" + reason});
		    !st)
			log_warning("job %u: cannot set %s down: %s", c_.job_id, e.culprit.c_str(),
				    st.error().str().c_str());
	if (auto st = call({c_.scontrol, "update", "NodeName=" + e.culprit, "State=DRAIN", "Reason=" + reason}); !st)
		log_warning("job %u: cannot drain %s: %s", c_.job_id, e.culprit.c_str(), st.error().str().c_str());
	// The steps end on every node: a step's ranks cannot go on without the culprit's.
	auto steps = running_steps();
	for (int64_t s : steps)
		(void)call({sibling(c_.scontrol, "scancel"), "--signal=KILL", job + "." + std::to_string(s)});
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(settle_s);
	while (!running_steps().empty() && std::chrono::steady_clock::now() < deadline)
		std::this_thread::sleep_for(std::chrono::milliseconds(200));
	// What the job holds now: Slurm may have let the culprit go itself.
	if (r.release && in_job(e.culprit) && !release(e.culprit, r.after.job))
		r = ckpt::replace_node(c_.layout, e.culprit, e.culprit); // it stays in the job, excluded
	if (r.release) {
		auto at = std::find(c_.layout.job.begin(), c_.layout.job.end(), e.culprit) - c_.layout.job.begin();
		if (static_cast<size_t>(at) < c_.cpus_per_node.size())
			c_.cpus_per_node.erase(c_.cpus_per_node.begin() + at);
	}
	c_.layout = r.after;
	generation_++;
	log_from_ = file_size(std_out_);
	// Every step that was running starts again: those whose srun has ended
	// now, the others when it does (their sruns said they started).
	replaced_ = what;
	auto started = unanswered("started.");
	relaunch_.insert(started.begin(), started.end());
	relaunch_.insert(steps.begin(), steps.end());
	for (int64_t s : unanswered("ended.")) {
		relaunch_.erase(s);
		answer(s, true, what);
	}
	for (int64_t s : ended)
		if (relaunch_.erase(s))
			answer(s, true, what);
	log_info("job %u: %s: %s: %s; its steps start again on %s (restart %d in the allocation)", c_.job_id,
		 e.evidence.c_str(), reason.c_str(), r.why.c_str(), hostlist_compress(c_.layout.active).c_str(),
		 generation_);
	return true;
}

// Whether the job still holds 'node' (true when Slurm cannot be asked).
bool StandbyKeeper::in_job(const std::string &node)
{
	auto job = call({c_.scontrol, "-o", "show", "job", std::to_string(c_.job_id)});
	auto nodes =
		job ? hostlist_expand(field(*job, "NodeList")) : expected<std::vector<std::string>>(unexpected(""));
	return !nodes || std::find(nodes->begin(), nodes->end(), node) != nodes->end();
}

// Remove the culprit from the job (scontrol update JobId= NodeList=, once its
// steps are gone); false when Slurm keeps it.
bool StandbyKeeper::release(const std::string &culprit, const std::vector<std::string> &rest)
{
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(settle_s);
	for (;;) {
		auto st = call({c_.scontrol, "update", "JobId=" + std::to_string(c_.job_id),
				"NodeList=" + hostlist_compress(rest)});
		if (st)
			return true;
		// Refused for good: an earlier resize without slurmdbd, a node Slurm will not let go.
		std::string why = st.error().str();
		if (std::chrono::steady_clock::now() >= deadline || why.find("DB index") != std::string::npos) {
			log_warning("job %u: %s stays in the job, excluded from its steps: %s", c_.job_id,
				    culprit.c_str(), why.c_str());
			return false;
		}
		std::this_thread::sleep_for(std::chrono::milliseconds(500));
	}
}

} // namespace loom::spank_ckpt
