#include "lib/health/slurm_ops.hpp"

#include "lib/exchange/suspect_mark.hpp"

#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/gres.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/subprocess.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>
#include <set>
#include <unistd.h>

namespace loom::health {
namespace {

// Fields scontrol prints on a line of their own, whose value is the rest of
// the line (free text with spaces).
bool whole_line_key(std::string_view key)
{
	return key == "Reason" || key == "Comment" || key == "Extra" || key == "OS";
}

void set_state(SlurmNode &n, std::string_view v)
{
	n.state = std::string(v);
	n.flags.clear();
	size_t start = 0;
	bool first = true;
	while (start <= v.size()) {
		size_t plus = v.find('+', start);
		std::string_view part =
			v.substr(start, plus == std::string_view::npos ? std::string_view::npos : plus - start);
		std::string p(part);
		if (!p.empty() && p.back() == '*') {
			n.not_responding = true;
			p.pop_back();
		}
		if (first)
			n.base = p;
		else if (!p.empty())
			n.flags.push_back(p);
		first = false;
		if (plus == std::string_view::npos)
			break;
		start = plus + 1;
	}
}

void set_field(SlurmNode &n, std::string_view key, std::string_view v)
{
	if (key == "State")
		set_state(n, v);
	else if (key == "Gres")
		n.gres_gpus = gres_gpu_count(v);
	else if (key == "Extra")
		n.extra = v == "(null)" ? std::string() : std::string(v);
	else if (key == "Comment")
		n.comment = v == "(null)" ? std::string() : std::string(v);
	else if (key == "Reason") {
		// "text [user@2026-12-01T20:23:36]"
		if (v.size() > 2 && v.back() == ']') {
			size_t tag = v.rfind(" [");
			if (tag != std::string_view::npos) {
				std::string_view who = v.substr(tag + 2, v.size() - tag - 3);
				size_t at = who.find('@');
				n.reason_by = std::string(who.substr(0, at));
				v = v.substr(0, tag);
			}
		}
		n.reason = v == "(null)" ? std::string() : std::string(v);
	}
}

} // namespace

bool SlurmNode::has(std::string_view flag) const { return std::find(flags.begin(), flags.end(), flag) != flags.end(); }

bool SlurmNode::out_of_our_hands() const
{
	if (base == "DOWN" || base == "FUTURE" || base == "UNKNOWN" || base == "ERROR" || not_responding)
		return true;
	for (const char *f : {"REBOOT_REQUESTED", "REBOOT_ISSUED", "POWERING_UP", "POWERING_DOWN", "POWERED_DOWN",
			      "POWER_DOWN", "MAINTENANCE", "MAINT", "FAIL"})
		if (has(f))
			return true;
	return false;
}

bool SlurmNode::reason_is_slurms() const
{
	if (reason.empty())
		return true;
	// The reasons slurmctld and slurmd write (src/slurmctld, src/slurmd).
	for (const char *r : {"Not responding", "Kill task failed", "Node unexpectedly rebooted",
			      "batch job complete failure", "Prolog error", "Epilog error", "Job credential expired",
			      "Low RealMemory", "Low CPUs", "Low TmpDisk", "Low socket*core*thread count",
			      "NO NETWORK ADDRESS FOUND", "reboot requested", "reboot issued", "Node Failure"})
		if (reason.rfind(r, 0) == 0)
			return true;
	return false;
}

bool SlurmNode::may_drain_after_job_failure() const
{
	if (drained())
		return false;
	for (const char *f : {"REBOOT_REQUESTED", "REBOOT_ISSUED", "POWERING_UP", "POWERING_DOWN", "POWERED_DOWN",
			      "POWER_DOWN", "MAINTENANCE", "MAINT"})
		if (has(f))
			return false;
	if ((base == "DOWN" || not_responding) && !reason_is_slurms() && reason.rfind("loom:", 0) != 0)
		return false; // down with someone else's reason
	return base != "FUTURE";
}

std::string SlurmNode::suspect_field() const
{
	if (exchange::is_loom_suspect_mark(extra))
		return "extra";
	if (exchange::is_loom_suspect_mark(comment))
		return "comment";
	return {};
}

std::string SlurmNode::suspect_mark() const
{
	std::string f = suspect_field();
	return f == "extra" ? extra : f == "comment" ? comment : std::string();
}

expected<std::map<std::string, SlurmNode>> parse_show_node(std::string_view text)
{
	std::map<std::string, SlurmNode> out;
	SlurmNode cur;
	bool in = false, state_seen = false;
	auto flush = [&]() -> status {
		if (!in)
			return ok();
		if (!state_seen)
			return unexpected("scontrol show node", "node " + cur.name + ": no State= in its record");
		out[cur.name] = std::move(cur);
		cur = SlurmNode();
		in = state_seen = false;
		return ok();
	};
	size_t lineno = 0;
	for (const auto &raw : split_lines(text)) {
		lineno++;
		std::string_view line = trim(raw);
		if (line.empty())
			continue;
		if (line.rfind("NodeName=", 0) == 0) {
			if (auto st = flush(); !st)
				return unexpected(st.error());
			in = true;
		} else if (!in) {
			return unexpected("scontrol show node", "line " + std::to_string(lineno) +
									": not a node record: '" +
									std::string(line.substr(0, 80)) + "'");
		}
		size_t eq = line.find('=');
		if (eq != std::string_view::npos && whole_line_key(line.substr(0, eq))) {
			set_field(cur, line.substr(0, eq), line.substr(eq + 1));
			continue;
		}
		size_t pos = 0;
		while (pos < line.size()) {
			size_t sp = line.find(' ', pos);
			std::string_view tok =
				line.substr(pos, sp == std::string_view::npos ? std::string_view::npos : sp - pos);
			pos = sp == std::string_view::npos ? line.size() : sp + 1;
			size_t e = tok.find('=');
			if (e == std::string_view::npos)
				continue;
			std::string_view key = tok.substr(0, e), val = tok.substr(e + 1);
			if (key == "NodeName")
				cur.name = std::string(val);
			else if (key == "State")
				state_seen = true;
			set_field(cur, key, val);
		}
	}
	if (auto st = flush(); !st)
		return unexpected(st.error());
	return out;
}

expected<SlurmNode> parse_show_node(std::string_view text, const std::string &name)
{
	auto all = parse_show_node(text);
	if (!all)
		return unexpected(all.error());
	auto it = all->find(name);
	if (it == all->end())
		return unexpected(name, "scontrol does not know this node");
	return it->second;
}

std::vector<std::string> ScontrolOps::update_argv(const std::string &node,
						  const std::vector<std::string> &settings) const
{
	std::vector<std::string> a = {scontrol_, "update", "nodename=" + node};
	a.insert(a.end(), settings.begin(), settings.end());
	return a;
}

expected<CommandResult> ScontrolOps::run(const std::vector<std::string> &argv, size_t max_output)
{
	auto r = run_command(argv, timeout_, cancel_, max_output);
	if (!r && cancel_ && cancel_->load(std::memory_order_acquire))
		cut_.fetch_add(1);
	return r;
}

status ScontrolOps::update(const std::vector<std::string> &argv)
{
	auto r = run(argv, 64u << 10);
	if (!r)
		return unexpected(r.error());
	if (r->exit_code != 0)
		return unexpected(command_line(argv), std::string(trim(r->output)));
	return ok();
}

expected<std::map<std::string, SlurmNode>> ScontrolOps::show_nodes(const std::vector<std::string> &nodes)
{
	std::map<std::string, SlurmNode> out;
	// A few KiB per node: ask in batches, read back in full or fail.
	constexpr size_t batch = 64;
	for (size_t i = 0; i < nodes.size(); i += batch) {
		std::string list;
		for (size_t k = i; k < std::min(nodes.size(), i + batch); k++)
			list += (list.empty() ? "" : ",") + nodes[k];
		std::vector<std::string> argv = {scontrol_, "show", "node", list};
		auto r = run(argv, 4u << 20);
		if (!r)
			return unexpected(r.error());
		if (r->truncated)
			return unexpected(command_line(argv), "answer longer than 4 MiB: not read");
		std::string_view text = r->output;
		if (r->exit_code != 0) {
			// A list with a node Slurm does not know: scontrol says so and exits 1.
			if (text.find("not found") == std::string_view::npos)
				return unexpected(command_line(argv), std::string(trim(text)));
		}
		// Lines other than records ("Node x not found") are dropped before parsing.
		std::string records;
		for (const auto &l : split_lines(text))
			if (!(l.rfind("Node ", 0) == 0 && l.find(" not found") != std::string::npos))
				records += l + "\n";
		auto parsed = parse_show_node(records);
		if (!parsed)
			return unexpected(parsed.error());
		out.merge(*parsed);
	}
	return out;
}

std::vector<std::string> ScontrolOps::jobs_end_argv(const std::vector<std::string> &nodes) const
{
	size_t slash = scontrol_.rfind('/');
	std::string squeue = slash == std::string::npos ? "squeue" : scontrol_.substr(0, slash + 1) + "squeue";
	return {squeue, "--noheader", "--states=RUNNING,COMPLETING", "--nodelist=" + join(nodes, ","),
		"--format=%e|%N"};
}

expected<std::map<std::string, int64_t>> ScontrolOps::jobs_end(const std::vector<std::string> &nodes)
{
	std::map<std::string, int64_t> out;
	if (nodes.empty())
		return out;
	std::vector<std::string> argv = jobs_end_argv(nodes);
	RunOptions o;
	o.timeout_s = timeout_;
	o.cancel = cancel_;
	o.max_output = 4u << 20;
	for (char **e = environ; e && *e; e++)
		if (std::strncmp(*e, "SLURM_TIME_FORMAT=", 18) != 0)
			o.env.emplace_back(*e);
	o.env.emplace_back("SLURM_TIME_FORMAT=%s"); // end times as seconds since the epoch
	auto r = run_command(argv, o);
	if (!r) {
		if (cancel_ && cancel_->load(std::memory_order_acquire))
			cut_.fetch_add(1);
		return unexpected(r.error());
	}
	if (r->truncated)
		return unexpected(command_line(argv), "answer longer than 4 MiB: not read");
	if (r->exit_code != 0)
		return unexpected(command_line(argv), std::string(trim(r->output)));
	std::set<std::string> want(nodes.begin(), nodes.end());
	size_t no = 0;
	for (const auto &line : split_lines(r->output)) {
		no++;
		std::string_view l = trim(line);
		if (l.empty())
			continue;
		size_t bar = l.find('|');
		if (bar == std::string_view::npos)
			return unexpected(command_line(argv) + ": line " + std::to_string(no),
					  "expected END|NODES, got '" + std::string(l) + "'");
		std::string_view end = l.substr(0, bar);
		int64_t t = INT64_MAX; // "Unknown", "N/A", "NONE": no limit Slurm knows of
		if (!end.empty() && std::all_of(end.begin(), end.end(), [](char c) { return c >= '0' && c <= '9'; })) {
			auto v = parse_int(end, 0, INT64_MAX);
			if (!v)
				return unexpected(command_line(argv) + ": line " + std::to_string(no),
						  v.error().message);
			t = *v;
		}
		auto names = hostlist_expand(l.substr(bar + 1));
		if (!names)
			return unexpected(command_line(argv) + ": line " + std::to_string(no), names.error().message);
		for (const std::string &n : *names)
			if (want.count(n)) {
				auto it = out.find(n);
				out[n] = it == out.end() ? t : std::max(it->second, t);
			}
	}
	return out;
}

status ScontrolOps::drain(const std::string &node, const std::string &reason)
{
	return update(update_argv(node, {"state=drain", "reason=" + reason}));
}

status ScontrolOps::set_reason(const std::string &node, const std::string &reason)
{
	return update(update_argv(node, {"reason=" + reason}));
}

status ScontrolOps::resume(const std::string &node) { return update(update_argv(node, {"state=resume"})); }

status ScontrolOps::set_note(const std::string &node, const std::string &field, const std::string &value)
{
	if (field != "extra" && field != "comment")
		return unexpected("set_note", "field '" + field + "': not extra or comment");
	return update(update_argv(node, {field + "=" + value}));
}

status ScontrolOps::requeue(uint32_t job_id) { return update({scontrol_, "requeue", std::to_string(job_id)}); }

status ScontrolOps::hold(uint32_t job_id) { return update({scontrol_, "hold", std::to_string(job_id)}); }

std::vector<std::string> ScontrolOps::reservation_argv(const Reservation &r) const
{
	std::string duration = r.duration_s > 0 ? std::to_string((r.duration_s + 59) / 60) : "UNLIMITED";
	return {scontrol_,
		"create",
		"reservation",
		"ReservationName=" + r.name,
		"Nodes=" + r.nodes,
		"StartTime=now",
		"Duration=" + duration,
		"Users=" + r.user,
		"Flags=IGNORE_JOBS,PURGE_COMP=00:01:00"};
}

status ScontrolOps::create_reservation(const Reservation &r) { return update(reservation_argv(r)); }

status ScontrolOps::delete_reservation(const std::string &name)
{
	return update({scontrol_, "delete", "ReservationName=" + name});
}

status ScontrolOps::requeue_hold(uint32_t job_id) { return update({scontrol_, "requeuehold", std::to_string(job_id)}); }

status ScontrolOps::release(uint32_t job_id) { return update({scontrol_, "release", std::to_string(job_id)}); }

status ScontrolOps::update_job(uint32_t job_id, const std::vector<std::string> &settings)
{
	std::vector<std::string> argv = {scontrol_, "update", "JobId=" + std::to_string(job_id)};
	argv.insert(argv.end(), settings.begin(), settings.end());
	return update(argv);
}

} // namespace loom::health
