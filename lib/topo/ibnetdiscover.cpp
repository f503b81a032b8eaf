#include "lib/topo/ibnetdiscover.hpp"
#include "lib/topo/ib_graph.hpp"

#include "lib/util/fs.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <set>

namespace loom::topo {

namespace {

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// "\"S-2c5e...\"" at s[i]: returns type and guid, advances i past the closing quote.
bool quoted_id(std::string_view s, size_t &i, char &type, std::string &guid)
{
	if (i >= s.size() || s[i] != '"')
		return false;
	size_t close = s.find('"', i + 1);
	if (close == std::string_view::npos || close - i < 4 || s[i + 2] != '-')
		return false;
	type = s[i + 1];
	guid = std::string(s.substr(i + 3, close - i - 3));
	i = close + 1;
	return type == 'S' || type == 'H' || type == 'R';
}

// "[12]" at s[i]: the number, advancing i; -1 if malformed.
int bracket_num(std::string_view s, size_t &i)
{
	if (i >= s.size() || s[i] != '[')
		return -1;
	size_t close = s.find(']', i);
	if (close == std::string_view::npos || close == i + 1 || close - i > 6)
		return -1;
	int v = 0;
	for (size_t k = i + 1; k < close; k++) {
		if (!std::isdigit(static_cast<unsigned char>(s[k])))
			return -1;
		v = v * 10 + (s[k] - '0');
	}
	i = close + 1;
	return v;
}

// Rate of "4xNDR" (last word of the comment) in Gbit/s; 0 if none.
double link_gbps(std::string_view comment)
{
	size_t end = comment.find_last_not_of(" \t");
	if (end == std::string_view::npos)
		return 0;
	size_t start = comment.find_last_of(" \t", end);
	std::string_view w = comment.substr(start == std::string_view::npos ? 0 : start + 1,
					    end + 1 - (start == std::string_view::npos ? 0 : start + 1));
	size_t x = w.find('x');
	if (x == 0 || x == std::string_view::npos || x > 2)
		return 0;
	int lanes = 0;
	for (size_t k = 0; k < x; k++) {
		if (!std::isdigit(static_cast<unsigned char>(w[k])))
			return 0;
		lanes = lanes * 10 + (w[k] - '0');
	}
	return lanes * ib_lane_gbps(w.substr(x + 1));
}

std::string comment_desc(std::string_view line)
{
	size_t h = line.find("# \"");
	if (h == std::string_view::npos)
		return {};
	size_t close = line.find('"', h + 3);
	if (close == std::string_view::npos)
		return {};
	return std::string(line.substr(h + 3, close - h - 3));
}

} // namespace

double ib_lane_gbps(std::string_view s)
{
	static const std::pair<const char *, double> rates[] = {{"SDR", 2.5},  {"DDR", 5},       {"QDR", 10},
								{"FDR10", 10}, {"FDR", 14.0625}, {"EDR", 25},
								{"HDR", 50},   {"NDR", 100},     {"XDR", 200}};
	for (auto &[n, r] : rates)
		if (s == n)
			return r;
	return 0;
}

expected<IbGraph> parse_ib_graph(std::string_view text, const std::string &source)
{
	IbGraph g;
	auto &devs = g.devs;
	auto &by_guid = g.by_guid;
	auto lines = split_lines(text);
	for (size_t ln = 0; ln < lines.size(); ln++) {
		std::string_view l = trim(lines[ln]);
		std::string where = source + ":" + std::to_string(ln + 1);
		if (l.empty() || l[0] == '#' || starts(l, "vendid=") || starts(l, "devid=") ||
		    starts(l, "sysimgguid=") || starts(l, "switchguid=") || starts(l, "caguid=") ||
		    starts(l, "rtrguid="))
			continue;
		if (starts(l, "Switch") || starts(l, "Ca") || starts(l, "Rt")) {
			size_t q = l.find('"');
			IbDev d;
			char type = 0;
			if (q == std::string_view::npos || !quoted_id(l, q, type, d.guid))
				return unexpected(where, "malformed node line");
			d.type = type;
			d.desc = comment_desc(l.substr(q));
			d.where = where;
			if (!by_guid.emplace(d.guid, devs.size()).second)
				return unexpected(where, "node " + d.guid + " listed twice");
			devs.push_back(std::move(d));
			continue;
		}
		if (l[0] == '[') {
			if (devs.empty())
				return unexpected(where, "port line before any Switch or Ca line");
			size_t i = 0;
			IbPort p;
			p.port = bracket_num(l, i);
			if (p.port < 0)
				return unexpected(where, "malformed port number");
			if (i < l.size() && l[i] == '(')
				i = l.find(')', i) == std::string_view::npos ? l.size() : l.find(')', i) + 1;
			while (i < l.size() && (l[i] == ' ' || l[i] == '\t'))
				i++;
			char type = 0;
			if (!quoted_id(l, i, type, p.peer) || (p.peer_port = bracket_num(l, i)) < 0)
				return unexpected(where, "malformed link to peer");
			size_t h = l.find('#', i);
			p.gbps = h == std::string_view::npos ? 0 : link_gbps(l.substr(h + 1));
			devs.back().ports.push_back(std::move(p));
			continue;
		}
		return unexpected(where, "unrecognised line '" + std::string(l.substr(0, 40)) + "'");
	}

	for (const IbDev &d : devs)
		for (const IbPort &p : d.ports)
			if (!by_guid.count(p.peer))
				return unexpected(d.where, "port " + std::to_string(p.port) + " links to " + p.peer +
								   ", which is not in the file (truncated output?)");
	return g;
}

} // namespace loom::topo
