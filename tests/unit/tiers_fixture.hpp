// The tier tests' site: a loom-topo.conf text read into a tier table and its
// class list, as spank_place and select/topo read it; and the test case
// test_tiers's other source gives its suite. Include after check_main.hpp.
#pragma once

#include "lib/place/tiers.hpp"
#include "lib/util/config.hpp"

#include <string>
#include <vector>

namespace loom::place::testing {

struct Site {
	TierTable t;
	std::vector<std::string> classes;
};

inline expected<Site> read(const std::string &text)
{
	Site s;
	ConfigSchema schema;
	schema.list("gpu_classes", &s.classes);
	add_tier_keys(schema, &s.t);
	if (auto st = schema.parse_text(text, "loom-topo.conf"); !st)
		return unexpected(st.error());
	if (auto st = check_tiers(s.t, s.classes, "loom-topo.conf"); !st)
		return unexpected(st.error());
	return s;
}

} // namespace loom::place::testing

// The engine placing tiers: a class by objective, waits within a budget,
// mixed gangs (test_tiers_engine.cpp).
TCase *tier_engine_tests();
