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
	case Outcome::unknown:
		return "unknown";
	case Outcome::drain:
		return "drain";
	}
	return "?";
}

int outcome_exit_code(Outcome o)
{
	switch (o) {
	case Outcome::ok:
		return 0;
	case Outcome::suspect:
		return 1;
	case Outcome::drain:
		return 2;
	case Outcome::unknown:
		return 3;
	}
	return 3;
}

const Finding *Verdict::worst() const
{
	const Finding *w = nullptr;
	for (const auto &f : findings)
		if (f.severity != Outcome::ok && (!w || f.severity > w->severity))
			w = &f;
	return w;
}

double Verdict::eta_s() const
{
	double e = 0;
	for (const auto &f : findings)
		if (f.eta_s > 0 && (e == 0 || f.eta_s < e))
			e = f.eta_s;
	return e;
}

std::string Verdict::reason(size_t max_len) const
{
	const Finding *worst = this->worst();
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
	// A collector that could not read is a check that cannot judge: unknown
	// (or what the site chose: suspect, drain), never ok.
	Outcome sev = c.collector_error == "drain"     ? Outcome::drain
		      : c.collector_error == "suspect" ? Outcome::suspect
						       : Outcome::unknown;
	for (const auto &e : s.errors)
		v.findings.push_back({"collector_" + e.collector, sev, "cannot read: " + e.message});
	for (const auto &f : v.findings)
		v.outcome = std::max(v.outcome, f.severity);
	// Unknown: never a drain; the node is marked suspect (placement steers
	// away, running checkpointed jobs checkpoint) until it can be judged.
	size_t lead = 0;
	if (v.outcome == Outcome::drain) {
		v.actions.insert(v.actions.begin(), "drain");
		lead = 1;
	} else if (v.outcome == Outcome::suspect || v.outcome == Outcome::unknown) {
		v.actions.insert(v.actions.begin(), {"suspect", "checkpoint"});
		lead = 2;
	}
	std::sort(v.actions.begin() + static_cast<std::ptrdiff_t>(lead), v.actions.end());
	v.actions.erase(std::unique(v.actions.begin(), v.actions.end()), v.actions.end());
	return v;
}

} // namespace loom::health
