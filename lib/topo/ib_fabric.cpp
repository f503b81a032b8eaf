// From the ibnetdiscover graph to fabric domains and hosts (see ibnetdiscover.hpp).
#include "lib/topo/ib_graph.hpp"
#include "lib/topo/ibnetdiscover.hpp"
#include "lib/topo/try.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/log.hpp"

#include <algorithm>
#include <cctype>
#include <map>
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

// Host names an installer or an unset description leaves behind.
bool placeholder_host(const std::string &host)
{
	static const char *const names[] = {"localhost", "localhost.localdomain",
					    "ubuntu",    "debian",
					    "centos",    "rocky",
					    "rhel",      "fedora",
					    "linux",     "(none)",
					    "none",      "unknown",
					    "default"};
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
	case IbLeftOut::Why::aggregation_node:
		return "SHARP aggregation node";
	case IbLeftOut::Why::management_server:
		return "fabric management server";
	case IbLeftOut::Why::switch_ca:
		return "a switch's own CA";
	case IbLeftOut::Why::placeholder:
		return "placeholder node description";
	default:
		return "no host name in the node description";
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
	if (desc.empty() ||
	    (starts(desc, "MT") && desc.size() > 2 && std::isdigit(static_cast<unsigned char>(desc[2]))) ||
	    starts(desc, "Mellanox Technologies"))
		return no(IbLeftOut::Why::unnamed);
	// A switch's management CA carries the switch's description:
	// "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1".
	if (size_t semi = desc.find(';'); semi != std::string::npos && semi < 8 &&
					  desc.find(':', semi) != std::string::npos &&
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
	std::string s = strprintf("%zu switches (%zu leaf, %zu rail groups), %zu cables, %zu hosts with %zu HCAs",
				  switches, leaf_switches, rail_groups, links, hosts, hcas);
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

// Cables, each counted once.
size_t count_cables(const IbGraph &g)
{
	std::set<std::pair<std::pair<std::string, int>, std::pair<std::string, int>>> cables;
	for (const IbDev &d : g.devs)
		for (const IbPort &p : d.ports) {
			auto a = std::make_pair(d.guid, p.port), b = std::make_pair(p.peer, p.peer_port);
			cables.insert(a < b ? std::make_pair(a, b) : std::make_pair(b, a));
		}
	return cables.size();
}

// The switches in device order, each with a unique name; no levels yet.
IbSwitches number_switches(const IbGraph &g)
{
	IbSwitches sw;
	sw.g = &g;
	for (size_t i = 0; i < g.devs.size(); i++)
		if (g.devs[i].type == 'S') {
			sw.of_dev[i] = sw.dev.size();
			sw.dev.push_back(i);
		}
	sw.names.resize(sw.dev.size());
	sw.level.assign(sw.dev.size(), 0);
	std::set<std::string> taken;
	for (size_t s = 0; s < sw.dev.size(); s++) {
		sw.names[s] = switch_name(g.devs[sw.dev[s]]);
		if (!taken.insert(sw.names[s]).second)
			sw.names[s] = "S-" + g.devs[sw.dev[s]].guid;
	}
	return sw;
}

// An HCA that is no compute node's: counted by why and noted with the switch
// it is cabled to. Returns whether it is kept anyway (a placeholder, by GUID).
bool note_left_out(const IbDev &d, IbLeftOut::Why why, const IbSwitches &sw, const IbOptions &opt, IbFabric &f)
{
	IbLeftOut l;
	l.why = why;
	l.guid = "0x" + d.guid;
	l.desc = std::string(trim(d.desc));
	for (const IbPort &p : d.ports)
		if (long s = sw.peer(p); s >= 0) {
			l.sw = sw.names[static_cast<size_t>(s)];
			l.sw_port = p.peer_port;
			break;
		}
	switch (why) {
	case IbLeftOut::Why::aggregation_node:
		f.aggregation_nodes++;
		break;
	case IbLeftOut::Why::management_server:
	case IbLeftOut::Why::switch_ca:
		f.management_hcas++;
		break;
	case IbLeftOut::Why::placeholder:
		f.placeholder_hcas++;
		break;
	default:
		f.unnamed_hcas++;
		break;
	}
	l.kept = (why == IbLeftOut::Why::placeholder || why == IbLeftOut::Why::unnamed) && opt.placeholders_by_guid;
	f.left_out.push_back(l);
	return l.kept;
}

// Hosts and their HCAs (counted in f.hcas); marks the leaves, the switches
// with a host-side CA (an aggregation node's aside).
IbHosts find_hosts(IbSwitches &sw, const IbOptions &opt, IbFabric &f)
{
	IbHosts hosts;
	for (const IbDev &d : sw.g->devs) {
		if (d.type != 'H')
			continue;
		IbLeftOut::Why why = IbLeftOut::Why::unnamed;
		bool compute = names_compute_node(d.desc, &why);
		if (compute || why != IbLeftOut::Why::aggregation_node)
			for (const IbPort &p : d.ports)
				if (long s = sw.peer(p); s >= 0)
					sw.level[s] = 1;
		std::string desc(trim(d.desc));
		std::string host, dev;
		if (compute) {
			size_t sp = desc.find_first_of(" \t");
			host = desc.substr(0, sp);
			dev = sp == std::string::npos ? "HCA-" + d.guid : std::string(trim(desc.substr(sp)));
		} else {
			if (!note_left_out(d, why, sw, opt, f))
				continue;
			host = "hca-" + d.guid;
			dev = "HCA-" + d.guid;
		}
		for (const IbPort &p : d.ports) {
			long s = sw.peer(p);
			if (s < 0)
				continue;
			if (!hosts.hcas.count(host))
				hosts.order.push_back(host);
			hosts.hcas[host].push_back(
				IbHca{static_cast<size_t>(s), dev, "0x" + d.guid, p.port, p.gbps, p.peer_port});
			f.hcas++;
		}
	}
	return hosts;
}

// One node per host in its lowest domain, each HCA an InfiniBand NIC (with
// its rail switch when it is cabled to one).
void add_nodes(const IbSwitches &sw, const IbHosts &hosts, const std::vector<std::string> &lowest,
	       const std::string &source, ClusterSpec &spec)
{
	std::map<std::string, size_t> rail_at;
	for (size_t r = 0; r < spec.rails.size(); r++)
		rail_at[spec.rails[r].name] = r;
	for (const std::string &host : hosts.order) {
		NodeSpec n;
		n.name = host;
		n.where = source;
		const auto &hcas = hosts.hcas.at(host);
		// The host's leaves are all in one domain: its leaf, or their rail group.
		n.domain = lowest[hcas[0].sw];
		for (const IbHca &h : hcas) {
			NicSpec x;
			x.device = h.device;
			x.port = h.port;
			x.link_layer = LinkLayer::infiniband;
			x.rate_gbps = h.gbps;
			x.guid = h.guid;
			if (auto it = rail_at.find(sw.names[h.sw]); it != rail_at.end()) {
				x.rail = spec.rails[it->second].index;
				x.rail_switch = sw.names[h.sw];
			}
			n.nics.push_back(std::move(x));
		}
		spec.nodes.push_back(std::move(n));
	}
}

} // namespace

expected<IbFabric> parse_ibnetdiscover(std::string_view text, const std::string &source, const IbOptions &opt)
{
	LOOM_TRY(g, parse_ib_graph(text, source));
	IbFabric f;
	IbSwitches sw = number_switches(g);
	f.links = count_cables(g);
	f.switches = sw.dev.size();
	if (sw.dev.empty())
		return unexpected(source, "no switches in the ibnetdiscover output");
	IbHosts hosts = find_hosts(sw, opt, f);
	f.hosts = hosts.hcas.size();
	f.leaf_switches = ib_switch_levels(sw);
	if (f.leaf_switches == 0)
		return unexpected(source, "no switch has a host attached");
	std::vector<std::string> lowest = ib_domains(sw, hosts, source, f.spec, &f.rail_groups);
	add_nodes(sw, hosts, lowest, source, f.spec);
	return f;
}

} // namespace loom::topo
