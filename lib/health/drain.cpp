#include "lib/health/drain.hpp"

#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"
#include "lib/util/log.hpp"

#include <cerrno>
#include <cstring>
#include <json-c/json.h>
#include <unistd.h>

namespace loom::health {

bool SlurmNodeState::drained() const
{
	return state.find("DRAIN") != std::string::npos;
}

expected<SlurmNodeState> parse_scontrol_node(std::string_view text, const std::string &node)
{
	SlurmNodeState st;
	bool found = false;
	for (const auto &raw : split_lines(text)) {
		std::string_view line = trim(raw);
		if (line.rfind("NodeName=", 0) == 0) {
			std::string_view name = line.substr(9, line.find(' ') == std::string_view::npos ? std::string_view::npos : line.find(' ') - 9);
			found = name == node;
		}
		if (line.rfind("State=", 0) == 0) {
			size_t sp = line.find(' ');
			st.state = std::string(line.substr(6, sp == std::string_view::npos ? std::string_view::npos : sp - 6));
		} else if (line.rfind("Reason=", 0) == 0) {
			std::string_view r = line.substr(7);
			size_t tag = r.rfind(" [");
			if (tag != std::string_view::npos && r.back() == ']')
				r = r.substr(0, tag);
			st.reason = std::string(r);
		}
	}
	if (!found)
		return unexpected(node, "scontrol does not know this node");
	if (st.state.empty())
		return unexpected(node, "no State= in scontrol output");
	return st;
}

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
	if (!since)
		return unexpected(since.error().within(path));
	if (!cursor)
		return unexpected(cursor.error().within(path));
	if (auto st = r.finish(); !st)
		return unexpected(st.error().within(path));
	h.healthy_since = *since;
	h.kmsg_cursor = static_cast<uint64_t>(*cursor);
	return h;
}

status save_hold_state(const std::string &path, const HoldState &h)
{
	Json o = Json::object();
	o.set("healthy_since", Json::integer(h.healthy_since));
	o.set("kmsg_cursor", Json::integer(static_cast<int64_t>(h.kmsg_cursor)));
	return write_file_atomic(path, o.dump());
}

const char *drain_step_name(DrainStep s)
{
	switch (s) {
	case DrainStep::none:
		return "none";
	case DrainStep::drain:
		return "drain";
	case DrainStep::update_reason:
		return "update_reason";
	case DrainStep::resume:
		return "resume";
	}
	return "?";
}

DrainDecision decide_drain(const SlurmNodeState &node, const Verdict &v, HoldState &hold, int64_t now,
			   int64_t hold_down)
{
	DrainDecision d;
	if (v.outcome == Outcome::drain) {
		hold.healthy_since = 0;
		std::string reason = v.reason();
		if (!node.drained()) {
			d.step = DrainStep::drain;
			d.reason = reason;
			d.why = "unhealthy: " + reason;
		} else if (node.by_loom() && node.reason != reason) {
			d.step = DrainStep::update_reason;
			d.reason = reason;
			d.why = "still unhealthy, new evidence";
		} else {
			d.why = node.by_loom() ? "already drained by loom" : "already drained by someone else: left alone";
		}
		return d;
	}
	if (!node.drained()) {
		hold.healthy_since = 0;
		d.why = "in service";
		return d;
	}
	if (!node.by_loom()) {
		d.why = "drained by someone else (\"" + node.reason + "\"): never resumed by loom";
		return d;
	}
	if (v.outcome != Outcome::ok) {
		hold.healthy_since = 0;
		d.why = "drained by loom and not yet healthy (suspect)";
		return d;
	}
	if (hold.healthy_since == 0 || hold.healthy_since > now)
		hold.healthy_since = now;
	int64_t healthy_for = now - hold.healthy_since;
	if (healthy_for >= hold_down) {
		d.step = DrainStep::resume;
		d.why = "healthy for " + std::to_string(healthy_for) + " s (hold-down " + std::to_string(hold_down) + " s)";
		hold.healthy_since = 0;
	} else {
		d.why = "healthy for " + std::to_string(healthy_for) + " s of the " + std::to_string(hold_down) +
			" s hold-down";
	}
	return d;
}

status update_suspect_flag(const std::string &state_dir, const Verdict &v)
{
	std::string path = path_join(state_dir, "suspect");
	if (v.outcome == Outcome::ok) {
		if (::unlink(path.c_str()) != 0 && errno != ENOENT)
			return unexpected(path, std::string("cannot remove: ") + std::strerror(errno));
		return ok();
	}
	return write_file_atomic(path, v.reason() + "\n");
}

} // namespace loom::health
