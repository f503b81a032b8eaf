// test_place's helpers on a placement State: a request parsed, a decision,
// a job placed and started, the leaves and pod of nodes by name; and the
// test cases test_place's other sources give its suite. Include after
// check_main.hpp.
#pragma once

#include "lib/place/engine.hpp"

#include <set>
#include <string>
#include <vector>

namespace loom::place::testing {

inline Request req(const std::string &text)
{
	auto r = parse_request(text);
	ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
	return *r;
}

inline Decision decide(const State &s, const std::string &text, const Allowed *allowed = nullptr, int max = 2)
{
	auto d = loom::place::place(s, req(text), allowed, Weights{}, max);
	ck_assert_msg(d.has_value(), "%s: %s", text.c_str(), d ? "" : d.error().str().c_str());
	return *d;
}

// Place and start the job; returns the node names.
inline std::vector<std::string> run(State &s, const std::string &text)
{
	Decision d = decide(s, text);
	ck_assert_msg(d.placed(), "%s: %s", text.c_str(), d.reason.c_str());
	ck_assert(commit(s, req(text), d.candidates[0]).has_value());
	std::vector<std::string> names;
	for (Index n : d.candidates[0].nodes)
		names.push_back(s.cluster().nodes[n].name);
	return names;
}

inline std::set<std::string> leaves_of(const State &s, const std::vector<std::string> &names)
{
	std::set<std::string> out;
	for (const auto &n : names)
		out.insert(s.cluster().domains[s.cluster().nodes[s.cluster().find_node(n)].leaf].name);
	return out;
}

inline std::string pod_of(const State &s, const std::string &leaf)
{
	const auto &c = s.cluster();
	return c.domains[c.domains[c.find_domain(leaf)].parent].name;
}

inline Index node(const State &s, const std::string &name) { return s.cluster().find_node(name); }

} // namespace loom::place::testing

// NVLink domains, the baseline and a real InfiniBand fabric (test_place_fabrics.cpp).
TCase *place_fabric_tests();
// Slurm's policies and constraints around the engine (test_place_slurm.cpp).
TCase *place_slurm_tests();
