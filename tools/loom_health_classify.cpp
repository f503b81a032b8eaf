// loom health classify: the jobcomp/health classifier on the command line,
// for admins asking "why did job X fail, and what would loom do?";
// loom health stats: print the failure statistics file.
#include "tools/command.hpp"
#include "tools/options.hpp"

#include "lib/exchange/failure_stats.hpp"
#include "lib/health/classify.hpp"
#include "lib/health/job_log.hpp"
#include "lib/util/config.hpp"
#include "lib/util/json.hpp"
#include "lib/util/log.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <unistd.h>

using namespace loom;
using namespace loom::health;

namespace {

bool split_kv(const char *arg, std::string &k, std::string &v)
{
	const char *eq = std::strchr(arg, '=');
	if (!eq || eq == arg)
		return false;
	k.assign(arg, eq);
	v = eq + 1;
	return true;
}

} // namespace

namespace {

struct ClassifyArgs {
	JobEnd job;
	std::vector<std::string> logs;
	int64_t budget = 3;
	int64_t from = 0;
	bool json = false;
};

tool::Setter set_into(std::map<std::string, std::string> &out, const char *want)
{
	return [&out, want](const std::string &v) {
		std::string k, val;
		if (!split_kv(v.c_str(), k, val))
			return std::string("expected ") + want;
		out[k] = val;
		return std::string();
	};
}

tool::Setter set_nodes(std::vector<std::string> &out)
{
	return [&out](const std::string &v) {
		size_t start = 0;
		while (start <= v.size()) {
			size_t c = v.find(',', start);
			std::string w = v.substr(start, c == std::string::npos ? std::string::npos : c - start);
			if (!w.empty())
				out.push_back(w);
			if (c == std::string::npos)
				break;
			start = c + 1;
		}
		return std::string();
	};
}

// An integer into 'out' of another width.
template <typename T>
tool::Setter set_number(T &out, int64_t lo, int64_t hi)
{
	return [&out, lo, hi](const std::string &v) {
		auto n = parse_int(v, lo, hi);
		if (!n)
			return n.error().message;
		out = static_cast<T>(*n);
		return std::string();
	};
}

tool::OptionTable classify_options(ClassifyArgs &a)
{
	using namespace tool;
	JobEnd &j = a.job;
	OptionTable t("loom health classify", "--state STATE [OPTION]...",
		      "Prints the failure class, the culprit nodes and what jobcomp/health would do.");
	t.add("--state", "STATE", "the job's end state (COMPLETED, FAILED, NODE_FAIL, TIMEOUT, OUT_OF_MEMORY, ...)",
	      set_string(j.state))
		.add("--exit-code", "N", "its exit code", set_number(j.exit_code, 0, 255))
		.add("--signal", "N", "the signal that ended it", set_number(j.signal, 0, 64))
		.add("--nodes", "n1,n2", "its nodes", set_nodes(j.nodes))
		.add("--node-state", "NODE=STATE", "a node's state in Slurm (repeat)",
		     set_into(j.node_state, "NODE=STATE"))
		.add("--node-reason", "NODE=REASON", "a node's reason in Slurm (repeat)",
		     set_into(j.node_reason, "NODE=REASON"))
		.add("--log", "FILE", "the job's output or error file (repeat)",
		     [&a](const std::string &v) {
			     a.logs.push_back(v);
			     return std::string();
		     })
		.add("--from", "BYTES", "read the logs from this offset on (one step's part of them)",
		     set_int(a.from, 0, INT64_MAX))
		.add("--checkpointed", "", "the job checkpoints (--ckpt)", set_flag(j.checkpointed))
		.add("--requeue", "", "the job may be requeued", set_flag(j.requeue_allowed))
		.add("--restarts", "N", "how often it was requeued already", set_number(j.restart_count, 0, 1000000))
		.add("--budget", "N", "the restart budget (default 3)", set_int(a.budget, 0, 1000))
		.add("--json", "", "machine-readable output", set_flag(a.json));
	t.epilog("Exit: 0, or 1 for an infrastructure failure (or a log that cannot be read), 2 bad usage.");
	return t;
}

void print_classification(const Classification &c, const JobDecision &d, bool json)
{
	if (json) {
		Json out = Json::object();
		out.set("class", Json::string(failure_class_name(c.cls)));
		out.set("infrastructure", Json::boolean(is_infrastructure(c.cls)));
		Json cul = Json::array();
		for (const auto &n : c.culprits)
			cul.push(Json::string(n));
		out.set("culprits", std::move(cul));
		out.set("evidence", Json::string(c.evidence));
		out.set("requeue", Json::boolean(d.requeue));
		out.set("drain_reason", Json::string(d.reason));
		out.set("decision", Json::string(d.why));
		std::fputs(out.dump().c_str(), stdout);
		return;
	}
	std::printf("class: %s%s\nevidence: %s\n", failure_class_name(c.cls),
		    is_infrastructure(c.cls) ? " (infrastructure)" : "", c.evidence.c_str());
	std::string cul;
	for (const auto &n : c.culprits)
		cul += (cul.empty() ? "" : ",") + n;
	std::printf("drain: %s\nrequeue: %s\ndecision: %s\n", cul.empty() ? "none" : cul.c_str(),
		    d.requeue ? "yes" : "no", d.why.c_str());
}

} // namespace

int loom_health_classify_main(int argc, char **argv)
{
	ClassifyArgs a;
	tool::OptionTable t = classify_options(a);
	if (int rc = t.parse(argc, argv); rc >= 0)
		return rc;
	if (a.job.state.empty()) {
		std::fprintf(stderr, "loom health classify: --state is required\n");
		t.usage(stderr);
		return tool::exit_usage;
	}
	JobLogScan all;
	for (const auto &path : a.logs) {
		auto scan =
			scan_job_log_file(path, 8u << 20, 200, nvidia_default_xids(), static_cast<uint64_t>(a.from));
		if (!scan) {
			std::fprintf(stderr, "loom health classify: %s\n", scan.error().str().c_str());
			return tool::exit_problems;
		}
		for (auto &l : scan->lines)
			all.lines.push_back(std::move(l));
		for (const auto &[kind, c] : scan->counts)
			all.counts[kind] += c;
	}
	Classification c = classify_job(a.job, all);
	JobDecision d = decide_job(a.job, c, static_cast<uint32_t>(a.budget));
	print_classification(c, d, a.json);
	return is_infrastructure(c.cls) ? tool::exit_problems : tool::exit_ok;
}

int loom_health_stats_main(int argc, char **argv)
{
	std::string path;
	tool::OptionTable t("loom health stats", "FILE",
			    "Prints the failure statistics jobcomp/health keeps (failure-stats.json).");
	t.positional([&path](const std::string &v) {
		if (!path.empty())
			return std::string("one statistics file only");
		path = v;
		return std::string();
	});
	t.epilog("Exit: 0, or 1 when the file is missing or unreadable; 2 bad usage.");
	if (int rc = t.parse(argc, argv); rc >= 0)
		return rc;
	if (path.empty()) {
		std::fprintf(stderr, "loom health stats: a statistics file is required\n");
		t.usage(stderr);
		return tool::exit_usage;
	}
	// A missing file is no statistics to print, not an empty table (the
	// worker's own reader takes a missing file as a fresh start).
	if (::access(path.c_str(), F_OK) != 0) {
		std::fprintf(stderr, "loom health stats: %s: %s\n", path.c_str(), std::strerror(errno));
		return tool::exit_problems;
	}
	auto s = exchange::load_failure_stats(path);
	if (!s) {
		std::fprintf(stderr, "loom health stats: %s\n", s.error().str().c_str());
		return tool::exit_problems;
	}
	std::printf("%-16s %-10s %12s %9s %14s\n", "node", "gpu_class", "exposure_h", "failures", "mtbf_h");
	for (const auto &[name, n] : s->nodes)
		std::printf("%-16s %-10s %12.1f %9lld %14s\n", name.c_str(), n.gpu_class.c_str(), n.exposure_s / 3600,
			    static_cast<long long>(n.failures),
			    n.failures ? std::to_string(n.mtbf_s() / 3600).substr(0, 10).c_str() : "-");
	for (const auto &[name, g] : s->gpu_classes)
		std::printf("%-16s %-10s %12.1f %9lld %14s\n", "(class)", name.c_str(), g.exposure_s / 3600,
			    static_cast<long long>(g.failures),
			    g.failures ? std::to_string(g.mtbf_s() / 3600).substr(0, 10).c_str() : "-");
	return 0;
}
