#include "lib/util/gres.hpp"

#include <algorithm>
#include <cctype>

namespace loom {

GresGpu gres_gpu(std::string_view tres)
{
	GresGpu g;
	// The name "gpu" itself: after the start, ':', '/' or ','; then the end,
	// a type or count (':'), a count ('=') or the next GRES (',').
	size_t at = tres.find("gpu");
	auto is_name = [tres](size_t a) {
		bool before = a == 0 || tres[a - 1] == ':' || tres[a - 1] == '/' || tres[a - 1] == ',';
		bool after = a + 3 == tres.size() || tres[a + 3] == ':' || tres[a + 3] == '=' || tres[a + 3] == ',';
		return before && after;
	};
	while (at != std::string_view::npos && !is_name(at))
		at = tres.find("gpu", at + 3);
	if (at == std::string_view::npos)
		return g;
	g.gpus = true;
	std::string_view rest = tres.substr(at + 3);
	if (rest.empty() || rest[0] != ':')
		return g;
	rest.remove_prefix(1);
	std::string_view type = rest.substr(0, rest.find_first_of(":=,"));
	bool numeric = !type.empty() && type.find_first_not_of("0123456789") == std::string_view::npos;
	if (!numeric)
		g.type = std::string(type);
	return g;
}

int gres_gpu_count(std::string_view g)
{
	if (g.empty() || g == "(null)")
		return -1;
	int total = -1;
	size_t start = 0;
	while (start < g.size()) {
		// Items are separated by commas outside parentheses.
		size_t end = start;
		int depth = 0;
		while (end < g.size() && !(g[end] == ',' && depth == 0)) {
			depth += g[end] == '(' ? 1 : g[end] == ')' ? -1 : 0;
			end++;
		}
		std::string_view item = g.substr(start, end - start);
		size_t paren = item.find('(');
		if (paren != std::string_view::npos)
			item = item.substr(0, paren);
		if (item.rfind("gpu", 0) == 0 && (item.size() == 3 || item[3] == ':')) {
			size_t colon = item.rfind(':');
			int n = 1; // "gpu" alone counts one
			if (colon != std::string_view::npos && colon + 1 < item.size()) {
				std::string_view num = item.substr(colon + 1);
				if (std::all_of(num.begin(), num.end(),
						[](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
				    num.size() < 7)
					n = std::stoi(std::string(num));
				else
					n = -1; // "gpu:h100" without a count: not a count we can read
			}
			if (n >= 0)
				total = (total < 0 ? 0 : total) + n;
		}
		start = end + 1;
	}
	return total;
}

} // namespace loom
