// loom placement: the spare pool's rules (spare_spec.hpp).
#include "lib/place/spare_spec.hpp"

#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"

#include <algorithm>
#include <cmath>

namespace loom::place {
namespace {
std::vector<std::string> split_commas(std::string_view s)
{
	std::vector<std::string> out;
	size_t b = 0;
	for (size_t i = 0; i <= s.size(); i++)
		if (i == s.size() || s[i] == ',') {
			out.emplace_back(s.substr(b, i - b));
			b = i + 1;
		}
	return out;
}
} // namespace

int SpareRule::want(size_t domain_nodes) const
{
	if (share > 0)
		return static_cast<int>(std::ceil(share * static_cast<double>(domain_nodes) - 1e-9));
	return count;
}

expected<SpareSpec> parse_spares(std::string_view text)
{
	SpareSpec spec;
	std::string t(trim(text));
	if (t.empty() || t == "none")
		return spec;
	for (const std::string &item : split_commas(t)) {
		std::string it(trim(item));
		auto colon = it.find(':');
		if (it.empty() || colon == std::string::npos || colon == 0 || colon + 1 == it.size())
			return unexpected("spares: '" + it +
					  "': expected KIND:N or KIND:P% (leaf:1, nvlink:2, pod:5%)");
		SpareRule r;
		r.kind = it.substr(0, colon);
		std::string n = it.substr(colon + 1);
		if (n.back() == '%') {
			auto p = parse_real(std::string_view(n).substr(0, n.size() - 1), 0, 50);
			if (!p || *p <= 0)
				return unexpected("spares: '" + it +
						  "': a share is more than 0% and at most 50% of a domain");
			r.share = *p / 100.0;
		} else {
			auto c = parse_int(n, 1, 64);
			if (!c)
				return unexpected("spares: '" + it + "': expected 1 to 64 spares per domain");
			r.count = static_cast<int>(*c);
		}
		for (const SpareRule &o : spec.rules)
			if (o.kind == r.kind)
				return unexpected("spares: kind '" + r.kind + "' given twice");
		spec.rules.push_back(std::move(r));
	}
	return spec;
}

status check_spare_kinds(const SpareSpec &spec, const std::vector<std::string> &kinds)
{
	for (const SpareRule &r : spec.rules)
		if (std::find(kinds.begin(), kinds.end(), r.kind) == kinds.end())
			return unexpected("spares: this fabric has no domain of kind '" + r.kind +
					  "' (kinds: " + join(kinds, ", ") + ")");
	return ok();
}

bool may_borrow_spares(const SpareSpec &spec, int64_t time_limit_s)
{
	return spec.lend_max_s > 0 && time_limit_s > 0 && time_limit_s <= spec.lend_max_s;
}

} // namespace loom::place
