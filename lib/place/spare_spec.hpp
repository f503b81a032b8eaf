// loom placement: the spare pool's rules, as loom-topo.conf writes them
// (`spares=leaf:1,nvlink:2,pod:5%`, `spare_lend=`). Apart from the pool
// itself (spares.hpp) because loom-topo.conf's reader checks them, and
// spank_place compiles that reader without the fabric model.
#pragma once

#include "lib/util/expected.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loom::place {

// One "kind:N" or "kind:P%" of the spares= list.
struct SpareRule {
	std::string kind; // a domain kind of the fabric ("leaf", "pod") or "nvlink"
	int count = 0;    // N spares per domain, or
	double share = 0; // this fraction of each domain's nodes, rounded up (0 < share <= 0.5)
	int want(size_t domain_nodes) const;
};
struct SpareSpec {
	std::vector<SpareRule> rules;
	int64_t lend_max_s = 1800; // jobs with a time limit up to this may use spares; 0: none
	bool empty() const { return rules.empty(); }
};
// "leaf:1,pod:5%" ("" or "none": no pool). Errors name the item and why.
expected<SpareSpec> parse_spares(std::string_view text);
// Every rule's kind exists on this fabric (kinds: topo::locality_kinds).
status check_spare_kinds(const SpareSpec &spec, const std::vector<std::string> &kinds);

// May a job with this time limit (seconds; <= 0: none or unlimited) use spares?
bool may_borrow_spares(const SpareSpec &spec, int64_t time_limit_s);

} // namespace loom::place
