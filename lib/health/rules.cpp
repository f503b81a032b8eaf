#include "lib/health/rules.hpp"

#include <algorithm>

namespace loom::health {

const char *outcome_name(Outcome o)
{
	switch (o) {
	case Outcome::ok:
		return "ok";
	case Outcome::suspect:
		return "suspect";
	case Outcome::drain:
		return "drain";
	}
	return "?";
}

std::string Verdict::reason(size_t max_len) const
{
	const Finding *worst = nullptr;
	for (const auto &f : findings)
		if (f.severity != Outcome::ok && (!worst || f.severity > worst->severity))
			worst = &f;
	if (!worst)
		return {};
	std::string r = "loom: " + worst->check + ": " + worst->evidence;
	size_t more = 0;
	for (const auto &f : findings)
		more += f.severity == worst->severity && &f != worst;
	if (more)
		r += " (+" + std::to_string(more) + " more)";
	// Slurm reasons are one line; quotes would break the scontrol command line.
	for (char &ch : r)
		if (ch == '\n' || ch == '\r' || ch == '"' || ch == '\'')
			ch = ' ';
	if (r.size() > max_len)
		r = r.substr(0, max_len - 3) + "...";
	return r;
}

Verdict judge(const NodeSample &s, const HealthConfig &c)
{
	Verdict v;
	judge_gpus(s, c, v.findings, v.actions);
	judge_xids(s, c, v.findings, v.actions);
	judge_network(s, c, v.findings);
	judge_host(s, c, v.findings);
	if (c.collector_error != "ok") {
		Outcome sev = c.collector_error == "drain" ? Outcome::drain : Outcome::suspect;
		for (const auto &e : s.errors)
			v.findings.push_back({"collector_" + e.collector, sev, "cannot read: " + e.message});
	}
	for (const auto &f : v.findings)
		v.outcome = std::max(v.outcome, f.severity);
	if (v.outcome == Outcome::drain)
		v.actions.insert(v.actions.begin(), "drain");
	else if (v.outcome == Outcome::suspect)
		v.actions.insert(v.actions.begin(), {"suspect", "checkpoint"});
	std::sort(v.actions.begin() + (v.outcome == Outcome::drain ? 1 : v.outcome == Outcome::suspect ? 2 : 0),
		  v.actions.end());
	v.actions.erase(std::unique(v.actions.begin(), v.actions.end()), v.actions.end());
	return v;
}

} // namespace loom::health
