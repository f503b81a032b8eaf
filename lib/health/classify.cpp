#include "lib/health/classify.hpp"

#include "lib/util/log.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace loom::health {
namespace {

bool node_is_down(const std::string &state)
{
	return state.find("DOWN") != std::string::npos || state.find('*') != std::string::npos ||
	       state.find("NOT_RESPONDING") != std::string::npos || state.find("FAIL") != std::string::npos;
}

// A loom health drain names its check: "loom: gpu_xid: ..." -> the class it points to.
FailureClass class_of_loom_reason(const std::string &reason)
{
	std::string check = reason.substr(5);
	size_t b = check.find_first_not_of(' ');
	check = b == std::string::npos ? "" : check.substr(b);
	if (check.rfind("jobcomp:", 0) == 0) {
		// jobcomp/health's own reason names the class: "loom: jobcomp: gpu_fault: job 12: ..."
		for (FailureClass c :
		     {FailureClass::gpu_fault, FailureClass::network_fault, FailureClass::nccl_timeout})
			if (check.find(std::string(" ") + failure_class_name(c) + ":") != std::string::npos)
				return c;
		return FailureClass::node_failure;
	}
	if (check.rfind("gpu", 0) == 0)
		return FailureClass::gpu_fault;
	if (check.rfind("ib_", 0) == 0 || check.rfind("link_flaps", 0) == 0 || check.rfind("eth_", 0) == 0)
		return FailureClass::network_fault;
	return FailureClass::node_failure;
}

// The culprits the lines of one category name: the hosts of the lines whose
// kind blames the node, among the job's nodes. A job on one node ran every
// line there: when no blaming line names a host, that node is the culprit.
std::vector<std::string> culprits_of(const JobEnd &job, const JobLogScan &log, LogFinding f)
{
	std::set<std::string> in_job(job.nodes.begin(), job.nodes.end()), seen;
	std::vector<std::string> out;
	bool blamed = false, named = false;
	for (const auto &l : log.lines) {
		if (l.kind != f || !error_kind_info(l.error).blames_node)
			continue;
		blamed = true;
		named = named || !l.host.empty();
		if (in_job.count(l.host) && seen.insert(l.host).second)
			out.push_back(l.host);
	}
	if (blamed && !named && job.nodes.size() == 1)
		out.push_back(job.nodes.front());
	return out;
}

const JobLogLine *first_line(const JobLogScan &log, LogFinding kind)
{
	for (const auto &l : log.lines)
		if (l.kind == kind)
			return &l;
	return nullptr;
}

std::string quote_line(const JobLogLine *l)
{
	if (!l)
		return {};
	std::string t = l->text.substr(0, 120);
	return strprintf(" (log line %d: %s)", l->line, t.c_str());
}

// The class of category f, its culprits and the evidence ("3 network error lines (log line 7: ...)").
Classification from_log(const JobEnd &job, const JobLogScan &log, LogFinding f, int count, const char *what)
{
	Classification c;
	c.cls = failure_class_of(f);
	c.culprits = culprits_of(job, log, f);
	c.evidence = strprintf("%d %s", count, what) + quote_line(first_line(log, f));
	return c;
}

} // namespace

const char *failure_class_name(FailureClass c)
{
	switch (c) {
	case FailureClass::none:
		return "none";
	case FailureClass::node_failure:
		return "node_failure";
	case FailureClass::gpu_fault:
		return "gpu_fault";
	case FailureClass::network_fault:
		return "network_fault";
	case FailureClass::nccl_timeout:
		return "nccl_timeout";
	case FailureClass::oom:
		return "oom";
	case FailureClass::user_error:
		return "user_error";
	}
	return "?";
}

bool is_infrastructure(FailureClass c)
{
	return c == FailureClass::node_failure || c == FailureClass::gpu_fault || c == FailureClass::network_fault ||
	       c == FailureClass::nccl_timeout;
}

Classification classify_job(const JobEnd &job, const JobLogScan &log)
{
	Classification c;
	auto count = [&](LogFinding k) {
		auto it = log.counts.find(k);
		return it == log.counts.end() ? 0 : it->second;
	};
	if (job.state == "COMPLETED" && job.exit_code == 0 && job.signal == 0) {
		c.evidence = "completed";
		return c;
	}
	if (job.state == "CANCELLED" || job.state == "PREEMPTED") {
		c.evidence = "ended by " + job.state;
		return c;
	}
	// 1. Nodes that went down under the job, or that loom's health check drained.
	std::vector<std::string> down, loom_drained;
	FailureClass drained_class = FailureClass::node_failure;
	for (const auto &n : job.nodes) {
		auto st = job.node_state.find(n);
		auto rs = job.node_reason.find(n);
		if (st != job.node_state.end() && node_is_down(st->second))
			down.push_back(n);
		else if (rs != job.node_reason.end() && rs->second.rfind("loom:", 0) == 0 &&
			 (st == job.node_state.end() || st->second.find("DRAIN") != std::string::npos)) {
			loom_drained.push_back(n);
			drained_class = class_of_loom_reason(rs->second);
		}
	}
	if (job.state == "NODE_FAIL" || job.state == "BOOT_FAIL" || !down.empty()) {
		c.cls = FailureClass::node_failure;
		c.culprits = down;
		c.evidence = job.state +
			     (down.empty() ? std::string()
					   : ", down: " + down.front() +
						     (down.size() > 1 ? " +" + std::to_string(down.size() - 1) : ""));
		return c;
	}
	if (!loom_drained.empty()) {
		c.cls = drained_class;
		c.culprits = loom_drained;
		c.evidence = "node " + loom_drained.front() +
			     " drained by loom: " + job.node_reason.at(loom_drained.front());
		return c;
	}
	// 2. What the job's own output says, most specific first.
	if (count(LogFinding::gpu_fault))
		return from_log(job, log, LogFinding::gpu_fault, count(LogFinding::gpu_fault), "GPU fault lines");
	if (job.state == "OUT_OF_MEMORY" || count(LogFinding::oom_host) || count(LogFinding::oom_gpu)) {
		c.cls = FailureClass::oom;
		const JobLogLine *l = first_line(log, LogFinding::oom_gpu);
		c.evidence =
			(job.state == "OUT_OF_MEMORY" ? std::string("OUT_OF_MEMORY") : std::string("out of memory")) +
			quote_line(l ? l : first_line(log, LogFinding::oom_host));
		return c;
	}
	if (count(LogFinding::network))
		return from_log(job, log, LogFinding::network, count(LogFinding::network), "network error lines");
	// Every rank of a hung collective times out: the lines do not name the
	// culprit (the kind blames no node), so nothing is drained; the job is
	// still the infrastructure's.
	if (count(LogFinding::nccl_timeout))
		return from_log(job, log, LogFinding::nccl_timeout, count(LogFinding::nccl_timeout),
				"NCCL timeout lines");
	if (job.state == "TIMEOUT" || job.state == "DEADLINE") {
		c.cls = FailureClass::user_error;
		c.evidence = "reached its time limit";
		return c;
	}
	c.cls = FailureClass::user_error;
	const JobLogLine *l = first_line(log, LogFinding::user_error);
	if (!l)
		l = first_line(log, LogFinding::cuda_error);
	if (!l)
		l = first_line(log, LogFinding::nccl_error);
	c.evidence =
		job.signal ? strprintf("killed by signal %d", job.signal) : strprintf("exit code %d", job.exit_code);
	c.evidence += quote_line(l);
	return c;
}

JobDecision decide_job(const JobEnd &job, const Classification &c, uint32_t restart_budget)
{
	JobDecision d;
	if (!is_infrastructure(c.cls)) {
		d.why = std::string(failure_class_name(c.cls)) + ": no drain, no requeue";
		return d;
	}
	d.drain = c.culprits;
	d.reason =
		strprintf("loom: jobcomp: %s: job %u: %s", failure_class_name(c.cls), job.job_id, c.evidence.c_str());
	for (char &ch : d.reason)
		if (ch == '\n' || ch == '"' || ch == '\'')
			ch = ' ';
	if (d.reason.size() > 200)
		d.reason = d.reason.substr(0, 197) + "...";
	if (!(job.checkpointed || job.requeue_allowed)) {
		d.why = "not checkpoint-enabled and not requeueable: not requeued";
	} else if (job.restart_count >= restart_budget) {
		d.why = strprintf("restart budget spent (%u of %u): not requeued", job.restart_count, restart_budget);
	} else {
		d.requeue = true;
		d.why = strprintf("requeue (restart %u of %u)", job.restart_count + 1, restart_budget);
	}
	return d;
}

std::string expand_output_path(const std::string &pattern, const std::string &work_dir, uint32_t job_id,
			       const std::string &user, const std::string &job_name, const std::string &first_node,
			       uint32_t array_job_id, uint32_t array_task_id)
{
	std::string out;
	for (size_t i = 0; i < pattern.size(); i++) {
		char ch = pattern[i];
		if (ch != '%' || i + 1 >= pattern.size()) {
			out += ch;
			continue;
		}
		size_t j = i + 1;
		int width = 0;
		while (j < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[j])) && width < 100)
			width = width * 10 + (pattern[j++] - '0');
		if (j >= pattern.size()) {
			out += pattern.substr(i);
			break;
		}
		auto num = [&](uint32_t v) {
			std::string s = std::to_string(v);
			if (static_cast<int>(s.size()) < width)
				s.insert(0, static_cast<size_t>(width) - s.size(), '0');
			return s;
		};
		switch (pattern[j]) {
		case '%':
			out += '%';
			break;
		case 'j':
		case 'J':
			out += num(job_id);
			break;
		case 'A':
			out += num(array_job_id ? array_job_id : job_id);
			break;
		case 'a':
			out += num(array_task_id);
			break;
		case 'u':
			out += user;
			break;
		case 'x':
			out += job_name;
			break;
		case 'N':
			out += first_node;
			break;
		case 'n':
		case 't':
			out += num(0);
			break;
		default:
			out += pattern.substr(i, j - i + 1);
			break;
		}
		i = j;
	}
	if (!out.empty() && out[0] != '/' && !work_dir.empty())
		out = work_dir + "/" + out;
	return out;
}

} // namespace loom::health
