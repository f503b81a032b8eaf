// loom health: what to do about each NVIDIA Xid.
//
// The default is NVIDIA's own mapping (XID Errors, r555 documentation):
// restart the application 13, 31, 94; ignore 43, 63, 92; reset the GPU 46,
// 62, 64, 95, 109, 119, 120, 140, 143; 48 (double-bit ECC) and 74 (NVLink)
// need a GPU reset and more; reboot 79. Vendors disagree (Azure drains on 63
// and 92, for instance), so every Xid's action is configuration.
#pragma once

#include "lib/util/expected.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace loom::health {

enum class XidAction { ignore, restart_app, suspect, reset_gpu, reboot, drain };

const char *xid_action_name(XidAction a);
expected<XidAction> parse_xid_action(std::string_view name);

class XidTable {
public:
	// NVIDIA's mapping; unknown Xids get 'fallback'.
	static XidTable nvidia_default();

	XidAction action(int xid) const;
	void set(int xid, XidAction a) { actions_[xid] = a; }
	void set_fallback(XidAction a) { fallback_ = a; }
	XidAction fallback() const { return fallback_; }
	// Replace every Xid listed under one action ("48,74,79"): the list's Xids
	// move to that action; an Xid in two lists given in one file is an error
	// (the config parser checks that with claimed()).
	status assign(XidAction a, const std::vector<std::string> &xids, std::map<int, XidAction> &claimed);
	const std::map<int, XidAction> &entries() const { return actions_; }

private:
	std::map<int, XidAction> actions_;
	XidAction fallback_ = XidAction::suspect;
};

// NVIDIA's mapping built once, for callers that have no configuration.
const XidTable &nvidia_default_xids();

// Whose fault an Xid with this action is: the application's (ignore,
// restart_app), perhaps the GPU's (suspect), or the GPU's (reset_gpu, reboot,
// drain): how the job-log classifier reads an action, as the node checks'
// severities do (rules_gpu.cpp: ok, suspect, drain).
enum class XidBlame { application, suspect, gpu };
XidBlame xid_blame(XidAction a);

} // namespace loom::health
