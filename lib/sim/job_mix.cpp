// loom sim: the generated large-model job mix (jobs.hpp).
#include "lib/sim/jobs.hpp"

#include "lib/util/config.hpp"
#include "lib/util/log.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace loom::sim {

namespace {

status range(std::string_view v, int64_t &lo, int64_t &hi, int64_t min, int64_t max)
{
	std::string s(v);
	auto dash = s.find('-');
	auto a = parse_int(s.substr(0, dash), min, max);
	auto b = dash == std::string::npos ? a : parse_int(s.substr(dash + 1), min, max);
	if (!a || !b || *b < *a)
		return unexpected(strprintf("expected A-B with %lld <= A <= B <= %lld", static_cast<long long>(min),
					    static_cast<long long>(max)));
	lo = *a;
	hi = *b;
	return {};
}

} // namespace

expected<MixGen> parse_mix_gen(std::string_view spec, const std::string &where)
{
	MixGen g;
	int64_t seed = 1;
	ConfigSchema s;
	s.integer("days", &g.days, 1, 3650, "arrival window in days")
		.real("load", &g.load, 0.01, 10, "offered load")
		.real("large_share", &g.large_share, 0, 1, "share of GPU-hours in large jobs")
		.add("large_gpus", "large job sizes A-B",
		     [&](std::string_view v) { return range(v, g.large_min, g.large_max, 1, 1 << 20); })
		.add("large_hours", "large job run times A-B",
		     [&](std::string_view v) {
			     int64_t a = 0, b = 0;
			     auto st = range(v, a, b, 1, 24 * 365);
			     g.large_hours_min = static_cast<double>(a);
			     g.large_hours_max = static_cast<double>(b);
			     return st;
		     })
		.add("small_gpus", "small job sizes A-B",
		     [&](std::string_view v) { return range(v, g.small_min, g.small_max, 1, 1 << 20); })
		.real("small_hours", &g.small_hours, 0.01, 24 * 30, "small jobs' median run time")
		.integer("ckpt_min_gpus", &g.ckpt_min_gpus, 1, 1 << 20, "smallest checkpointing job")
		.integer("seed", &seed, 0, INT64_MAX, "random seed")
		.add("tiers", "share of the jobs per GPU tier (value:40,balanced:30,fast:30)",
		     [&](std::string_view v) -> status {
			     std::string text(v);
			     size_t b = 0;
			     for (;;) {
				     size_t e = text.find(',', b);
				     std::string item =
					     text.substr(b, e == std::string::npos ? std::string::npos : e - b);
				     size_t colon = item.find(':');
				     auto share = colon == std::string::npos
							  ? expected<double>(unexpected("no share"))
							  : parse_real(item.substr(colon + 1), 0, 1e6);
				     if (colon == 0 || !share)
					     return unexpected("'" + item + "': expected TIER:SHARE");
				     g.tiers.emplace_back(item.substr(0, colon), *share);
				     if (e == std::string::npos)
					     break;
				     b = e + 1;
			     }
			     return ok();
		     });
	if (auto st = s.parse_words(spec, where); !st)
		return unexpected(st.error());
	g.seed = static_cast<uint64_t>(seed);
	return g;
}

std::string format_mix_gen(const MixGen &g)
{
	return strprintf("days=%lld load=%g large_share=%g large_gpus=%lld-%lld large_hours=%g-%g small_gpus=%lld-%lld "
			 "small_hours=%g ckpt_min_gpus=%lld seed=%llu",
			 static_cast<long long>(g.days), g.load, g.large_share, static_cast<long long>(g.large_min),
			 static_cast<long long>(g.large_max), g.large_hours_min, g.large_hours_max,
			 static_cast<long long>(g.small_min), static_cast<long long>(g.small_max), g.small_hours,
			 static_cast<long long>(g.ckpt_min_gpus), static_cast<unsigned long long>(g.seed)) +
	       [&] {
		       std::string t;
		       for (const auto &[name, share] : g.tiers)
			       t += strprintf("%s%s:%g", t.empty() ? " tiers=" : ",", name.c_str(), share);
		       return t;
	       }();
}

std::vector<Job> generate_mix(const MixGen &g, int64_t total_gpus, int gpus_per_node)
{
	std::mt19937_64 rng(g.seed);
	std::uniform_real_distribution<double> u(0, 1);
	double window = static_cast<double>(g.days) * 86400;
	double offered = g.load * static_cast<double>(total_gpus) * window / 3600; // GPU-hours
	TraceFill f;
	f.gpus_per_node = gpus_per_node;
	f.ckpt_min_gpus = static_cast<int>(g.ckpt_min_gpus);
	struct Item {
		int64_t t, gpus, run;
	};
	std::vector<Item> items;
	// Large jobs: powers of two in range, at most half the cluster.
	int64_t cap = std::max<int64_t>(1, total_gpus / 2);
	std::vector<int64_t> sizes;
	for (int64_t p = 1; p <= g.large_max && p <= (int64_t(1) << 40); p *= 2)
		if (p >= g.large_min && p <= cap)
			sizes.push_back(p);
	if (sizes.empty()) { // the range does not fit: the largest power of two that does
		int64_t p = 1;
		while (p * 2 <= cap)
			p *= 2;
		sizes.push_back(p);
	}
	double large_budget = g.large_share * offered;
	while (!sizes.empty() && large_budget > 0) {
		int64_t gpus = sizes[static_cast<size_t>(u(rng) * static_cast<double>(sizes.size())) % sizes.size()];
		double hours = g.large_hours_min + u(rng) * (g.large_hours_max - g.large_hours_min);
		items.push_back({static_cast<int64_t>(u(rng) * window), gpus, static_cast<int64_t>(hours * 3600)});
		large_budget -= static_cast<double>(gpus) * hours;
	}
	double small_budget = (1 - g.large_share) * offered;
	std::lognormal_distribution<double> run(std::log(g.small_hours), 1.2);
	double lo = std::log(static_cast<double>(g.small_min)), hi = std::log(static_cast<double>(g.small_max) + 0.999);
	while (small_budget > 0) {
		int64_t gpus = static_cast<int64_t>(std::exp(lo + u(rng) * (hi - lo)));
		gpus = std::clamp<int64_t>(gpus, g.small_min, g.small_max);
		if (gpus > gpus_per_node)
			gpus = (gpus + gpus_per_node - 1) / gpus_per_node * gpus_per_node;
		else if (gpus > 4)
			gpus = gpus_per_node; // 1, 2, 4 or a whole node, as people ask
		else if (gpus == 3)
			gpus = 4;
		double hours = std::min(run(rng), 24.0 * 7);
		items.push_back({static_cast<int64_t>(u(rng) * window), gpus,
				 std::max<int64_t>(60, static_cast<int64_t>(hours * 3600))});
		small_budget -= static_cast<double>(gpus) * hours;
	}
	std::stable_sort(items.begin(), items.end(), [](const Item &a, const Item &b) { return a.t < b.t; });
	std::vector<Job> out;
	// Tiers from a stream of their own: the same jobs with or without them.
	std::mt19937_64 trng(g.seed ^ 0x7469657273ull);
	double tier_sum = 0;
	for (const auto &t : g.tiers)
		tier_sum += t.second;
	for (const Item &it : items) {
		Job j;
		j.id = static_cast<uint32_t>(out.size() + 1);
		j.submit_s = it.t;
		fill_job(j, it.gpus, it.run, f);
		j.source = "generated job " + std::to_string(j.id);
		if (tier_sum > 0) {
			double x = u(trng) * tier_sum;
			for (const auto &[name, share] : g.tiers) {
				j.need.tier = name;
				if ((x -= share) < 0)
					break;
			}
		}
		out.push_back(std::move(j));
	}
	return out;
}

} // namespace loom::sim
