// Benchmark of the placement engine against Slurm topology/tree's greedy
// algorithm (the baseline) on the same states and requests.
//
// Fabrics: 3-level fat trees (spine, pods, leaves of 16 nodes, 8 GPUs per
// node) and NVL72-style ones (leaves of 18 nodes, two NVLink domains of 9
// nodes x 8 GPUs each), at about 1k, 10k and 100k GPUs. States: filled at
// random to 30/70/90% of the GPUs (whole-node runs and partial nodes, 1% down,
// 1% suspect). Requests: a mix of sub-node jobs, whole-node gangs of 1 to 64
// nodes, heavy gangs and total-GPU requests. Each decision is timed alone;
// the state is not changed, so both placers see exactly the same inputs.
//
// Times are the least of three runs of each decision (p50/p99 over
// decisions), so that other load on the machine does not count.
//
// Quality per decision: leaves spanned, idle nodes a sub-node job starts on,
// idle leaves broken, and the idle (whole) nodes left free afterwards. A
// second experiment streams small jobs into an empty cluster through each
// placer and counts the whole nodes and leaves left for gangs.
//
//   bench_place [--decisions N] [--seed S] [--quick]
#include "lib/place/engine.hpp"
#include "lib/place/synthetic.hpp"
#include "lib/topo/build.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace loom;
using loom::place::Candidate;
using loom::place::Decision;
using loom::place::FatTree;
using loom::place::Request;
using loom::place::State;
using loom::place::Weights;

namespace {

struct Shape {
	const char *name;
	FatTree tree;
};

std::vector<Shape> shapes(bool quick)
{
	auto fat = [](int pods, int leaves) {
		FatTree t;
		t.pods = pods;
		t.leaves_per_pod = leaves;
		t.nodes_per_leaf = 16;
		return t;
	};
	auto nvl = [](int pods, int leaves) {
		FatTree t;
		t.pods = pods;
		t.leaves_per_pod = leaves;
		t.nodes_per_leaf = 18;
		t.nvlink_nodes = 9;
		return t;
	};
	std::vector<Shape> v = {
		{"fat-1k", fat(2, 4)}, {"nvl-1k", nvl(2, 4)}, {"fat-10k", fat(5, 16)}, {"nvl-10k", nvl(5, 14)}};
	if (!quick) {
		v.push_back({"fat-100k", fat(50, 16)});
		v.push_back({"nvl-100k", nvl(44, 16)});
	}
	return v;
}

// Fill to the occupancy: runs of whole nodes (gangs placed long ago) and
// partially used nodes, at random places; some nodes down or suspect.
void fill(State &s, double occupancy, std::mt19937_64 &rng)
{
	size_t n = s.node_count();
	std::uniform_int_distribution<size_t> pick(0, n - 1);
	std::uniform_real_distribution<double> u(0, 1);
	for (size_t i = 0; i < n / 100; i++) {
		(void)s.set_available(static_cast<place::Index>(pick(rng)), false);
		(void)s.set_health(static_cast<place::Index>(pick(rng)), 0.5, true);
	}
	int64_t target = static_cast<int64_t>(occupancy * static_cast<double>(s.total().total_gpus));
	auto used = [&] { return s.total().total_gpus - s.total().free_gpus; };
	while (used() < target) {
		place::Index x = static_cast<place::Index>(pick(rng));
		if (u(rng) < 0.6) {
			int run = 1 << std::uniform_int_distribution<int>(0, 4)(rng);
			for (int k = 0; k < run && static_cast<size_t>(x + k) < n && used() < target; k++)
				if (s.idle(x + k))
					(void)s.allocate(x + k, s.free_gpus(x + k), 0);
		} else if (s.free_gpus(x) > 0) {
			int g = std::uniform_int_distribution<int>(1, s.free_gpus(x))(rng);
			(void)s.allocate(x, g, 0);
		}
	}
}

std::vector<Request> request_mix()
{
	std::vector<std::string> text = {
		"gpus_per_node=1",          "gpus_per_node=2",          "gpus_per_node=4",
		"gpus_per_node=1",          "nodes=1 gpus_per_node=8",  "nodes=2 gpus_per_node=8",
		"nodes=4 gpus_per_node=8",  "nodes=8 gpus_per_node=8",  "nodes=16 gpus_per_node=8 comm=heavy",
		"nodes=32 gpus_per_node=8", "nodes=64 gpus_per_node=8", "nodes=4 gpus_per_node=8 comm=heavy",
		"gpus=12 nodes=1-2",        "nodes=2 gpus_per_node=4",  "nodes=9 gpus_per_node=8 comm=heavy",
		"nodes=3 exclusive=yes"};
	std::vector<Request> out;
	for (const auto &t : text)
		out.push_back(*place::parse_request(t));
	return out;
}

struct Tally {
	std::vector<double> us;
	size_t placed = 0;
	double leaves = 0, broken_nodes = 0, broken_leaves = 0, idle_left = 0;
	void add(const Decision &d, const State &s)
	{
		if (!d.placed())
			return;
		const Candidate &c = d.candidates[0];
		placed++;
		leaves += c.score.leaves;
		broken_nodes += c.score.idle_nodes_broken;
		broken_leaves += c.score.idle_leaves_broken;
		int idle_used = 0;
		for (place::Index n : c.nodes)
			idle_used += s.idle(n);
		idle_left += s.total().idle - idle_used;
	}
	double pct(double p)
	{
		std::sort(us.begin(), us.end());
		return us.empty()
			       ? 0
			       : us[std::min(us.size() - 1, static_cast<size_t>(p * static_cast<double>(us.size())))];
	}
	double mean(double v) const { return placed ? v / static_cast<double>(placed) : 0; }
};

double now_us()
{
	return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A stream of jobs with departures through one placer, the cluster kept near
// 80% busy: small jobs (1-4 GPUs) and gangs of 2-16 whole nodes. Counts the
// gangs refused although enough GPUs were free (lost to fragmentation) and
// the leaves each placed gang spans.
struct StreamResult {
	int gangs = 0, refused = 0, fragmented = 0;
	double leaves = 0, nvlink = 0;
};

StreamResult stream(const topo::Cluster &c, bool baseline, uint64_t seed, int steps)
{
	State s(c);
	std::mt19937_64 rng(seed);
	std::uniform_real_distribution<double> u(0, 1);
	Weights w;
	struct Job {
		Request r;
		Candidate c;
	};
	std::vector<Job> running;
	StreamResult out;
	for (int i = 0; i < steps; i++) {
		while (!running.empty() && (s.total().occupancy() > 0.8 || u(rng) < 0.3)) {
			size_t k = std::uniform_int_distribution<size_t>(0, running.size() - 1)(rng);
			for (size_t j = 0; j < running[k].c.nodes.size(); j++)
				(void)s.release(running[k].c.nodes[j], running[k].c.gpus[j], 0);
			running[k] = std::move(running.back());
			running.pop_back();
			if (s.total().occupancy() < 0.75)
				break;
		}
		Request r;
		bool gang = u(rng) < 0.35;
		if (gang) {
			r.min_nodes = 1 << std::uniform_int_distribution<int>(1, 4)(rng);
			r.gpus_per_node = 8;
			r.comm = place::Comm::heavy;
		} else {
			r.gpus_per_node = 1 << std::uniform_int_distribution<int>(0, 2)(rng);
		}
		auto d = baseline ? place::place_baseline(s, r, nullptr, w) : place::place(s, r, nullptr, w, 1);
		if (!d || !d->placed()) {
			if (gang) {
				out.gangs++;
				out.refused++;
				if (s.total().free_gpus >= int64_t(r.min_nodes) * r.gpus_per_node)
					out.fragmented++;
			}
			continue;
		}
		if (!place::commit(s, r, d->candidates[0]))
			continue;
		if (gang) {
			out.gangs++;
			out.leaves += d->candidates[0].score.leaves;
			out.nvlink += d->candidates[0].score.nvlink_domains;
		}
		running.push_back(Job{r, d->candidates[0]});
	}
	return out;
}

} // namespace

int main(int argc, char **argv)
{
	int decisions = 2000;
	uint64_t seed = 42;
	bool quick = false;
	for (int i = 1; i < argc; i++) {
		if (!std::strcmp(argv[i], "--decisions") && i + 1 < argc)
			decisions = std::atoi(argv[++i]);
		else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = std::strtoull(argv[++i], nullptr, 10);
		else if (!std::strcmp(argv[i], "--quick"))
			quick = true;
		else {
			std::fprintf(stderr, "usage: bench_place [--decisions N] [--seed S] [--quick]\n");
			return 2;
		}
	}
	auto reqs = request_mix();
	Weights w;
	std::printf("%-9s %6s %4s | %-8s %8s %8s %7s %6s %7s %7s %9s\n", "fabric", "GPUs", "occ", "placer", "p50 us",
		    "p99 us", "placed", "leaves", "idleN-", "idleL-", "idle left");
	for (const Shape &sh : shapes(quick)) {
		auto c = topo::build_cluster(place::fat_tree_spec(sh.tree));
		if (!c) {
			std::fprintf(stderr, "bench_place: %s\n", c.error().str().c_str());
			return 1;
		}
		for (double occ : {0.3, 0.7, 0.9}) {
			std::mt19937_64 rng(seed);
			State s(*c);
			fill(s, occ, rng);
			Tally eng, base;
			for (int i = 0; i < decisions; i++) {
				const Request &r = reqs[static_cast<size_t>(i) % reqs.size()];
				// The least of three runs per decision: the machine's noise out,
				// the decision's own cost in.
				double te = 1e18, tb = 1e18;
				expected<Decision> d = Decision{}, b = Decision{};
				for (int rep = 0; rep < 3; rep++) {
					double t0 = now_us();
					d = place::place(s, r, nullptr, w, 2);
					double t1 = now_us();
					b = place::place_baseline(s, r, nullptr, w);
					double t2 = now_us();
					te = std::min(te, t1 - t0);
					tb = std::min(tb, t2 - t1);
				}
				if (!d || !b) {
					std::fprintf(stderr, "bench_place: %s\n",
						     (!d ? d.error() : b.error()).str().c_str());
					return 1;
				}
				eng.us.push_back(te);
				base.us.push_back(tb);
				if (static_cast<size_t>(i) < reqs.size()) { // quality once per request
					eng.add(*d, s);
					base.add(*b, s);
				}
			}
			for (auto [name, t] : {std::pair<const char *, Tally *>{"engine", &eng}, {"baseline", &base}})
				std::printf(
					"%-9s %6lld %3.0f%% | %-8s %8.1f %8.1f %3zu/%-3zu %6.2f %7.2f %7.2f %9.1f\n",
					sh.name, static_cast<long long>(c->total_gpus()), occ * 100, name, t->pct(0.5),
					t->pct(0.99), t->placed, reqs.size(), t->mean(t->leaves),
					t->mean(t->broken_nodes), t->mean(t->broken_leaves), t->mean(t->idle_left));
		}
		int steps = quick ? 2000 : 5000;
		StreamResult e = stream(*c, false, seed, steps), b = stream(*c, true, seed, steps);
		auto per_gang = [](const StreamResult &x, double v) {
			return x.gangs > x.refused ? v / (x.gangs - x.refused) : 0.0;
		};
		std::printf("%-9s stream of %d jobs at ~75%% busy: gangs refused with enough GPUs free: engine %d/%d, "
			    "baseline %d/%d; per placed gang: leaves engine %.2f baseline %.2f, NVLink domains engine "
			    "%.2f baseline %.2f\n",
			    sh.name, steps, e.fragmented, e.gangs, b.fragmented, b.gangs, per_gang(e, e.leaves),
			    per_gang(b, b.leaves), per_gang(e, e.nvlink), per_gang(b, b.nvlink));
	}
	std::printf("leaves: mean leaves spanned; idleN-: idle nodes started by sub-node jobs; idleL-: idle leaves "
		    "taken in part; idle left: idle nodes left after the placement (means over placed requests)\n");
	return 0;
}
