#include "lib/health/infiniband.hpp"

#include "lib/health/host_sysfs.hpp"
#include "lib/util/fs.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace loom::health {
namespace {

// Rates and PMA counters a device does not implement (RoCE ports, some firmware).
constexpr int unimplemented[] = {EINVAL, EOPNOTSUPP};

void read_counters(SysfsAttrs &a, const std::string &dir, std::map<std::string, uint64_t> &out)
{
	auto names = list_dir_checked(dir);
	if (!names) {
		a.problem(dir, names.error().message);
		return;
	}
	for (const auto &name : *names)
		if (auto v = a.count(path_join(dir, name), unimplemented))
			out[name] = *v;
}

// "4: ACTIVE", "5: LinkUp", "4: Phy Test": the kernel's "%d: %s".
bool is_numbered_state(std::string_view t)
{
	size_t colon = t.find(": ");
	if (colon == 0 || colon == std::string_view::npos || colon + 2 >= t.size())
		return false;
	for (size_t i = 0; i < colon; i++)
		if (!std::isdigit(static_cast<unsigned char>(t[i])))
			return false;
	for (char c : t.substr(colon + 2))
		if (!std::isalnum(static_cast<unsigned char>(c)) && c != ' ' && c != '_' && c != '<' && c != '>')
			return false;
	return true;
}

// "400 Gb/sec (4X NDR)", "2.5 Gb/sec (1X SDR)": a decimal number, then " Gb/sec".
bool is_rate(std::string_view t)
{
	size_t sp = t.find(" Gb/sec");
	if (sp == 0 || sp == std::string_view::npos)
		return false;
	std::string_view n = t.substr(0, sp);
	size_t dot = n.find('.');
	auto digits = [](std::string_view d) {
		return !d.empty() && d.size() <= 9 &&
		       std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
	};
	return dot == std::string_view::npos ? digits(n) : digits(n.substr(0, dot)) && digits(n.substr(dot + 1));
}

// A "%d: %s" text attribute, stripped of its number; nullopt when absent or bad.
std::optional<std::string> numbered_state(SysfsAttrs &a, const std::string &path)
{
	auto v = a.text(path);
	if (!v)
		return std::nullopt;
	if (!is_numbered_state(*v)) {
		a.bad(path, *v, "is not a port state");
		return std::nullopt;
	}
	return strip_state_number(*v);
}

std::optional<IbPort> read_port(SysfsAttrs &a, const std::string &base, const std::string &dev, const std::string &pn)
{
	IbPort p;
	p.device = dev;
	p.port = std::atoi(pn.c_str());
	size_t before = a.problems();
	std::string state_file = path_join(base, "state");
	auto state = numbered_state(a, state_file);
	if (!state) {
		if (a.problems() == before)
			a.problem(state_file, "no port state");
		return std::nullopt;
	}
	p.state = *state;
	if (auto v = numbered_state(a, path_join(base, "phys_state")))
		p.phys_state = *v;
	std::string rate = path_join(base, "rate");
	if (auto v = a.text(rate, unimplemented)) {
		if (is_rate(*v))
			p.rate_gbps = parse_rate_gbps(*v);
		else
			a.bad(rate, *v, "is not a rate");
	}
	std::string layer = path_join(base, "link_layer");
	if (auto v = a.text(layer)) {
		if (*v == "InfiniBand" || *v == "Ethernet" || *v == "Unknown")
			p.link_layer = *v;
		else
			a.bad(layer, *v, "is not a link layer");
	}
	read_counters(a, path_join(base, "counters"), p.counters);
	read_counters(a, path_join(base, "hw_counters"), p.hw_counters);
	return p;
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

std::vector<IbPort> read_ib_sysfs(const std::string &dir, std::vector<Error> &problems)
{
	SysfsAttrs a(problems);
	std::vector<IbPort> ports;
	auto devs = list_dir_checked(dir);
	if (!devs) {
		problems.push_back(devs.error());
		return ports;
	}
	for (const auto &dev : *devs) {
		std::string pdir = path_join(path_join(dir, dev), "ports");
		auto pns = list_dir_checked(pdir);
		if (!pns) {
			problems.push_back(pns.error());
			continue;
		}
		for (const auto &pn : *pns)
			if (auto p = read_port(a, path_join(pdir, pn), dev, pn))
				ports.push_back(std::move(*p));
	}
	return ports;
}

expected<std::vector<IbPort>> read_ib_sysfs(const std::string &dir)
{
	std::vector<Error> problems;
	auto ports = read_ib_sysfs(dir, problems);
	if (!problems.empty())
		return unexpected(first_of(problems));
	return ports;
}

expected<std::vector<IbPort>> read_ibstat(const std::string &path)
{
	auto text = read_collector_file(path, ibstat_max_bytes);
	if (!text)
		return unexpected(text.error());
	return parse_ibstat(*text, path);
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
