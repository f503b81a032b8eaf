// GPU classes, prices and tiers (lib/place/tiers.hpp): the loom-topo.conf
// keys and their errors, each tier's order of classes, off-peak prices, the
// bounds, and the engine placing a tier on the class its objective picks.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "lib/place/engine.hpp"
#include "lib/place/tiers.hpp"
#include "lib/place/weights.hpp"
#include "plugins/common/place_hints.hpp"

#include "tests/unit/check_main.hpp"
#include "tests/unit/place_fixture.hpp"

using namespace loom;
using namespace loom::place;

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

struct Site {
	TierTable t;
	std::vector<std::string> classes;
};

expected<Site> read(const std::string &text)
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
		ck_assert_msg(s.error().str().find("loom-topo.conf") != std::string::npos, "%s: no file in '%s'", c.text,
			      s.error().str().c_str());
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
	ck_assert_msg(text.find("a100 excluded: 80 GiB per GPU, under 1024 GiB") != std::string::npos, "%s", text.c_str());
}
END_TEST

START_TEST(bad_needs_list_the_names)
{
	auto s = read(site);
	ck_assert(s.has_value());
	auto st = check_need(s->t, tier("cheapest"));
	ck_assert(!st);
	ck_assert_msg(st.error().str() == "--gpu-tier: unknown tier 'cheapest': this site has value, balanced, fast, big, urgent",
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
	ck_assert_msg(d->tier.find("tier value") != std::string::npos && d->tier.find("chose a100") != std::string::npos,
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
	auto round = parse_request(format_request(*parse_request("nodes=2 tier=big min_class=h100 gpu_mem=80G workload=infer")));
	ck_assert(round.has_value());
	ck_assert_sstr_eq(format_request(*round), "nodes=2 tier=big min_class=h100 gpu_mem=80G workload=infer");
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
	auto round = parse_request(format_request(*parse_request("nodes=9 tier=value mixed=yes limit=3600 may_wait=900")));
	ck_assert(round.has_value());
	ck_assert_sstr_eq(format_request(*round), "nodes=9 tier=value mixed=yes limit=3600 may_wait=900");
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
	for (const char *e : {"_SLURM_SPANK_OPTION_loom_place_gpu_mixed=",
			      "_SLURM_SPANK_OPTION_loom_place_gpu_mixed=(null)"}) {
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
	tcase_add_test(t, engine_places_a_tier_on_its_class);
	tcase_add_test(t, prices_over_a_run_and_the_wait_budget);
	tcase_add_test(t, value_waits_within_its_budget);
	tcase_add_test(t, mixed_gang_only_when_asked);
	tcase_add_test(t, tier_weights_and_the_mixed_flag);
	suite_add_tcase(s, t);
	return s;
}

} // namespace

LOOM_CHECK_MAIN(make_suite)
