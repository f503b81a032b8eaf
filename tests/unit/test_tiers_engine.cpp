// The placement engine with GPU tiers: a tier placed on the class its
// objective picks, a value job waiting for its cheapest class within its
// budget (and for off-peak hours), and gangs spanning classes only when
// asked.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "lib/place/engine.hpp"
#include "lib/place/tiers.hpp"
#include "lib/place/weights.hpp"

#include "tests/unit/check_main.hpp"
#include "tests/unit/place_fixture.hpp"
#include "tests/unit/tiers_fixture.hpp"

using namespace loom;
using namespace loom::place;
using namespace loom::place::testing;

// The engine: a value gang goes to the cheapest class per work that holds it,
// a fast one to the fastest; when its first class is full, the next, and the
// explanation says why the first lost; a price per hour on every candidate.
START_TEST(engine_places_a_tier_on_its_class)
{
	auto c = test_cluster(); // a100 and h100 nodes
	auto s = read("gpu_classes=a100,h100\n"
		      "gpu_class.a100=throughput:1,price:1.00\n"
		      "gpu_class.h100=throughput:2,price:3.00\n");
	ck_assert(s.has_value());
	Weights w;
	w.tiers = std::make_shared<const TierTable>(s->t);
	w.clock_minute = 12 * 60;
	State st(c);
	auto cls = [&](Index n) { return c.classes.name(c.nodes[static_cast<size_t>(n)].perf_class); };
	auto r = parse_request("nodes=2 gpus_per_node=8 tier=value");
	ck_assert(r.has_value());
	auto d = loom::place::place(st, *r, nullptr, w, 2);
	ck_assert(d.has_value() && d->placed());
	ck_assert_sstr_eq(d->gpu_class, "a100"); // 1.00 per work against 1.50
	for (Index n : d->candidates[0].nodes)
		ck_assert_sstr_eq(cls(n), "a100");
	ck_assert(std::fabs(d->candidates[0].price_per_h - 16.0) < 1e-9); // 16 GPUs x 1.00
	ck_assert_msg(d->tier.find("tier value") != std::string::npos &&
			      d->tier.find("chose a100") != std::string::npos,
		      "%s", d->tier.c_str());
	auto f = parse_request("nodes=2 gpus_per_node=8 tier=fast");
	ck_assert(f.has_value());
	d = loom::place::place(st, *f, nullptr, w, 2);
	ck_assert(d.has_value() && d->placed());
	ck_assert_sstr_eq(d->gpu_class, "h100");
	ck_assert(std::fabs(d->candidates[0].price_per_h - 48.0) < 1e-9);
	// Fill every a100 node: value now takes h100 and says why a100 lost.
	for (size_t n = 0; n < c.nodes.size(); n++)
		if (cls(static_cast<Index>(n)) == "a100")
			ck_assert(st.allocate(static_cast<Index>(n), 8, 0).has_value());
	d = loom::place::place(st, *r, nullptr, w, 2);
	ck_assert(d.has_value() && d->placed());
	ck_assert_sstr_eq(d->gpu_class, "h100");
	ck_assert_msg(d->tier.find("(a100: ") != std::string::npos, "%s", d->tier.c_str());
	// A tier whose every class is full waits, saying so; a gang never spans classes.
	auto big = parse_request("nodes=9 gpus_per_node=8 tier=value");
	ck_assert(big.has_value());
	d = loom::place::place(st, *big, nullptr, w, 2);
	ck_assert(d.has_value());
	ck_assert(!d->placed());
	ck_assert_msg(d->reason.find("no eligible class holds the whole gang now") != std::string::npos, "%s",
		      d->reason.c_str());
	// A tier on a site without classes is a bad request; a class and a tier at once too.
	Weights none;
	ck_assert(!loom::place::place(st, *r, nullptr, none, 2).has_value());
	ck_assert(!parse_request("nodes=1 class=h100 tier=fast").has_value());
	// The request's text form carries the need.
	auto round = parse_request(
		format_request(*parse_request("nodes=2 tier=big min_class=h100 gpu_mem=80G workload=infer")));
	ck_assert(round.has_value());
	ck_assert_sstr_eq(format_request(*round), "nodes=2 tier=big min_class=h100 gpu_mem=80G workload=infer");
}
END_TEST

// A value job with time to spare waits for its cheapest class when it is
// full, and says so; without (or past) its budget it takes the next class.
// It waits for off-peak hours when they make its run cheaper and start
// within the budget.
START_TEST(value_waits_within_its_budget)
{
	auto c = test_cluster();
	auto s = read("gpu_classes=a100,h100\n"
		      "gpu_class.a100=throughput:1,price:1.00\n"
		      "gpu_class.h100=throughput:2,price:3.00,offpeak_price:1.00\n"
		      "offpeak=22:00-06:00\n");
	ck_assert(s.has_value());
	Weights w;
	w.tiers = std::make_shared<const TierTable>(s->t);
	w.clock_minute = 12 * 60;
	State st(c);
	auto cls = [&](Index n) { return c.classes.name(c.nodes[static_cast<size_t>(n)].perf_class); };
	for (size_t n = 0; n < c.nodes.size(); n++)
		if (cls(static_cast<Index>(n)) == "a100")
			ck_assert(st.allocate(static_cast<Index>(n), 8, 0).has_value());
	auto r = parse_request("nodes=2 gpus_per_node=8 tier=value limit=3600 may_wait=900");
	ck_assert(r.has_value());
	auto d = loom::place::place(st, *r, nullptr, w, 2);
	ck_assert(d.has_value());
	ck_assert(!d->placed());
	ck_assert_msg(!d->waiting.empty() && d->reason.find("waiting for a100") != std::string::npos, "%s",
		      d->reason.c_str());
	ck_assert_msg(d->reason.find("waits up to 15 min more") != std::string::npos, "%s", d->reason.c_str());
	r->may_wait_s = 0; // its budget spent: the next class now
	d = loom::place::place(st, *r, nullptr, w, 2);
	ck_assert(d.has_value() && d->placed());
	ck_assert_sstr_eq(d->gpu_class, "h100");
	ck_assert(d->waiting.empty());
	// A fast or balanced job never waits for a cheaper class.
	auto f = parse_request("nodes=2 gpus_per_node=8 tier=balanced limit=3600 may_wait=900");
	d = loom::place::place(st, *f, nullptr, w, 2);
	ck_assert(d.has_value() && d->placed());
	ck_assert_sstr_eq(d->gpu_class, "h100");
	// A gang its cheapest class could never hold does not wait for it.
	auto big = parse_request("nodes=9 gpus_per_node=8 tier=value limit=3600 may_wait=900");
	d = loom::place::place(st, *big, nullptr, w, 2);
	ck_assert(d.has_value() && !d->placed());
	ck_assert(d->waiting.empty());

	// Off-peak: at 21:00 a 1 h run on h100 costs 1.50/work, at 22:00 0.50
	// against a100's 1.00: with 2 h to spare it waits the hour, with 30 min
	// it runs on a100 now (free again).
	State fresh(c);
	w.clock_minute = 21 * 60;
	r->may_wait_s = 7200;
	d = loom::place::place(fresh, *r, nullptr, w, 2);
	ck_assert(d.has_value() && !d->placed());
	ck_assert_msg(d->reason.find("off-peak hours in 60 min") != std::string::npos, "%s", d->reason.c_str());
	r->may_wait_s = 1800;
	d = loom::place::place(fresh, *r, nullptr, w, 2);
	ck_assert(d.has_value() && d->placed());
	ck_assert_sstr_eq(d->gpu_class, "a100");
	// At 23:00 it is off-peak: h100 is the cheapest per work now.
	w.clock_minute = 23 * 60;
	d = loom::place::place(fresh, *r, nullptr, w, 2);
	ck_assert(d.has_value() && d->placed());
	ck_assert_sstr_eq(d->gpu_class, "h100");
	// Engine cost of that run, by hand: 16 GPUs x 1.00 x 1 h off-peak.
	std::vector<int> g(d->candidates[0].nodes.size(), 8);
	ck_assert(std::fabs(run_cost(c, s->t, d->candidates[0].nodes, g, 23 * 60, 60) - 16.0) < 1e-9);
	// From 21:30 for 1 h: half at 3.00, half at 1.00.
	ck_assert(std::fabs(run_cost(c, s->t, d->candidates[0].nodes, g, 21 * 60 + 30, 60) - 32.0) < 1e-9);
}
END_TEST

// A gang spans classes only when it says it may (mixed=yes, --gpu-mixed),
// and only when no one class holds it.
START_TEST(mixed_gang_only_when_asked)
{
	auto c = test_cluster(); // 8 a100 nodes, 8 h100 nodes
	auto s = read("gpu_classes=a100,h100\n"
		      "gpu_class.a100=throughput:1,price:1.00\n"
		      "gpu_class.h100=throughput:2,price:3.00\n");
	ck_assert(s.has_value());
	Weights w;
	w.tiers = std::make_shared<const TierTable>(s->t);
	w.clock_minute = 12 * 60;
	State st(c);
	auto cls = [&](Index n) { return c.classes.name(c.nodes[static_cast<size_t>(n)].perf_class); };
	auto one = parse_request("nodes=9 gpus_per_node=8 tier=value");
	ck_assert(one.has_value());
	auto d = loom::place::place(st, *one, nullptr, w, 2);
	ck_assert(d.has_value() && !d->placed());
	auto mixed = parse_request("nodes=9 gpus_per_node=8 tier=value mixed=yes");
	ck_assert(mixed.has_value());
	d = loom::place::place(st, *mixed, nullptr, w, 2);
	ck_assert_msg(d.has_value() && d->placed(), "%s", d ? d->reason.c_str() : d.error().str().c_str());
	ck_assert_sstr_eq(d->gpu_class, "a100+h100");
	int a = 0, h = 0;
	for (Index n : d->candidates[0].nodes)
		(cls(n) == "a100" ? a : h)++;
	ck_assert_int_eq(a + h, 9);
	ck_assert_msg(a >= 1 && h >= 1, "a100 %d h100 %d", a, h);
	ck_assert_msg(d->tier.find("together (--gpu-mixed") != std::string::npos, "%s", d->tier.c_str());
	// One class holds a 2-node gang: mixed=yes does not spread it.
	auto small = parse_request("nodes=2 gpus_per_node=8 tier=value mixed=yes");
	d = loom::place::place(st, *small, nullptr, w, 2);
	ck_assert(d.has_value() && d->placed());
	ck_assert_sstr_eq(d->gpu_class, "a100");
	for (Index n : d->candidates[0].nodes)
		ck_assert_sstr_eq(cls(n), "a100");
	// A named class cannot span; the request's text carries the keys.
	auto bad = parse_request("nodes=9 class=h100 mixed=yes");
	ck_assert(!bad.has_value());
	ck_assert_msg(bad.error().str().find("mixed") != std::string::npos, "%s", bad.error().str().c_str());
	ck_assert(!parse_request("nodes=1 tier=value may_wait=-5").has_value());
	auto round =
		parse_request(format_request(*parse_request("nodes=9 tier=value mixed=yes limit=3600 may_wait=900")));
	ck_assert(round.has_value());
	ck_assert_sstr_eq(format_request(*round), "nodes=9 tier=value mixed=yes limit=3600 may_wait=900");
}
END_TEST

TCase *tier_engine_tests()
{
	TCase *t = tcase_create("engine");
	tcase_add_test(t, engine_places_a_tier_on_its_class);
	tcase_add_test(t, value_waits_within_its_budget);
	tcase_add_test(t, mixed_gang_only_when_asked);
	return t;
}
