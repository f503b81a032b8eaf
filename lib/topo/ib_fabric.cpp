// From the ibnetdiscover graph to fabric domains and hosts (see ibnetdiscover.hpp).
#include "lib/topo/ib_graph.hpp"
#include "lib/topo/ibnetdiscover.hpp"
#include "lib/topo/try.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/log.hpp"

#include <algorithm>
#include <cctype>
#include <deque>
#include <map>
#include <numeric>
#include <set>

namespace loom::topo {

namespace {

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1" -> "A09-P1-IBLEAF-04-04"
std::string switch_name(const IbDev &d)
{
	std::string n = d.desc;
	if (size_t semi = n.find(';'); semi != std::string::npos)
		n = n.substr(semi + 1);
	if (size_t colon = n.find(':'); colon != std::string::npos)
		n = n.substr(0, colon);
	n = std::string(trim(n));
	if (n.empty() || n.find_first_of(" \t\"") != std::string::npos)
		n = "S-" + d.guid;
	return n;
}

struct Uf {
	std::vector<size_t> p;
	explicit Uf(size_t n) : p(n) { std::iota(p.begin(), p.end(), 0); }
	size_t find(size_t x)
	{
		while (p[x] != x)
			x = p[x] = p[p[x]];
		return x;
	}
	void join(size_t a, size_t b) { p[find(a)] = find(b); }
};

struct Hca {
	size_t sw;
	std::string device, guid;
	int port;
	double gbps;
	int sw_port;
};

// Host names an installer or an unset description leaves behind.
bool placeholder_host(const std::string &host)
{
	static const char *const names[] = {"localhost", "localhost.localdomain", "ubuntu", "debian", "centos",
					    "rocky", "rhel", "fedora", "linux", "(none)", "none", "unknown", "default"};
	std::string h = lower(host);
	return std::any_of(std::begin(names), std::end(names), [&](const char *n) { return h == n; });
}

// A fabric management host: a word of its name is "ufm" (NVIDIA UFM,
// "B11-P1-CUFM-02" for a cluster UFM), "opensm" or "sm", digits aside.
bool management_host(const std::string &host)
{
	std::string h = lower(host);
	for (size_t p = 0; p <= h.size();) {
		size_t e = h.find_first_of("-_.", p);
		std::string w = h.substr(p, e == std::string::npos ? std::string::npos : e - p);
		while (!w.empty() && std::isdigit(static_cast<unsigned char>(w.back())))
			w.pop_back();
		if (w == "ufm" || w == "cufm" || w == "opensm" || w == "sm")
			return true;
		if (e == std::string::npos)
			break;
		p = e + 1;
	}
	return false;
}

} // namespace

const char *left_out_name(IbLeftOut::Why w)
{
	switch (w) {
	case IbLeftOut::Why::aggregation_node: return "SHARP aggregation node";
	case IbLeftOut::Why::management_server: return "fabric management server";
	case IbLeftOut::Why::switch_ca: return "a switch's own CA";
	case IbLeftOut::Why::placeholder: return "placeholder node description";
	default: return "no host name in the node description";
	}
}

bool names_compute_node(std::string_view raw, IbLeftOut::Why *why)
{
	std::string desc(trim(raw));
	auto no = [&](IbLeftOut::Why w) {
		if (why)
			*why = w;
		return false;
	};
	if (starts(desc, "Mellanox Technologies Aggregation Node"))
		return no(IbLeftOut::Why::aggregation_node);
	// The adapter's default description: "MT4129 ConnectX7   Mellanox Technologies".
	if (desc.empty() || (starts(desc, "MT") && desc.size() > 2 && std::isdigit(static_cast<unsigned char>(desc[2]))) ||
	    starts(desc, "Mellanox Technologies"))
		return no(IbLeftOut::Why::unnamed);
	// A switch's management CA carries the switch's description:
	// "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1".
	if (size_t semi = desc.find(';'); semi != std::string::npos && semi < 8 && desc.find(':', semi) != std::string::npos &&
	    desc.find_first_of(" \t") == std::string::npos)
		return no(IbLeftOut::Why::switch_ca);
	std::string host = desc.substr(0, desc.find_first_of(" \t"));
	if (placeholder_host(host))
		return no(IbLeftOut::Why::placeholder);
	if (management_host(host))
		return no(IbLeftOut::Why::management_server);
	return true;
}

std::string IbFabric::summary() const
{
	std::string s = strprintf("%zu switches (%zu leaf, %zu rail groups), %zu cables, %zu hosts with %zu HCAs", switches,
				  leaf_switches, rail_groups, links, hosts, hcas);
	std::string out;
	auto add = [&](size_t n, const char *what) {
		if (n)
			out += strprintf("%s%zu %s", out.empty() ? "" : ", ", n, what);
	};
	size_t kept = 0;
	for (const IbLeftOut &l : left_out)
		kept += l.kept;
	size_t placeholders = unnamed_hcas + placeholder_hcas;
	add(placeholders - kept, "HCAs whose node description names no host");
	add(management_hcas, "HCAs of fabric management servers or switches");
	add(aggregation_nodes, "aggregation nodes");
	if (!out.empty())
		s += "; left out: " + out;
	if (kept)
		s += strprintf("; %zu placeholder HCAs kept, named after their GUID", kept);
	return s;
}

namespace {

} // namespace

expected<IbFabric> parse_ibnetdiscover(std::string_view text, const std::string &source, const IbOptions &opt)
{
	LOOM_TRY(g, parse_ib_graph(text, source));
	IbFabric f;
	std::set<std::pair<std::pair<std::string, int>, std::pair<std::string, int>>> cables;
	std::vector<size_t> sw;                    // switch number -> device index
	std::map<size_t, size_t> sw_of_dev;        // device index -> switch number
	for (size_t i = 0; i < g.devs.size(); i++) {
		for (const IbPort &p : g.devs[i].ports) {
			auto a = std::make_pair(g.devs[i].guid, p.port), b = std::make_pair(p.peer, p.peer_port);
			cables.insert(a < b ? std::make_pair(a, b) : std::make_pair(b, a));
		}
		if (g.devs[i].type == 'S') {
			sw_of_dev[i] = sw.size();
			sw.push_back(i);
		}
	}
	f.links = cables.size();
	f.switches = sw.size();
	if (sw.empty())
		return unexpected(source, "no switches in the ibnetdiscover output");
	auto peer_switch = [&](const IbPort &p) -> long {
		auto s = sw_of_dev.find(g.by_guid.at(p.peer));
		return s == sw_of_dev.end() ? -1 : static_cast<long>(s->second);
	};

	std::vector<std::string> names(sw.size());
	std::set<std::string> taken;
	for (size_t s = 0; s < sw.size(); s++) {
		names[s] = switch_name(g.devs[sw[s]]);
		if (!taken.insert(names[s]).second)
			names[s] = "S-" + g.devs[sw[s]].guid;
	}

	// Hosts and their HCAs; leaves are switches with a host-side CA.
	std::vector<std::string> host_order;
	std::map<std::string, std::vector<Hca>> hosts;
	std::vector<int> level(sw.size(), 0);
	for (const IbDev &d : g.devs) {
		if (d.type != 'H')
			continue;
		IbLeftOut::Why why = IbLeftOut::Why::unnamed;
		bool compute = names_compute_node(d.desc, &why);
		if (compute || why != IbLeftOut::Why::aggregation_node)
			for (const IbPort &p : d.ports)
				if (long s = peer_switch(p); s >= 0)
					level[s] = 1;
		std::string desc(trim(d.desc));
		std::string host, dev;
		if (compute) {
			size_t sp = desc.find_first_of(" \t");
			host = desc.substr(0, sp);
			dev = sp == std::string::npos ? "HCA-" + d.guid : std::string(trim(desc.substr(sp)));
		} else {
			IbLeftOut l;
			l.why = why;
			l.guid = "0x" + d.guid;
			l.desc = desc;
			for (const IbPort &p : d.ports)
				if (long s = peer_switch(p); s >= 0) {
					l.sw = names[static_cast<size_t>(s)];
					l.sw_port = p.peer_port;
					break;
				}
			switch (why) {
			case IbLeftOut::Why::aggregation_node: f.aggregation_nodes++; break;
			case IbLeftOut::Why::management_server:
			case IbLeftOut::Why::switch_ca: f.management_hcas++; break;
			case IbLeftOut::Why::placeholder: f.placeholder_hcas++; break;
			default: f.unnamed_hcas++; break;
			}
			l.kept = (why == IbLeftOut::Why::placeholder || why == IbLeftOut::Why::unnamed) && opt.placeholders_by_guid;
			f.left_out.push_back(l);
			if (!l.kept)
				continue;
			host = "hca-" + d.guid;
			dev = "HCA-" + d.guid;
		}
		for (const IbPort &p : d.ports) {
			long s = peer_switch(p);
			if (s < 0)
				continue;
			if (!hosts.count(host))
				host_order.push_back(host);
			hosts[host].push_back(Hca{static_cast<size_t>(s), dev, "0x" + d.guid, p.port, p.gbps, p.peer_port});
			f.hcas++;
		}
	}
	f.hosts = hosts.size();
	// Switch levels: distance from the nearest leaf, plus one.
	std::deque<size_t> queue;
	for (size_t s = 0; s < sw.size(); s++)
		if (level[s] == 1) {
			queue.push_back(s);
			f.leaf_switches++;
		}
	if (queue.empty())
		return unexpected(source, "no switch has a host attached");
	int top_level = 1;
	while (!queue.empty()) {
		size_t s = queue.front();
		queue.pop_front();
		for (const IbPort &p : g.devs[sw[s]].ports)
			if (long t = peer_switch(p); t >= 0 && level[t] == 0) {
				level[t] = level[s] + 1;
				top_level = std::max(top_level, level[t]);
				queue.push_back(static_cast<size_t>(t));
			}
	}

	// Domains bottom-up: a leaf that shares no host with another leaf is a
	// domain; leaves joined through their hosts form one rail group (a domain
	// the nodes hang on) and become its rails.
	Uf uf(sw.size());
	for (auto &[host, hcas] : hosts)
		for (const Hca &h : hcas)
			uf.join(h.sw, hcas[0].sw);
	std::vector<DomainSpec> domains;
	std::map<std::string, size_t> domain_at;         // name -> index in domains
	std::vector<std::string> dom_of_sw(sw.size());  // current top domain of each leaf switch
	std::vector<std::string> lowest(sw.size());     // the lowest domain of each leaf switch
	std::map<size_t, std::vector<size_t>> groups;
	for (size_t s = 0; s < sw.size(); s++)
		if (level[s] == 1)
			groups[uf.find(s)].push_back(s);
	for (auto &[root, leaves] : groups) {
		std::sort(leaves.begin(), leaves.end(), [&](size_t a, size_t b) { return names[a] < names[b]; });
		if (leaves.size() == 1) {
			size_t s = leaves[0];
			domain_at[names[s]] = domains.size();
			domains.push_back(DomainSpec{names[s], "", "", 0, g.devs[sw[s]].where});
			dom_of_sw[s] = lowest[s] = names[s];
			continue;
		}
		f.rail_groups++;
		std::string gname = "railgroup-" + names[leaves[0]];
		domain_at[gname] = domains.size();
		domains.push_back(DomainSpec{gname, "", "", 0, g.devs[sw[leaves[0]]].where});
		for (size_t k = 0; k < leaves.size(); k++) {
			f.spec.rails.push_back(RailSpec{names[leaves[k]], gname, static_cast<int>(k), 0, g.devs[sw[leaves[k]]].where});
			dom_of_sw[leaves[k]] = lowest[leaves[k]] = gname;
		}
	}
	size_t prev_parts = groups.size();
	for (int L = 2; L <= top_level; L++) {
		for (size_t s = 0; s < sw.size(); s++)
			if (level[s] >= 1 && level[s] <= L)
				for (const IbPort &p : g.devs[sw[s]].ports)
					if (long t = peer_switch(p); t >= 0 && level[t] >= 1 && level[t] <= L)
						uf.join(s, static_cast<size_t>(t));
		std::map<size_t, std::vector<size_t>> parts; // root -> leaf switches
		for (size_t s = 0; s < sw.size(); s++)
			if (level[s] == 1)
				parts[uf.find(s)].push_back(s);
		if (parts.size() == prev_parts && L < top_level)
			continue;
		prev_parts = parts.size();
		for (auto &[root, leaves] : parts) {
			std::string best;
			for (size_t s = 0; s < sw.size(); s++)
				if (level[s] == L && uf.find(s) == root && (best.empty() || names[s] < best))
					best = names[s];
			if (best.empty())
				best = dom_of_sw[leaves[0]] + "-up";
			domain_at[best] = domains.size();
			domains.push_back(DomainSpec{best, "", "", 0, source});
			std::set<std::string> kids;
			for (size_t s : leaves)
				kids.insert(dom_of_sw[s]);
			for (const std::string &k : kids)
				domains[domain_at[k]].parent = best;
			for (size_t s : leaves)
				dom_of_sw[s] = best;
		}
	}
	// Uplink capacity of a domain (and of each rail switch): links from its
	// switches to switches outside it.
	std::map<std::string, std::set<size_t>> span;
	for (size_t s = 0; s < sw.size(); s++) {
		if (level[s] != 1)
			continue;
		for (std::string d = lowest[s]; !d.empty(); d = domains[domain_at[d]].parent)
			span[d].insert(s);
	}
	for (auto &d : domains) {
		if (d.parent.empty())
			continue;
		const auto &mine = span[d.name];
		for (size_t s : mine)
			for (const IbPort &p : g.devs[sw[s]].ports)
				if (long t = peer_switch(p); t >= 0 && level[t] > 1 && !mine.count(static_cast<size_t>(t)))
					d.uplink_gbps += p.gbps;
	}
	std::map<std::string, size_t> rail_at;
	for (size_t r = 0; r < f.spec.rails.size(); r++)
		rail_at[f.spec.rails[r].name] = r;
	for (size_t s = 0; s < sw.size(); s++) {
		auto it = rail_at.find(names[s]);
		if (level[s] != 1 || it == rail_at.end())
			continue;
		for (const IbPort &p : g.devs[sw[s]].ports)
			if (long t = peer_switch(p); t >= 0 && level[t] > 1)
				f.spec.rails[it->second].uplink_gbps += p.gbps;
	}
	f.spec.domains = std::move(domains);
	for (const std::string &host : host_order) {
		NodeSpec n;
		n.name = host;
		n.where = source;
		const auto &hcas = hosts[host];
		// The host's leaves are all in one domain: its leaf, or their rail group.
		n.domain = lowest[hcas[0].sw];
		for (const Hca &h : hcas) {
			NicSpec x;
			x.device = h.device;
			x.port = h.port;
			x.link_layer = LinkLayer::infiniband;
			x.rate_gbps = h.gbps;
			x.guid = h.guid;
			if (auto it = rail_at.find(names[h.sw]); it != rail_at.end()) {
				x.rail = f.spec.rails[it->second].index;
				x.rail_switch = names[h.sw];
			}
			n.nics.push_back(std::move(x));
		}
		f.spec.nodes.push_back(std::move(n));
	}
	return f;
}

} // namespace loom::topo
