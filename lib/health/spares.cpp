#include "lib/health/spares.hpp"

#include "lib/util/fs.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/json.hpp"

#include <algorithm>
#include <json-c/json.h>
#include <set>

namespace loom::health {

std::string spare_file_json(const SpareFile &f)
{
	Json doms = Json::array();
	for (const SpareFile::Domain &d : f.domains) {
		Json o = Json::object();
		o.set("kind", Json::string(d.kind));
		o.set("name", Json::string(d.name));
		o.set("nodes", Json::string(hostlist_compress(d.nodes)));
		o.set("want", Json::integer(d.want));
		o.set("spares", Json::string(hostlist_compress(d.spares)));
		doms.push(std::move(o));
	}
	Json root = Json::object();
	root.set("format", Json::string(spare_file_format));
	root.set("written", Json::integer(f.written));
	root.set("lend_max_s", Json::integer(f.lend_max_s));
	root.set("domains", std::move(doms));
	return root.dump(true);
}

expected<SpareFile> parse_spare_file(std::string_view text, const std::string &source)
{
	auto j = json_parse(text, source);
	if (!j)
		return unexpected(j.error());
	ObjectReader r(j->get(), "$");
	if (!r.ok())
		return unexpected(source, r.error().str());
	SpareFile f;
	auto fmt = r.str("format");
	if (!fmt)
		return unexpected(source, fmt.error().str());
	if (*fmt != spare_file_format)
		return unexpected(source, "$.format: '" + *fmt + "', expected '" + spare_file_format + "'");
	auto written = r.integer("written", 0);
	auto lend = r.integer("lend_max_s", 0);
	auto doms = r.array("domains");
	if (!written || !lend || !doms)
		return unexpected(source, (!written ? written.error() : !lend ? lend.error() : doms.error()).str());
	f.written = *written;
	f.lend_max_s = *lend;
	size_t n = json_object_array_length(*doms);
	for (size_t i = 0; i < n; i++) {
		std::string at = ObjectReader::index_path("$.domains", i);
		ObjectReader d(json_object_array_get_idx(*doms, i), at);
		if (!d.ok())
			return unexpected(source, d.error().str());
		SpareFile::Domain dom;
		auto kind = d.str("kind");
		auto name = d.str("name");
		auto nodes = d.str("nodes");
		auto want = d.integer("want", 0, 1 << 20);
		auto spares = d.str("spares");
		for (const Error *e : {kind ? nullptr : &kind.error(), name ? nullptr : &name.error(),
				       nodes ? nullptr : &nodes.error(), want ? nullptr : &want.error(),
				       spares ? nullptr : &spares.error()})
			if (e)
				return unexpected(source, e->str());
		if (status st = d.finish(); !st)
			return unexpected(source, st.error().str());
		auto nl = hostlist_expand(*nodes);
		// A domain with no spare left: "" (hostlist_compress of none).
		auto sl = spares->empty() ? expected<std::vector<std::string>>(std::vector<std::string>{})
					  : hostlist_expand(*spares);
		if (!nl)
			return unexpected(source, at + ".nodes: " + nl.error().str());
		if (!sl)
			return unexpected(source, at + ".spares: " + sl.error().str());
		std::set<std::string> members(nl->begin(), nl->end());
		for (const std::string &s : *sl)
			if (!members.count(s))
				return unexpected(source, at + ".spares: " + s + " is not a node of " + *name);
		dom.kind = *kind;
		dom.name = *name;
		dom.nodes = std::move(*nl);
		dom.spares = std::move(*sl);
		dom.want = static_cast<int>(*want);
		f.domains.push_back(std::move(dom));
	}
	if (status st = r.finish(); !st)
		return unexpected(source, st.error().str());
	return f;
}

expected<SpareFile> read_spare_file(const std::string &path)
{
	auto text = read_file(path, 64u << 20);
	if (!text)
		return unexpected(text.error());
	return parse_spare_file(*text, path);
}

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

SpareFile spare_file_of(const topo::Cluster &c, const place::SparePool &pool, int64_t lend_max_s, int64_t now)
{
	SpareFile f;
	f.written = now;
	f.lend_max_s = lend_max_s;
	for (const place::SpareDomain &d : pool.domains) {
		SpareFile::Domain o{d.kind, d.name, {}, {}, d.want};
		o.nodes.reserve(d.nodes.size());
		for (topo::Index m : d.nodes)
			o.nodes.push_back(c.nodes[static_cast<size_t>(m)].name);
		for (topo::Index m : d.spares)
			o.spares.push_back(c.nodes[static_cast<size_t>(m)].name);
		f.domains.push_back(std::move(o));
	}
	return f;
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
