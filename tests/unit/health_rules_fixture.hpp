// The health rules tests' helpers: a recorded file of tests/data/health,
// a verdict's findings and actions; and the test case test_health_rules's
// other source gives its suite. It includes check_main.hpp after the
// standard headers, as check.h must come.
#pragma once

#include "lib/health/rules.hpp"
#include "lib/util/fs.hpp"

#include <string>

#include "tests/unit/check_main.hpp"

namespace loom::health::testing {

inline std::string recorded(const std::string &name)
{
	auto t = read_file(test::data("health/" + name));
	ck_assert_msg(t.has_value(), "%s", t ? "" : t.error().str().c_str());
	return *t;
}

inline bool has_finding(const Verdict &v, const std::string &check, Outcome sev, const std::string &text = {})
{
	for (const auto &f : v.findings)
		if (f.check == check && f.severity == sev && f.evidence.find(text) != std::string::npos)
			return true;
	return false;
}

inline bool has_action(const Verdict &v, const std::string &a)
{
	for (const auto &x : v.actions)
		if (x == a)
			return true;
	return false;
}

} // namespace loom::health::testing

// The network's rules: InfiniBand ports, error and hw counters, link flaps
// (test_health_rules_network.cpp).
TCase *health_network_rule_tests();
