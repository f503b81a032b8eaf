#include "lib/health/xid_table.hpp"

#include "lib/util/config.hpp"

namespace loom::health {

const char *xid_action_name(XidAction a)
{
	switch (a) {
	case XidAction::ignore:
		return "ignore";
	case XidAction::restart_app:
		return "restart_app";
	case XidAction::suspect:
		return "suspect";
	case XidAction::reset_gpu:
		return "reset_gpu";
	case XidAction::reboot:
		return "reboot";
	case XidAction::drain:
		return "drain";
	}
	return "?";
}

expected<XidAction> parse_xid_action(std::string_view name)
{
	for (XidAction a : {XidAction::ignore, XidAction::restart_app, XidAction::suspect, XidAction::reset_gpu,
			    XidAction::reboot, XidAction::drain})
		if (name == xid_action_name(a))
			return a;
	return unexpected("expected one of ignore, restart_app, suspect, reset_gpu, reboot, drain");
}

XidTable XidTable::nvidia_default()
{
	XidTable t;
	for (int x : {13, 31, 94})
		t.actions_[x] = XidAction::restart_app;
	for (int x : {43, 63, 92})
		t.actions_[x] = XidAction::ignore;
	for (int x : {46, 62, 64, 95, 109, 119, 120, 140, 143})
		t.actions_[x] = XidAction::reset_gpu;
	// 48: double-bit ECC, 74: NVLink error: the GPU must be reset and checked.
	t.actions_[48] = XidAction::drain;
	t.actions_[74] = XidAction::drain;
	t.actions_[79] = XidAction::reboot;
	t.fallback_ = XidAction::suspect;
	return t;
}

const XidTable &nvidia_default_xids()
{
	static const XidTable table = XidTable::nvidia_default();
	return table;
}

XidBlame xid_blame(XidAction a)
{
	switch (a) {
	case XidAction::ignore:
	case XidAction::restart_app:
		return XidBlame::application;
	case XidAction::suspect:
		return XidBlame::suspect;
	case XidAction::reset_gpu:
	case XidAction::reboot:
	case XidAction::drain:
		return XidBlame::gpu;
	}
	return XidBlame::suspect;
}

XidAction XidTable::action(int xid) const
{
	auto it = actions_.find(xid);
	return it == actions_.end() ? fallback_ : it->second;
}

status XidTable::assign(XidAction a, const std::vector<std::string> &xids, std::map<int, XidAction> &claimed)
{
	for (const auto &word : xids) {
		auto n = parse_int(word, 1, 65535);
		if (!n)
			return unexpected("bad Xid '" + word + "': " + n.error().message);
		int x = static_cast<int>(*n);
		auto it = claimed.find(x);
		if (it != claimed.end() && it->second != a)
			return unexpected("Xid " + word + " is listed under both " + xid_action_name(it->second) +
					  " and " + xid_action_name(a));
		claimed[x] = a;
		actions_[x] = a;
	}
	return ok();
}

} // namespace loom::health
