// GPU classes, prices and tiers (lib/place/tiers.hpp): the loom-topo.conf
// keys and their errors, each tier's order of classes, off-peak prices, the
// bounds, the weights and the SPANK flag. The suite, with the engine placing
// a tier on the class its objective picks (test_tiers_engine.cpp).
#include <cmath>
#include <string>
#include <vector>

#include "lib/place/tiers.hpp"
#include "lib/place/weights.hpp"
#include "plugins/common/place_hints.hpp"

#include "tests/unit/check_main.hpp"
#include "tests/unit/tiers_fixture.hpp"

using namespace loom;
using namespace loom::place;
using namespace loom::place::testing;

namespace {

// Three generations, 1x 2x 3x; a100 1.10, h100 1.90 (0.95 per work: the
// cheapest), b200 4.50 (1.50 per work: the dearest per work, the fastest).
const char *site = "gpu_classes=a100,h100,b200\n"
		   "gpu_class.a100=throughput:1,mem:80G,price:1.10\n"
		   "gpu_class.h100=throughput:2,infer:2.5,mem:80G,price:1.90,offpeak_price:1.00\n"
		   "gpu_class.b200=throughput:3,mem:192G,price:4.50\n"
		   "offpeak=22:00-06:00\n"
		   "gpu_tier.big=value,mem:150G\n"
		   "gpu_tier.urgent=fast,min_class:h100\n";

std::vector<std::string> order(const TierTable &t, const Need &n, int minute = 12 * 60)
{
	auto p = plan_tier(t, n, minute);
	ck_assert_msg(p.has_value(), "%s", p ? "" : p.error().str().c_str());
	std::vector<std::string> v;
	for (size_t i = 0; i < p->eligible; i++)
		v.push_back(p->options[i].name);
	return v;
}

std::string joined(const std::vector<std::string> &v)
{
	std::string s;
	for (const auto &x : v)
		s += (s.empty() ? "" : ",") + x;
	return s;
}

Need tier(const char *name)
{
	Need n;
	n.tier = name;
	return n;
}

} // namespace

START_TEST(table_from_the_file)
{
	auto s = read(site);
	ck_assert_msg(s.has_value(), "%s", s ? "" : s.error().str().c_str());
	ck_assert_int_eq(s->t.classes.size(), 3);
	const PerfClass *h = s->t.find_class("h100");
	ck_assert(h != nullptr);
	ck_assert(h->throughput == 2 && h->speed(Workload::infer) == 2.5 && h->speed(Workload::train) == 2);
	ck_assert(h->mem == 80ull << 30);
	ck_assert(std::fabs(h->price - 1.90) < 1e-12);
	ck_assert_sstr_eq(s->t.tier_words(), "value|balanced|fast|big|urgent");
	// 23:00 and 05:59 are off-peak, 06:00 and 21:59 are not.
	ck_assert(s->t.offpeak(23 * 60) && s->t.offpeak(5 * 60 + 59));
	ck_assert(!s->t.offpeak(6 * 60) && !s->t.offpeak(21 * 60 + 59));
	ck_assert(std::fabs(s->t.price_at(*h, 23 * 60) - 1.00) < 1e-12);
	ck_assert(std::fabs(s->t.price_at(*h, 12 * 60) - 1.90) < 1e-12);
	// Without gpu_classes, the defined classes are the list, slowest first.
	auto t = read("gpu_class.b200=throughput:3\ngpu_class.a100=throughput:1\n");
	ck_assert(t.has_value());
	ck_assert_sstr_eq(joined(t->classes), "a100,b200");
}
END_TEST

START_TEST(bad_tables_name_the_key)
{
	struct Case {
		const char *text, *says;
	} cases[] = {
		{"gpu_class.h100=throughput:2,speed:3\n", "unknown class key 'speed'"},
		{"gpu_class.h100=throughput:fast\n", "throughput:'fast'"},
		{"gpu_class.h100=mem:lots\n", "mem:'lots'"},
		{"gpu_class.h1.00=throughput:2\n", "is not a name"},
		{"gpu_classes=a100\ngpu_class.h100=throughput:2\n", "'h100' is not in gpu_classes"},
		{"gpu_class.h100=throughput:2\ngpu_tier.value=fast\n", "built-in tier"},
		{"gpu_class.h100=throughput:2\ngpu_tier.x=cheapest\n", "bad objective 'cheapest'"},
		{"gpu_class.h100=throughput:2\ngpu_tier.x=fast,min_class:b200\n", "min_class 'b200' is not a class"},
		{"gpu_class.a100=price:1\ngpu_class.h100=throughput:2\n", "gpu_class.h100: no price"},
		{"gpu_class.h100=throughput:2\noffpeak=22:00\n", "HH:MM-HH:MM"},
		{"gpu_class.h100=throughput:2\noffpeak=25:00-06:00\n", "'25:00'"},
		{"gpu_tier.x=fast\n", "no gpu_class.NAME is defined"},
	};
	for (const Case &c : cases) {
		auto s = read(c.text);
		ck_assert_msg(!s.has_value(), "accepted: %s", c.text);
		ck_assert_msg(s.error().str().find(c.says) != std::string::npos, "%s: says '%s', not '%s'", c.text,
			      s.error().str().c_str(), c.says);
		ck_assert_msg(s.error().str().find("loom-topo.conf") != std::string::npos, "%s: no file in '%s'",
			      c.text, s.error().str().c_str());
	}
}
END_TEST

START_TEST(each_tier_orders_by_its_objective)
{
	auto s = read(site);
	ck_assert(s.has_value());
	// value: price per work 0.95 (h100), 1.10 (a100), 1.50 (b200).
	ck_assert_sstr_eq(joined(order(s->t, tier("value"))), "h100,a100,b200");
	// fast: throughput 3, 2, 1.
	ck_assert_sstr_eq(joined(order(s->t, tier("fast"))), "b200,h100,a100");
	// balanced: relative cost x relative time: h100 1 x 1.5 = 1.5, b200
	// 1.58 x 1 = 1.58, a100 1.16 x 3 = 3.47.
	ck_assert_sstr_eq(joined(order(s->t, tier("balanced"))), "h100,b200,a100");
	// Off-peak h100 is 0.50 per work; b200's price does not change.
	auto night = plan_tier(s->t, tier("value"), 23 * 60);
	ck_assert(night.has_value() && night->offpeak);
	ck_assert(std::fabs(night->options[0].cost_per_work - 0.5) < 1e-12);
	// The site's tiers: big needs 150G (b200 only), urgent h100 or faster.
	ck_assert_sstr_eq(joined(order(s->t, tier("big"))), "b200");
	ck_assert_sstr_eq(joined(order(s->t, tier("urgent"))), "b200,h100");
	// The job's own bounds, and a workload's throughput: for inference the
	// h100 (2.5) beats the a100 by more, value still h100 first.
	Need n = tier("value");
	n.min_mem = 100ull << 30;
	ck_assert_sstr_eq(joined(order(s->t, n)), "b200");
	n = tier("fast");
	n.min_class = "h100";
	ck_assert_sstr_eq(joined(order(s->t, n)), "b200,h100");
	// Bounds no class meets: nothing eligible, and each class says why.
	n = tier("value");
	n.min_mem = 1ull << 40;
	auto none = plan_tier(s->t, n, 0);
	ck_assert(none.has_value());
	ck_assert_int_eq(none->eligible, 0);
	std::string text = describe_plan(*none);
	ck_assert_msg(text.find("a100 excluded: 80 GiB per GPU, under 1024 GiB") != std::string::npos, "%s",
		      text.c_str());
}
END_TEST

START_TEST(bad_needs_list_the_names)
{
	auto s = read(site);
	ck_assert(s.has_value());
	auto st = check_need(s->t, tier("cheapest"));
	ck_assert(!st);
	ck_assert_msg(st.error().str() ==
			      "--gpu-tier: unknown tier 'cheapest': this site has value, balanced, fast, big, urgent",
		      "%s", st.error().str().c_str());
	Need n;
	n.min_class = "v100";
	st = check_need(s->t, n);
	ck_assert(!st);
	ck_assert_sstr_eq(st.error().str(), "--gpu-min-class: unknown class 'v100': this site has a100, h100, b200");
	TierTable empty;
	st = check_need(empty, tier("value"));
	ck_assert(!st);
	ck_assert(st.error().str().find("defines no GPU classes") != std::string::npos);
}
END_TEST

// A run's price across the off-peak boundary, by hand; the minutes to the
// next off-peak start; a value job's budget for waiting.
START_TEST(prices_over_a_run_and_the_wait_budget)
{
	auto s = read(site);
	ck_assert(s.has_value());
	const PerfClass &h = *s->t.find_class("h100"), &b = *s->t.find_class("b200");
	// 4 h from 20:00: 2 h at 1.90, 2 h at 1.00 off-peak (22:00-06:00).
	ck_assert(std::fabs(s->t.price_over(h, 20 * 60, 240) - 1.45) < 1e-9);
	// A whole day from noon: 16 h at 1.90, 8 h at 1.00.
	ck_assert(std::fabs(s->t.price_over(h, 12 * 60, 1440) - (16 * 1.90 + 8 * 1.00) / 24) < 1e-9);
	// 30 min from 05:45: 15 min off-peak, 15 min not.
	ck_assert(std::fabs(s->t.price_over(h, 5 * 60 + 45, 30) - 1.45) < 1e-9);
	// No run length: the price of the minute; no off-peak price: the price.
	ck_assert(std::fabs(s->t.price_over(h, 23 * 60, 0) - 1.00) < 1e-12);
	ck_assert(std::fabs(s->t.price_over(b, 20 * 60, 240) - 4.50) < 1e-12);
	ck_assert_int_eq(s->t.minutes_to_offpeak(20 * 60), 120);
	ck_assert_int_eq(s->t.minutes_to_offpeak(23 * 60), 0);
	ck_assert_int_eq(s->t.minutes_to_offpeak(5 * 60 + 59), 0);
	ck_assert_int_eq(s->t.minutes_to_offpeak(6 * 60), 16 * 60);
	TierTable flat;
	ck_assert_int_eq(flat.minutes_to_offpeak(20 * 60), -1);
	// A quarter of a 1 h limit, less what it waited; a deadline's slack caps it.
	ck_assert_int_eq(wait_budget(0.25, 3600, 0, no_deadline), 900);
	ck_assert_int_eq(wait_budget(0.25, 3600, 600, no_deadline), 300);
	ck_assert_int_eq(wait_budget(0.25, 3600, 1000, no_deadline), 0);
	ck_assert_int_eq(wait_budget(0.25, 3600, 0, 120), 120);
	ck_assert_int_eq(wait_budget(0.25, 3600, 0, -50), 0); // already late
	// No limit: the deadline alone; neither: no wait. A share of 0: never.
	ck_assert_int_eq(wait_budget(0.25, 0, 0, 500), 500);
	ck_assert_int_eq(wait_budget(0.25, 0, 0, no_deadline), 0);
	ck_assert_int_eq(wait_budget(0, 3600, 0, no_deadline), 0);
}
END_TEST

// The weights for tiers read and written; the SPANK environment's flag.
START_TEST(tier_weights_and_the_mixed_flag)
{
	auto w = parse_weights("value_wait=0.5 balance_time=2", "SelectTypeParameters");
	ck_assert_msg(w.has_value(), "%s", w ? "" : w.error().str().c_str());
	ck_assert(w->value_wait == 0.5 && w->balance_time == 2);
	ck_assert_msg(format_weights(*w).find("value_wait=0.5") != std::string::npos, "%s", format_weights(*w).c_str());
	auto again = parse_weights(format_weights(*w), "x");
	ck_assert(again.has_value() && again->value_wait == 0.5 && again->balance_time == 2);
	ck_assert(!parse_weights("value_wait=-1", "x").has_value());
	// Slurm sets an option without argument with no value, or "(null)".
	for (const char *e :
	     {"_SLURM_SPANK_OPTION_loom_place_gpu_mixed=", "_SLURM_SPANK_OPTION_loom_place_gpu_mixed=(null)"}) {
		std::string tier = "_SLURM_SPANK_OPTION_loom_place_gpu_tier=value";
		char *env[] = {const_cast<char *>(tier.c_str()), const_cast<char *>(e)};
		auto h = plugin::hints_from_env(env, 2);
		ck_assert_msg(h.has_value(), "%s", h ? "" : h.error().str().c_str());
		ck_assert(h->need.mixed);
		ck_assert_sstr_eq(h->need.tier, "value");
	}
	std::string tier = "_SLURM_SPANK_OPTION_loom_place_gpu_tier=value";
	char *env[] = {const_cast<char *>(tier.c_str())};
	auto h = plugin::hints_from_env(env, 1);
	ck_assert(h.has_value() && !h->need.mixed);
}
END_TEST

namespace {

Suite *make_suite()
{
	Suite *s = suite_create("tiers");
	TCase *t = tcase_create("tiers");
	tcase_add_test(t, table_from_the_file);
	tcase_add_test(t, bad_tables_name_the_key);
	tcase_add_test(t, each_tier_orders_by_its_objective);
	tcase_add_test(t, bad_needs_list_the_names);
	tcase_add_test(t, prices_over_a_run_and_the_wait_budget);
	tcase_add_test(t, tier_weights_and_the_mixed_flag);
	suite_add_tcase(s, t);
	suite_add_tcase(s, tier_engine_tests());
	return s;
}

} // namespace

LOOM_CHECK_MAIN(make_suite)
