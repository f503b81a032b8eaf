// From the ibnetdiscover graph to fabric domains and hosts (see ibnetdiscover.hpp).
#include "lib/topo/ib_graph.hpp"
#include "lib/topo/ibnetdiscover.hpp"
#include "lib/topo/try.hpp"
#include "lib/util/fs.hpp"

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
};

const char *level_kind(int level)
{
	return level == 2 ? "spine" : level == 3 ? "core" : nullptr;
}

} // namespace

expected<IbFabric> parse_ibnetdiscover(std::string_view text, const std::string &source)
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

	// Hosts and their HCAs; leaves are switches with a host-side CA.
	std::vector<std::string> host_order;
	std::map<std::string, std::vector<Hca>> hosts;
	std::vector<int> level(sw.size(), 0);
	for (const IbDev &d : g.devs) {
		if (d.type != 'H')
			continue;
		if (starts(d.desc, "Mellanox Technologies Aggregation Node")) {
			f.aggregation_nodes++;
			continue;
		}
		for (const IbPort &p : d.ports)
			if (long s = peer_switch(p); s >= 0)
				level[s] = 1;
		std::string desc(trim(d.desc));
		if (desc.empty() || (starts(desc, "MT") && desc.size() > 2 && std::isdigit(static_cast<unsigned char>(desc[2])))) {
			f.unnamed_hcas++;
			continue;
		}
		size_t sp = desc.find_first_of(" \t");
		std::string host = desc.substr(0, sp);
		std::string dev = sp == std::string::npos ? "HCA-" + d.guid : std::string(trim(desc.substr(sp)));
		for (const IbPort &p : d.ports) {
			long s = peer_switch(p);
			if (s < 0)
				continue;
			if (!hosts.count(host))
				host_order.push_back(host);
			hosts[host].push_back(Hca{static_cast<size_t>(s), dev, "0x" + d.guid, p.port, p.gbps});
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
	std::vector<std::string> names(sw.size());
	std::set<std::string> taken;
	for (size_t s = 0; s < sw.size(); s++) {
		names[s] = switch_name(g.devs[sw[s]]);
		if (!taken.insert(names[s]).second)
			names[s] = "S-" + g.devs[sw[s]].guid;
	}

	// Domains bottom-up. comp_domain maps a union-find root to its domain name
	// at the current level; members tracks which switches each domain spans.
	Uf uf(sw.size());
	for (auto &[host, hcas] : hosts)
		for (const Hca &h : hcas)
			uf.join(h.sw, hcas[0].sw);
	std::vector<DomainSpec> domains;
	std::vector<std::string> dom_of_sw(sw.size()); // current top domain of each leaf switch
	std::map<size_t, std::vector<size_t>> groups;
	for (size_t s = 0; s < sw.size(); s++)
		if (level[s] == 1) {
			domains.push_back(DomainSpec{names[s], "leaf", "", 0, g.devs[sw[s]].where});
			dom_of_sw[s] = names[s];
			groups[uf.find(s)].push_back(s);
		}
	std::map<std::string, int> rail_of_leaf;
	std::map<std::string, std::string> group_of_leaf;
	for (auto &[root, leaves] : groups) {
		if (leaves.size() < 2)
			continue;
		std::sort(leaves.begin(), leaves.end(), [&](size_t a, size_t b) { return names[a] < names[b]; });
		std::string gname = "railgroup-" + names[leaves[0]];
		domains.push_back(DomainSpec{gname, "rail-group", "", 0, g.devs[sw[leaves[0]]].where});
		for (size_t k = 0; k < leaves.size(); k++) {
			for (auto &d : domains)
				if (d.name == names[leaves[k]])
					d.parent = gname;
			rail_of_leaf[names[leaves[k]]] = static_cast<int>(k);
			group_of_leaf[names[leaves[k]]] = gname;
			dom_of_sw[leaves[k]] = gname;
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
			const char *k = level_kind(L);
			domains.push_back(DomainSpec{best, k ? k : "level-" + std::to_string(L), "", 0, source});
			std::set<std::string> kids;
			for (size_t s : leaves)
				kids.insert(dom_of_sw[s]);
			for (auto &d : domains)
				if (kids.count(d.name))
					d.parent = best;
			for (size_t s : leaves)
				dom_of_sw[s] = best;
		}
	}
	// Uplink capacity of a domain: links from its switches to switches outside it.
	std::map<std::string, std::set<size_t>> span;
	for (size_t s = 0; s < sw.size(); s++) {
		if (level[s] != 1)
			continue;
		std::string d = names[s];
		while (!d.empty()) {
			span[d].insert(s);
			auto it = std::find_if(domains.begin(), domains.end(), [&](const DomainSpec &x) { return x.name == d; });
			d = it->parent;
		}
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
	f.spec.domains = std::move(domains);
	for (const std::string &host : host_order) {
		NodeSpec n;
		n.name = host;
		n.where = source;
		const auto &hcas = hosts[host];
		// The lowest domain holding all the host's leaves: its leaf, or the
		// rail group that joined them.
		bool one_leaf = std::all_of(hcas.begin(), hcas.end(), [&](const Hca &h) { return h.sw == hcas[0].sw; });
		n.domain = one_leaf ? names[hcas[0].sw] : group_of_leaf[names[hcas[0].sw]];
		for (const Hca &h : hcas) {
			NicSpec x;
			x.device = h.device;
			x.port = h.port;
			x.link_layer = LinkLayer::infiniband;
			x.rate_gbps = h.gbps;
			x.guid = h.guid;
			if (auto it = rail_of_leaf.find(names[h.sw]); it != rail_of_leaf.end())
				x.rail = it->second;
			n.nics.push_back(std::move(x));
		}
		f.spec.nodes.push_back(std::move(n));
	}
	return f;
}

} // namespace loom::topo
