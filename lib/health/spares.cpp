#include "lib/health/spares.hpp"

#include "lib/util/fs.hpp"

#include <algorithm>
#include <set>

namespace loom::health {

using exchange::SpareFile;

namespace {

// A spare Slurm would give now (idle) or once a borrower ends (busy); or not at all.
enum class Usable { no, idle, busy };
Usable usable(const std::map<std::string, SlurmNode> &states, const std::string &n)
{
	auto it = states.find(n);
	if (it == states.end())
		return Usable::no;
	const SlurmNode &s = it->second;
	if (s.drained() || s.out_of_our_hands() || s.has("RESERVED") || s.base == "RESERVED" || s.has("COMPLETING") ||
	    !s.suspect_mark().empty() || s.base == "FUTURE")
		return Usable::no;
	if (s.base == "IDLE")
		return Usable::idle;
	if (s.base == "MIXED" || s.base == "ALLOCATED")
		return Usable::busy;
	return Usable::no;
}

bool holds(const SpareFile::Domain &d, const std::string &node)
{
	return std::find(d.nodes.begin(), d.nodes.end(), node) != d.nodes.end();
}

} // namespace

std::vector<std::string> candidate_spares(const SpareFile &pool, const std::vector<std::string> &culprits)
{
	std::set<std::string> out;
	for (const std::string &c : culprits)
		for (const SpareFile::Domain &d : pool.domains)
			if (holds(d, c))
				out.insert(d.spares.begin(), d.spares.end());
	return {out.begin(), out.end()};
}

std::string Replacement::summary() const
{
	std::string s;
	for (size_t i = 0; i < swaps.size(); i++)
		s += (i ? ", " : "") + swaps[i].first + " -> " + swaps[i].second + " (" + domains[i] + ")";
	return s;
}

Replacement plan_replacement(const SpareFile &pool, const std::vector<std::string> &job_nodes,
			     const std::vector<std::string> &culprits, const std::map<std::string, SlurmNode> &states,
			     const std::map<std::string, int64_t> &busy_until, int64_t now)
{
	// A busy spare whose jobs end within the lending bound (a borrower's).
	auto back_soon = [&](const std::string &n) {
		auto it = busy_until.find(n);
		return it != busy_until.end() && pool.lend_max_s > 0 && it->second <= now + pool.lend_max_s;
	};
	Replacement r;
	std::set<std::string> bad(culprits.begin(), culprits.end());
	std::set<std::string> taken(job_nodes.begin(), job_nodes.end());
	if (bad.empty()) {
		r.why = "no culprit node named";
		return r;
	}
	for (const std::string &c : bad) {
		if (!taken.count(c)) {
			r.why = c + " is not a node of the job";
			return r;
		}
		bool in_pool = false;
		std::string chosen, where;
		for (Usable want : {Usable::idle, Usable::busy}) {
			for (const SpareFile::Domain &d : pool.domains) {
				if (!holds(d, c))
					continue;
				in_pool = true;
				for (const std::string &s : d.spares)
					if (!taken.count(s) && !bad.count(s) && usable(states, s) == want &&
					    (want == Usable::idle || back_soon(s))) {
						chosen = s;
						where = d.kind + " " + d.name;
						break;
					}
				if (!chosen.empty())
					break;
			}
			if (!chosen.empty())
				break;
		}
		if (chosen.empty()) {
			std::vector<std::string> doms;
			for (const SpareFile::Domain &d : pool.domains)
				if (holds(d, c))
					doms.push_back(d.kind + " " + d.name);
			r.why = in_pool ? "no usable spare left in " + join(doms, " or ") + " for " + c
					: c + " is in no domain of the spare pool";
			return r;
		}
		taken.insert(chosen);
		r.swaps.emplace_back(c, chosen);
		r.domains.push_back(where);
	}
	for (const std::string &n : job_nodes)
		if (!bad.count(n))
			r.nodes.push_back(n);
	for (const auto &sw : r.swaps)
		r.nodes.push_back(sw.second);
	std::sort(r.nodes.begin(), r.nodes.end());
	r.nodes.erase(std::unique(r.nodes.begin(), r.nodes.end()), r.nodes.end());
	r.ok = true;
	return r;
}

} // namespace loom::health
