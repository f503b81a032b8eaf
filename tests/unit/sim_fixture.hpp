// The sim tests' helpers: a cluster from a generator spec, nodes by name, a
// job as the traces give one, a run configuration without failures; and the
// test cases test_sim's other sources give its suite. Include after
// check_main.hpp.
#pragma once

#include "lib/sim/cluster_gen.hpp"
#include "lib/sim/simulator.hpp"
#include "lib/topo/build.hpp"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

inline loom::topo::Cluster make(const std::string &spec)
{
	auto g = loom::sim::parse_cluster_gen(spec);
	ck_assert_msg(g.has_value(), "%s", g ? "" : g.error().str().c_str());
	auto s = loom::sim::cluster_spec(*g);
	ck_assert(s.has_value());
	auto c = loom::topo::build_cluster(std::move(*s));
	ck_assert_msg(c.has_value(), "%s", c ? "" : c.error().str().c_str());
	return std::move(*c);
}

inline std::vector<loom::topo::Index> nodes_of(const loom::topo::Cluster &c, std::initializer_list<const char *> names)
{
	std::vector<loom::topo::Index> v;
	for (const char *n : names)
		v.push_back(c.find_node(n));
	return v;
}

inline loom::sim::Job job(uint32_t id, int64_t submit, int nodes, int gpn, int64_t work, bool ckpt = false)
{
	loom::sim::Job j;
	j.id = id;
	j.submit_s = submit;
	j.nodes = nodes;
	j.gpus_per_node = gpn;
	j.work_s = work;
	j.limit_s = std::max<int64_t>(3600, 2 * work);
	j.comm = nodes > 1 ? loom::place::Comm::normal : loom::place::Comm::light;
	j.ckpt = ckpt;
	j.source = "test job " + std::to_string(id);
	return j;
}

inline loom::sim::RunConfig quiet(const std::string &placer)
{
	loom::sim::RunConfig r;
	r.placer = placer;
	r.failures = loom::sim::default_failure_model();
	r.failures.none = true;
	return r;
}

// The failure model and failures in a run (test_sim_failures.cpp).
TCase *sim_failure_tests();
// The cost model: shares, rings, contention (test_sim_cost.cpp).
TCase *sim_cost_tests();
// The scheduler loop (test_sim_scheduler.cpp).
TCase *sim_scheduler_tests();
// Standby nodes inside the allocation (test_sim_standby.cpp).
TCase *sim_standby_tests();
