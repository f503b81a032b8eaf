#include "lib/health/infiniband.hpp"

#include "lib/util/fs.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <sys/stat.h>

namespace loom::health {
namespace {

expected<std::string> read_small(const std::string &path)
{
	auto t = read_file(path, 1 << 16);
	if (!t)
		return t;
	return std::string(trim(*t));
}

void read_counters(const std::string &dir, std::map<std::string, uint64_t> &out)
{
	for (const auto &name : list_dir(dir)) {
		auto v = read_small(path_join(dir, name));
		if (!v || v->empty() || !std::isdigit(static_cast<unsigned char>((*v)[0])))
			continue; // unreadable counters (EINVAL on some kernels) are left out
		out[name] = std::strtoull(v->c_str(), nullptr, 10);
	}
}

} // namespace

std::string strip_state_number(std::string_view text)
{
	text = trim(text);
	size_t colon = text.find(':');
	if (colon != std::string_view::npos)
		text = trim(text.substr(colon + 1));
	return std::string(text);
}

Reading parse_rate_gbps(std::string_view text)
{
	std::string t(trim(text));
	if (t.empty() || !std::isdigit(static_cast<unsigned char>(t[0])))
		return std::nullopt;
	return std::strtod(t.c_str(), nullptr);
}

expected<std::vector<IbPort>> read_ib_sysfs(const std::string &dir)
{
	std::vector<IbPort> ports;
	struct stat st;
	if (::stat(dir.c_str(), &st) != 0)
		return ports;
	for (const auto &dev : list_dir(dir)) {
		std::string pdir = path_join(path_join(dir, dev), "ports");
		for (const auto &pn : list_dir(pdir)) {
			std::string base = path_join(pdir, pn);
			IbPort p;
			p.device = dev;
			p.port = std::atoi(pn.c_str());
			auto state = read_small(path_join(base, "state"));
			if (!state)
				return unexpected(state.error());
			p.state = strip_state_number(*state);
			if (auto v = read_small(path_join(base, "phys_state")))
				p.phys_state = strip_state_number(*v);
			if (auto v = read_small(path_join(base, "rate")))
				p.rate_gbps = parse_rate_gbps(*v);
			if (auto v = read_small(path_join(base, "link_layer")))
				p.link_layer = *v;
			read_counters(path_join(base, "counters"), p.counters);
			read_counters(path_join(base, "hw_counters"), p.hw_counters);
			ports.push_back(std::move(p));
		}
	}
	return ports;
}

expected<std::vector<IbPort>> parse_ibstat(std::string_view text, const std::string &source)
{
	std::vector<IbPort> ports;
	std::string ca;
	IbPort *cur = nullptr;
	int lineno = 0;
	for (const std::string &raw : split_lines(text)) {
		lineno++;
		std::string_view line = trim(raw);
		if (line.rfind("CA '", 0) == 0) {
			size_t end = line.find('\'', 4);
			if (end == std::string_view::npos)
				return unexpected(source + ":" + std::to_string(lineno), "bad CA line");
			ca = std::string(line.substr(4, end - 4));
			cur = nullptr;
			continue;
		}
		if (line.rfind("Port ", 0) == 0 && !line.empty() && line.back() == ':') {
			if (ca.empty())
				return unexpected(source + ":" + std::to_string(lineno), "port outside a CA block");
			IbPort p;
			p.device = ca;
			p.port = std::atoi(std::string(line.substr(5)).c_str());
			ports.push_back(std::move(p));
			cur = &ports.back();
			continue;
		}
		if (!cur)
			continue;
		size_t colon = line.find(':');
		if (colon == std::string_view::npos)
			continue;
		std::string_view key = line.substr(0, colon), val = trim(line.substr(colon + 1));
		if (key == "State")
			cur->state = std::string(val);
		else if (key == "Physical state")
			cur->phys_state = std::string(val);
		else if (key == "Rate")
			cur->rate_gbps = parse_rate_gbps(val);
		else if (key == "Link layer")
			cur->link_layer = std::string(val);
	}
	for (auto &p : ports) {
		std::transform(p.state.begin(), p.state.end(), p.state.begin(),
			       [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
		if (p.state.empty())
			return unexpected(source, "port " + p.device + "/" + std::to_string(p.port) + " has no State");
	}
	return ports;
}

} // namespace loom::health
