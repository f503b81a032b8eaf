#include "lib/health/drain.hpp"

#include "lib/exchange/suspect_flag.hpp"
#include "lib/exchange/suspect_mark.hpp"

#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"
#include "lib/util/log.hpp"

#include <cerrno>
#include <cstring>
#include <json-c/json.h>
#include <unistd.h>

namespace loom::health {

expected<HoldState> load_hold_state(const std::string &path)
{
	HoldState h;
	if (::access(path.c_str(), F_OK) != 0)
		return h;
	auto j = json_parse_file(path, 1 << 16);
	if (!j)
		return unexpected(j.error());
	ObjectReader r(j->get(), "$");
	if (!r.ok())
		return unexpected(r.error().within(path));
	auto since = r.integer_or("healthy_since", 0, 0);
	auto cursor = r.integer_or("kmsg_cursor", 0, 0);
	auto gres = r.integer_or("gres_gpus", -1, -1, 1 << 20);
	if (!since)
		return unexpected(since.error().within(path));
	if (!cursor)
		return unexpected(cursor.error().within(path));
	if (!gres)
		return unexpected(gres.error().within(path));
	if (auto st = r.finish(); !st)
		return unexpected(st.error().within(path));
	h.healthy_since = *since;
	h.kmsg_cursor = static_cast<uint64_t>(*cursor);
	h.gres_gpus = *gres;
	return h;
}

status save_hold_state(const std::string &path, const HoldState &h)
{
	Json o = Json::object();
	o.set("healthy_since", Json::integer(h.healthy_since));
	o.set("kmsg_cursor", Json::integer(static_cast<int64_t>(h.kmsg_cursor)));
	o.set("gres_gpus", Json::integer(h.gres_gpus));
	return write_file_atomic(path, o.dump());
}

const char *node_step_name(NodeStep s)
{
	switch (s) {
	case NodeStep::drain:
		return "drain";
	case NodeStep::update_reason:
		return "update_reason";
	case NodeStep::resume:
		return "resume";
	case NodeStep::mark_suspect:
		return "mark_suspect";
	case NodeStep::clear_suspect:
		return "clear_suspect";
	}
	return "?";
}

namespace {

// Where loom may write its mark: its own mark's field, else an empty Extra,
// else an empty Comment; "" when both hold another's note.
std::string mark_field(const SlurmNode &n)
{
	if (std::string f = n.suspect_field(); !f.empty())
		return f;
	if (n.extra.empty())
		return "extra";
	if (n.comment.empty())
		return "comment";
	return {};
}

} // namespace

NodePlan plan_node(const SlurmNode &node, const Verdict &v, HoldState &hold, int64_t now, int64_t hold_down)
{
	NodePlan p;
	if (v.outcome == Outcome::ok) {
		if (hold.healthy_since == 0 || hold.healthy_since > now)
			hold.healthy_since = now;
	} else {
		hold.healthy_since = 0;
	}
	if (node.out_of_our_hands()) {
		p.why = "node is " + node.state + ": left alone";
		return p;
	}
	if (node.drained() && !node.drained_by_loom()) {
		p.why = "drained by someone else (\"" + node.reason + "\"): left alone";
		return p;
	}
	const Finding *w = v.worst();
	if (v.outcome == Outcome::drain) {
		std::string reason = v.reason();
		if (!node.drained()) {
			p.steps.push_back({NodeStep::drain, "", reason});
			p.why = "unhealthy: " + reason;
		} else if (node.reason != reason) {
			p.steps.push_back({NodeStep::update_reason, "", reason});
			p.why = "still unhealthy, new evidence";
		} else {
			p.why = "already drained by loom";
		}
		return p;
	}
	if (v.outcome == Outcome::suspect || v.outcome == Outcome::unknown) {
		const char *what = v.outcome == Outcome::unknown ? "cannot judge" : "suspect";
		if (node.drained()) {
			p.why = std::string("drained by loom and not yet healthy (") + what + ")";
			return p;
		}
		std::string mark = exchange::suspect_mark(w->check, w->evidence);
		std::string field = mark_field(node);
		if (field.empty()) {
			p.why = std::string(what) + ", but Extra and Comment hold others' notes: not marked";
		} else if (node.suspect_mark() == mark) {
			p.why = std::string(what) + ": already marked";
		} else {
			p.steps.push_back({NodeStep::mark_suspect, field, mark});
			p.why = std::string(what) + ": " + mark;
		}
		return p;
	}
	// ok
	bool ours_drained = node.drained_by_loom();
	std::string marked = node.suspect_field();
	if (!ours_drained && marked.empty()) {
		p.why = "in service";
		return p;
	}
	int64_t healthy_for = now - hold.healthy_since;
	if (healthy_for < hold_down) {
		p.why = "healthy for " + std::to_string(healthy_for) + " s of the " + std::to_string(hold_down) +
			" s hold-down";
		return p;
	}
	if (ours_drained)
		p.steps.push_back({NodeStep::resume, "", ""});
	if (!marked.empty())
		p.steps.push_back({NodeStep::clear_suspect, marked, ""});
	p.why = "healthy for " + std::to_string(healthy_for) + " s (hold-down " + std::to_string(hold_down) + " s)";
	return p;
}

status apply_plan(SlurmOps &slurm, const std::string &node, const NodePlan &plan)
{
	for (const auto &s : plan.steps) {
		status st = ok();
		switch (s.step) {
		case NodeStep::drain:
			st = slurm.drain(node, s.text);
			break;
		case NodeStep::update_reason:
			st = slurm.set_reason(node, s.text);
			break;
		case NodeStep::resume:
			st = slurm.resume(node);
			break;
		case NodeStep::mark_suspect:
			st = slurm.set_note(node, s.field, s.text);
			break;
		case NodeStep::clear_suspect:
			st = slurm.set_note(node, s.field, "");
			break;
		}
		if (!st)
			return st;
	}
	return ok();
}

status update_suspect_flag(const std::string &state_dir, const Verdict &v)
{
	std::string path = path_join(state_dir, "suspect");
	if (v.outcome == Outcome::ok) {
		if (::unlink(path.c_str()) != 0 && errno != ENOENT)
			return unexpected(path, std::string("cannot remove: ") + std::strerror(errno));
		return ok();
	}
	return write_file_atomic(path, exchange::suspect_flag_text({v.reason(), v.eta_s()}));
}

} // namespace loom::health
