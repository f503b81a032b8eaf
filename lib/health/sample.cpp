#include "lib/health/sample.hpp"

#include <cctype>
#include <cstdio>

namespace loom::health {

std::string normalize_pci(std::string_view text)
{
	std::string_view s = text;
	while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
		s.remove_prefix(1);
	if (s.substr(0, 4) == "PCI:" || s.substr(0, 4) == "pci:")
		s.remove_prefix(4);
	// domain:bus:device[.function]; the domain may be 4 or 8 hex digits.
	std::string parts[3];
	int part = 0;
	size_t i = 0;
	for (; i < s.size() && part < 3; i++) {
		char c = s[i];
		if (c == ':') {
			part++;
			continue;
		}
		if (c == '.' || std::isspace(static_cast<unsigned char>(c)) || c == ')')
			break;
		if (!std::isxdigit(static_cast<unsigned char>(c)))
			return {};
		parts[part].push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
	}
	if (part != 2 || parts[0].empty() || parts[1].empty() || parts[2].empty())
		return {};
	if (parts[0].size() > 8 || parts[1].size() > 2 || parts[2].size() > 2)
		return {};
	std::string dom = parts[0];
	// 8-digit domains ("00000001") become 4 digits; longer values are not PCI.
	if (dom.size() > 4) {
		for (size_t k = 0; k < dom.size() - 4; k++)
			if (dom[k] != '0')
				return {};
		dom = dom.substr(dom.size() - 4);
	}
	while (dom.size() < 4)
		dom.insert(dom.begin(), '0');
	auto pad2 = [](std::string v) { return v.size() == 1 ? "0" + v : v; };
	return dom + ":" + pad2(parts[1]) + ":" + pad2(parts[2]);
}

} // namespace loom::health
