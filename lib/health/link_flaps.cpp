#include "lib/health/link_flaps.hpp"

#include "lib/util/fs.hpp"

#include <cctype>
#include <map>
#include <string_view>

namespace loom::health {
namespace {

// The interface name just before ": <what>" at position 'at'.
std::string iface_before(std::string_view line, size_t at)
{
	size_t end = at;
	size_t begin = end;
	while (begin > 0) {
		char c = line[begin - 1];
		if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')
			begin--;
		else
			break;
	}
	return std::string(line.substr(begin, end - begin));
}

std::string syslog_time(std::string_view line)
{
	// "Aug 17 06:18:01 host ..." -> "Aug 17 06:18:01"; "[...]" -> inside.
	if (line.size() >= 15 && std::isalpha(static_cast<unsigned char>(line[0])) && line[3] == ' ' && line[9] == ':')
		return std::string(line.substr(0, 15));
	if (!line.empty() && line[0] == '[') {
		size_t close = line.find(']');
		if (close != std::string_view::npos)
			return std::string(line.substr(1, close - 1));
	}
	size_t sp = line.find(' ');
	return std::string(line.substr(0, sp));
}

} // namespace

std::vector<LinkFlaps> count_link_flaps(const std::vector<std::string> &lines)
{
	struct Marker {
		std::string_view text;
		bool lost;
	};
	static const Marker markers[] = {
		{": lost carrier", true},    {": Lost carrier", true}, {": Gained carrier", false},
		{": gained carrier", false}, {": Link down", true},    {": Link up", false},
		{": link down", true},       {": link up", false},
	};
	std::map<std::string, LinkFlaps> by_iface;
	for (const auto &l : lines) {
		std::string_view line = l;
		for (const auto &m : markers) {
			size_t at = line.find(m.text);
			if (at == std::string_view::npos)
				continue;
			// Must end the line or be followed by a space/punctuation: "Link up"
			// must not match "Link updated".
			size_t after = at + m.text.size();
			if (after < line.size() && std::isalnum(static_cast<unsigned char>(line[after])))
				continue;
			std::string ifc = iface_before(line, at);
			if (ifc.empty())
				continue;
			auto &f = by_iface[ifc];
			f.iface = ifc;
			(m.lost ? f.lost : f.gained)++;
			std::string t = syslog_time(line);
			if (f.first_time.empty())
				f.first_time = t;
			f.last_time = t;
			break;
		}
	}
	std::vector<LinkFlaps> out;
	for (auto &[name, f] : by_iface)
		out.push_back(std::move(f));
	return out;
}

} // namespace loom::health
