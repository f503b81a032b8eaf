// bench_health_predictor: how early the predictor warns and how often it is
// wrong, on many randomised sequences (fixed seed) of the same families as
// tests/health/seq-*.tsv but with random rates, onsets and noise. Failing
// families: temperature ramps (fan failure, 0.3-1.5 C/min), slow creep
// (0.1-0.3 C/min), correctable-ECC storms (5-20%/min), degrading links
// (5-50 errors/min). Healthy families: noise around 55-80 C (+-0.5..4 C),
// load steps from idle to 60-82 C, slow ECC growth, flat counters.
// One check per minute; defaults history_len=12, predict_horizon=30 min.
//
//   bench_health_predictor [SEQUENCES_PER_FAMILY]
#include "lib/health/predictor.hpp"
#include "lib/util/config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace loom::health;

namespace {

using Series = std::vector<std::pair<int64_t, double>>;

struct Family {
	const char *name;
	bool failing;
	double threshold;
	std::function<Series(std::mt19937 &)> make;
};

double uni(std::mt19937 &r, double a, double b) { return std::uniform_real_distribution<double>(a, b)(r); }

Series build(int n, const std::function<double(int)> &f)
{
	Series s;
	for (int i = 0; i < n; i++)
		s.emplace_back(60 * i, f(i));
	return s;
}

// The family generators, each seeded from the one random stream.
std::vector<Family> families()
{
	return {
		{"fan-failure", true, 84,
		 [](std::mt19937 &r) {
			 double base = uni(r, 55, 70), rate = uni(r, 0.3, 1.5), noise = uni(r, 0.3, 2);
			 int onset = static_cast<int>(uni(r, 15, 60));
			 std::mt19937 n(r());
			 return build(onset + static_cast<int>((95 - base) / rate) + 5, [=, &n](int i) mutable {
				 return base + uni(n, -noise, noise) + (i > onset ? rate * (i - onset) : 0);
			 });
		 }},
		{"thermal-creep", true, 84,
		 [](std::mt19937 &r) {
			 double base = uni(r, 60, 72), rate = uni(r, 0.1, 0.3), noise = uni(r, 0.2, 1);
			 std::mt19937 n(r());
			 return build(static_cast<int>((90 - base) / rate),
				      [=, &n](int i) mutable { return base + rate * i + uni(n, -noise, noise); });
		 }},
		{"ecc-storm", true, 2e7,
		 [](std::mt19937 &r) {
			 double start = uni(r, 1e5, 5e6), g = uni(r, 1.05, 1.20);
			 return build(static_cast<int>(std::log(3e7 / start) / std::log(g)) + 2,
				      [=](int i) { return std::floor(start * std::pow(g, i)); });
		 }},
		{"ib-degrading", true, 1000,
		 [](std::mt19937 &r) {
			 double base = uni(r, 0, 200), rate = uni(r, 5, 50);
			 std::mt19937 n(r());
			 return build(static_cast<int>((1100 - base) / rate) + 2, [=, &n](int i) mutable {
				 return std::floor(base + rate * i + uni(n, -rate / 4, rate / 4));
			 });
		 }},
		{"healthy-noise", false, 84,
		 [](std::mt19937 &r) {
			 double base = uni(r, 55, 78), noise = uni(r, 0.5, 4);
			 std::mt19937 n(r());
			 return build(240, [=, &n](int i) mutable {
				 (void)i;
				 return std::min(83.0, base + uni(n, -noise, noise));
			 });
		 }},
		{"healthy-load-step", false, 84,
		 [](std::mt19937 &r) {
			 double idle = uni(r, 30, 45), busy = uni(r, 60, 82), tau = uni(r, 0.3, 0.8),
				noise = uni(r, 0.3, 1.5);
			 int at = static_cast<int>(uni(r, 5, 60));
			 std::mt19937 n(r());
			 return build(180, [=, &n](int i) mutable {
				 double v = i < at ? idle : busy - (busy - idle) * std::pow(tau, i - at);
				 return std::min(83.5, v + uni(n, -noise, noise));
			 });
		 }},
		{"healthy-ecc-slow", false, 2e7,
		 [](std::mt19937 &r) {
			 double start = uni(r, 0, 1e6), rate = uni(r, 0, 1000);
			 return build(240, [=](int i) { return std::floor(start + rate * i); });
		 }},
		{"healthy-ib-flat", false, 1000,
		 [](std::mt19937 &r) {
			 double v = std::floor(uni(r, 0, 500));
			 return build(240, [=](int) { return v; });
		 }},
	};
}

// -1: go on; otherwise the exit code, after the usage on stderr.
int parse_count(int argc, char **argv, int &per)
{
	if (argc > 2) {
		std::fprintf(stderr, "usage: bench_health_predictor [COUNT]   (default 500)\n");
		return 2;
	}
	if (argc == 2) {
		auto v = loom::parse_int(argv[1], 1, 100000);
		if (!v) {
			std::fprintf(stderr, "usage: bench_health_predictor [COUNT]: '%s': %s\n", argv[1],
				     v.error().message.c_str());
			return 2;
		}
		per = static_cast<int>(*v);
	}
	return -1;
}

// What the healthy families add up to.
struct Healthy {
	long checks = 0, warnings = 0, seqs_warned = 0, seqs = 0;
};

// One family's line: how many failing sequences were warned and how early,
// or how many healthy ones were warned at all.
void run_family(const Family &f, int per, std::mt19937 &rng, Healthy &h)
{
	std::vector<int64_t> leads;
	int warned = 0, seq_false = 0;
	long checks = 0, warns = 0;
	for (int k = 0; k < per; k++) {
		Series s = f.make(rng);
		ReplayResult r = replay_series("m", s, f.threshold, 12, 1800);
		if (f.failing) {
			if (r.lead_s() > 0) {
				warned++;
				leads.push_back(r.lead_s());
			}
		} else {
			checks += static_cast<long>(s.size());
			warns += r.warnings;
			seq_false += r.warnings > 0;
		}
	}
	if (f.failing) {
		std::sort(leads.begin(), leads.end());
		auto at = [&](double q) {
			return leads.empty() ? 0.0 : leads[static_cast<size_t>(q * (leads.size() - 1))] / 60.0;
		};
		std::printf("%-18s %7.1f%% %8.1fmin %8.1fmin %8.1fmin %12s\n", f.name, 100.0 * warned / per, at(0.1),
			    at(0.5), at(0.0), "-");
	} else {
		h.checks += checks;
		h.warnings += warns;
		h.seqs_warned += seq_false;
		h.seqs += per;
		std::printf("%-18s %8s %10s %10s %10s %5.2f%% seqs\n", f.name, "-", "-", "-", "-",
			    100.0 * seq_false / per);
	}
}

// Load steps by where they settle: close to the threshold the predictor cannot
// tell a warming GPU that will stop at 82 C from one that will not.
void load_steps(int per)
{
	std::mt19937 r2(7);
	for (auto [lo, hi] : {std::pair{60.0, 76.0}, std::pair{76.0, 82.0}}) {
		int warned = 0;
		for (int k = 0; k < per; k++) {
			double idle = uni(r2, 30, 45), busy = uni(r2, lo, hi), tau = uni(r2, 0.3, 0.8),
			       noise = uni(r2, 0.3, 1.5);
			int at = static_cast<int>(uni(r2, 5, 60));
			std::mt19937 n(r2());
			Series s = build(180, [=, &n](int i) mutable {
				double v = i < at ? idle : busy - (busy - idle) * std::pow(tau, i - at);
				return std::min(83.5, v + uni(n, -noise, noise));
			});
			warned += replay_series("m", s, 84, 12, 1800).warnings > 0;
		}
		std::printf("  load steps settling at %.0f-%.0f C: %.1f%% warned\n", lo, hi, 100.0 * warned / per);
	}
}

} // namespace

int main(int argc, char **argv)
{
	int per = 500;
	if (int rc = parse_count(argc, argv, per); rc >= 0)
		return rc;
	std::mt19937 rng(20261130);
	std::vector<Family> fams = families();
	std::printf("bench_health_predictor: %d sequences per family, 1 check/min, history 12, horizon 30 min\n", per);
	std::printf("%-18s %8s %10s %10s %10s %12s\n", "family", "warned", "lead_p10", "lead_med", "lead_min",
		    "false_alarm");
	Healthy h;
	for (const auto &f : fams)
		run_family(f, per, rng, h);
	double node_days = static_cast<double>(h.checks) / (24 * 60);
	load_steps(per);
	std::printf("healthy overall: %ld of %ld sequences warned at least once; %ld warning checks in %ld checks "
		    "(%.2f per node-day)\n",
		    h.seqs_warned, h.seqs, h.warnings, h.checks, h.warnings / node_days);
	return 0;
}
