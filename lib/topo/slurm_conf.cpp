// loom topology: slurm.conf's NodeName= lines in, gres.conf out, and the
// line reader every Slurm file of slurm_conf.hpp shares.
#include "lib/topo/slurm_conf.hpp"

#include "lib/topo/try.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/hostlist.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
#include <strings.h>

namespace loom::topo {

bool slurm_key_is(const std::string &k, const char *want) { return strcasecmp(k.c_str(), want) == 0; }

std::vector<std::pair<size_t, std::string>> slurm_logical_lines(std::string_view text)
{
	std::vector<std::pair<size_t, std::string>> out;
	auto lines = split_lines(text);
	std::string acc;
	size_t first = 0;
	for (size_t i = 0; i < lines.size(); i++) {
		std::string l = lines[i];
		if (size_t h = l.find('#'); h != std::string::npos)
			l.erase(h);
		std::string_view t = trim(l);
		bool cont = !t.empty() && t.back() == '\\';
		if (cont)
			t.remove_suffix(1);
		if (acc.empty())
			first = i + 1;
		acc += std::string(t) + " ";
		if (!cont) {
			if (!trim(acc).empty())
				out.emplace_back(first, std::string(trim(acc)));
			acc.clear();
		}
	}
	if (!trim(acc).empty())
		out.emplace_back(first, std::string(trim(acc)));
	return out;
}

expected<std::vector<std::pair<std::string, std::string>>> slurm_words(std::string_view line, const std::string &where)
{
	std::vector<std::pair<std::string, std::string>> out;
	size_t i = 0;
	while (i < line.size()) {
		while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])))
			i++;
		if (i >= line.size())
			break;
		size_t eq = i;
		while (eq < line.size() && line[eq] != '=' && !std::isspace(static_cast<unsigned char>(line[eq])))
			eq++;
		if (eq >= line.size() || line[eq] != '=' || eq == i)
			return unexpected(where,
					  "expected Key=Value, found '" + std::string(line.substr(i, eq - i)) + "'");
		std::string key(line.substr(i, eq - i)), value;
		i = eq + 1;
		if (i < line.size() && line[i] == '"') {
			size_t close = line.find('"', i + 1);
			if (close == std::string_view::npos)
				return unexpected(where, "unterminated quote in value of " + key);
			value = line.substr(i + 1, close - i - 1);
			i = close + 1;
		} else {
			size_t end = i;
			while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end])))
				end++;
			value = line.substr(i, end - i);
			i = end;
		}
		out.emplace_back(std::move(key), std::move(value));
	}
	return out;
}

namespace {

// "include FILE".
bool include_line(const std::string &line)
{
	return strncasecmp(line.c_str(), "include", 7) == 0 && line.size() > 7 &&
	       std::isspace(static_cast<unsigned char>(line[7]));
}

// Key=Value...: a key of letters, digits and '_' right before the first '='.
bool key_value_line(const std::string &line)
{
	size_t eq = line.find('=');
	size_t key_end = line.find_first_of(" \t=");
	return !(eq == std::string::npos || key_end != eq || eq == 0 ||
		 !std::all_of(line.begin(), line.begin() + static_cast<std::ptrdiff_t>(eq),
			      [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; }));
}

// Features=a,b,...: the features, empty ones dropped.
std::vector<std::string> features_of(const std::string &value)
{
	std::vector<std::string> out;
	for (size_t p = 0; p <= value.size();) {
		size_t comma = value.find(',', p);
		std::string f = value.substr(p, comma == std::string::npos ? std::string::npos : comma - p);
		if (!f.empty())
			out.push_back(f);
		if (comma == std::string::npos)
			break;
		p = comma + 1;
	}
	return out;
}

// Gres=...: the GPUs of gpu[:type]:count[(S:...)] (the last such item).
status read_gres(const std::string &value, SlurmNode &node, const std::string &where)
{
	for (size_t p = 0; p <= value.size();) {
		size_t comma = value.find(',', p);
		std::string g = value.substr(p, comma == std::string::npos ? std::string::npos : comma - p);
		if (g.rfind("gpu", 0) == 0) {
			g = g.substr(0, g.find('('));
			size_t c1 = g.find(':'), c2 = g.rfind(':');
			if (c1 == std::string::npos)
				node.gpus = 1;
			else {
				std::string n = g.substr(c2 + 1);
				char *end = nullptr;
				long v = std::strtol(n.c_str(), &end, 10);
				if (n.empty() || *end || v < 0 || v > 1024)
					return unexpected(where, "Gres=: bad GPU count in '" + g + "'");
				node.gpus = static_cast<int>(v);
				node.gpu_type = c2 > c1 ? g.substr(c1 + 1, c2 - c1 - 1) : "";
			}
		}
		if (comma == std::string::npos)
			break;
		p = comma + 1;
	}
	return ok();
}

} // namespace

expected<std::vector<SlurmNode>> parse_slurm_nodes(std::string_view text, const std::string &source)
{
	std::vector<SlurmNode> out;
	SlurmNode defaults;
	bool includes = false, node_lines = false;
	HostlistBudget node_names(max_cluster_nodes, "nodes");
	for (auto &[line_no, line] : slurm_logical_lines(text)) {
		std::string where = source + ":" + std::to_string(line_no);
		// Every line is Key=Value... or an include: anything else is not a
		// slurm.conf (a binary, another program's file), said at its line.
		if (include_line(line)) {
			includes = true;
			continue;
		}
		if (!key_value_line(line))
			return unexpected(where, "not a slurm.conf line (expected Key=Value): '" + shown(line) + "'");
		if (line.size() < 9 || strncasecmp(line.c_str(), "NodeName=", 9) != 0)
			continue;
		node_lines = true;
		LOOM_TRY(words, slurm_words(line, where));
		SlurmNode proto = defaults;
		proto.where = where;
		for (size_t k = 1; k < words.size(); k++) {
			const auto &[key, value] = words[k];
			if (slurm_key_is(key, "Feature") || slurm_key_is(key, "Features"))
				proto.features = features_of(value);
			else if (slurm_key_is(key, "Gres"))
				LOOM_CHECK(read_gres(value, proto, where));
		}
		if (strcasecmp(words[0].second.c_str(), "DEFAULT") == 0) {
			defaults = proto;
			continue;
		}
		auto names = node_names.expand(words[0].second);
		if (!names)
			return unexpected(where, "NodeName=: " + names.error().message);
		for (auto &n : *names) {
			SlurmNode sn = proto;
			sn.name = n;
			out.push_back(std::move(sn));
		}
	}
	if (!node_lines)
		return unexpected(source,
				  includes ? "no NodeName= lines (they may be in an included file: give that one)"
					   : "no NodeName= lines: a slurm.conf without nodes");
	return out;
}

std::string write_gres_conf(const Cluster &c, Index node)
{
	const Node &n = c.nodes[node];
	std::string out;
	for (uint16_t i = 0; i < n.gpu_count; i++) {
		const Gpu &g = c.gpus[n.gpu_begin + i];
		out += "NodeName=" + n.name + " Name=gpu";
		std::string type = lower(c.models.name(g.model));
		for (char &ch : type)
			if (std::isspace(static_cast<unsigned char>(ch)))
				ch = '_';
		if (!type.empty())
			out += " Type=" + type;
		out += " File=/dev/nvidia" + std::to_string(g.index) + " Links=";
		for (uint16_t j = 0; j < n.gpu_count; j++) {
			const Gpu &h = c.gpus[n.gpu_begin + j];
			int links = 0;
			if (i == j)
				links = -1;
			else if (g.nvswitch && h.nvswitch)
				links = std::min(g.nvlinks, h.nvlinks);
			else
				for (const auto &p : g.peers)
					if (p.gpu == h.index)
						links = p.links;
			out += (j ? "," : "") + std::to_string(links);
		}
		out += "\n";
	}
	return out;
}

} // namespace loom::topo
