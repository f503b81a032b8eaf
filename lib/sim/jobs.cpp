// loom sim: trace readers and the generated job mix.
#include "lib/sim/jobs.hpp"

#include "lib/util/config.hpp"
#include "lib/util/log.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <random>

namespace loom::sim {

namespace {

std::vector<std::string> csv_fields(const std::string &line)
{
	std::vector<std::string> out;
	size_t b = 0;
	for (;;) {
		size_t e = line.find(',', b);
		out.push_back(line.substr(b, e == std::string::npos ? std::string::npos : e - b));
		if (e == std::string::npos)
			break;
		b = e + 1;
	}
	if (!out.empty() && !out.back().empty() && out.back().back() == '\r')
		out.back().pop_back();
	return out;
}

bool to_double(const std::string &s, double &out)
{
	if (s.empty())
		return false;
	char *end = nullptr;
	out = std::strtod(s.c_str(), &end);
	return *end == 0 && std::isfinite(out);
}

// "2017-10-09 07:01:55" as UTC seconds.
bool to_time(const std::string &s, int64_t &out)
{
	std::tm tm{};
	int n = 0;
	if (std::sscanf(s.c_str(), "%4d-%2d-%2d %2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
			&tm.tm_sec, &n) != 6 ||
	    static_cast<size_t>(n) != s.size())
		return false;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	out = static_cast<int64_t>(timegm(&tm));
	return true;
}

struct Raw {
	int64_t t;
	int64_t gpus;
	int64_t run;
	std::string cls;
	std::string where;
};

// Sort by arrival, keep the window, scale, number, fill.
std::vector<Job> finish(std::vector<Raw> raw, const TraceFill &f)
{
	std::stable_sort(raw.begin(), raw.end(), [](const Raw &a, const Raw &b) { return a.t < b.t; });
	std::vector<Job> out;
	if (raw.empty())
		return out;
	int64_t t0 = raw.front().t + f.skip_days * 86400;
	for (const Raw &r : raw) {
		if (r.t < t0)
			continue;
		int64_t rel = r.t - t0;
		if (f.days > 0 && rel >= f.days * 86400)
			break;
		Job j;
		j.id = static_cast<uint32_t>(out.size() + 1);
		j.submit_s = static_cast<int64_t>(std::floor(static_cast<double>(rel) / f.time_scale));
		int64_t g = std::max<int64_t>(1, std::llround(static_cast<double>(r.gpus) * f.size_scale));
		fill_job(j, g, r.run, f);
		j.gpu_class = r.cls;
		j.source = r.where;
		out.push_back(std::move(j));
	}
	return out;
}

} // namespace

void fill_job(Job &j, int64_t gpus, int64_t run_s, const TraceFill &f)
{
	int gpn = std::max(1, f.gpus_per_node);
	if (gpus <= gpn) {
		j.nodes = 1;
		j.gpus_per_node = static_cast<int>(gpus);
	} else {
		j.nodes = static_cast<int>((gpus + gpn - 1) / gpn);
		j.gpus_per_node = static_cast<int>((gpus + j.nodes - 1) / j.nodes);
	}
	j.work_s = std::max<int64_t>(1, run_s);
	double lim = std::ceil(static_cast<double>(j.work_s) * f.limit_factor / 3600.0) * 3600.0;
	j.limit_s = std::max<int64_t>(3600, static_cast<int64_t>(lim));
	j.comm = j.nodes == 1 ? place::Comm::light : gpus >= 32 ? place::Comm::heavy : place::Comm::normal;
	j.ckpt = gpus >= f.ckpt_min_gpus;
}

expected<std::vector<Job>> read_philly(const std::string &path, const TraceFill &f)
{
	std::ifstream in(path);
	if (!in)
		return unexpected(Error(path, "cannot open the trace"));
	std::string line;
	if (!std::getline(in, line))
		return unexpected(Error(path, "empty trace"));
	auto head = csv_fields(line);
	auto col = [&](const char *name) {
		auto it = std::find(head.begin(), head.end(), name);
		return it == head.end() ? -1 : static_cast<int>(it - head.begin());
	};
	int ct = col("timestamp"), cd = col("duration"), cg = col("num_gpus");
	if (ct < 0 || cd < 0 || cg < 0)
		return unexpected(Error(path + ":1", "not a Philly trace: expected the columns timestamp, duration, num_gpus"));
	std::vector<Raw> raw;
	int no = 1;
	while (std::getline(in, line)) {
		no++;
		if (line.empty() || line == "\r")
			continue;
		auto v = csv_fields(line);
		std::string where = path + ":" + std::to_string(no);
		if (v.size() != head.size())
			return unexpected(Error(where, strprintf("%zu fields, the header has %zu", v.size(), head.size())));
		Raw r;
		double d = 0, g = 0;
		if (!to_time(v[static_cast<size_t>(ct)], r.t))
			return unexpected(Error(where, "bad timestamp '" + v[static_cast<size_t>(ct)] + "': expected YYYY-MM-DD HH:MM:SS"));
		if (!to_double(v[static_cast<size_t>(cd)], d) || d < 0 || d > 1e9)
			return unexpected(Error(where, "bad duration '" + v[static_cast<size_t>(cd)] + "': expected seconds"));
		if (!to_double(v[static_cast<size_t>(cg)], g) || g < 1 || g > 1e6 || g != std::floor(g))
			return unexpected(Error(where, "bad num_gpus '" + v[static_cast<size_t>(cg)] + "': expected a whole number >= 1"));
		r.gpus = static_cast<int64_t>(g);
		r.run = static_cast<int64_t>(std::ceil(d));
		r.where = where;
		raw.push_back(std::move(r));
	}
	return finish(std::move(raw), f);
}

expected<std::vector<Job>> read_alibaba(const std::string &path, const TraceFill &f,
					const std::vector<std::string> &cluster_classes)
{
	std::ifstream in(path);
	if (!in)
		return unexpected(Error(path, "cannot open the trace"));
	std::string line;
	if (!std::getline(in, line))
		return unexpected(Error(path, "empty trace"));
	auto head = csv_fields(line);
	auto col = [&](const char *name) {
		auto it = std::find(head.begin(), head.end(), name);
		return it == head.end() ? -1 : static_cast<int>(it - head.begin());
	};
	int cg = col("num_gpu"), cc = col("creation_time"), cdel = col("deletion_time"), cs = col("scheduled_time"),
	    cspec = col("gpu_spec");
	if (cg < 0 || cc < 0 || cdel < 0 || cs < 0)
		return unexpected(Error(path + ":1", "not an Alibaba GPU trace: expected the columns num_gpu, creation_time, "
						     "deletion_time, scheduled_time"));
	std::vector<Raw> raw;
	int no = 1;
	while (std::getline(in, line)) {
		no++;
		if (line.empty() || line == "\r")
			continue;
		auto v = csv_fields(line);
		std::string where = path + ":" + std::to_string(no);
		if (v.size() != head.size())
			return unexpected(Error(where, strprintf("%zu fields, the header has %zu", v.size(), head.size())));
		double g = 0, c = 0, del = 0, s = 0;
		auto num = [&](int i, double &out, const char *what) -> status {
			if (!to_double(v[static_cast<size_t>(i)], out) || out < 0 || out > 1e10)
				return unexpected(Error(where, strprintf("bad %s '%s'", what, v[static_cast<size_t>(i)].c_str())));
			return {};
		};
		if (auto st = num(cg, g, "num_gpu"); !st)
			return unexpected(st.error());
		if (auto st = num(cc, c, "creation_time"); !st)
			return unexpected(st.error());
		if (auto st = num(cdel, del, "deletion_time"); !st)
			return unexpected(st.error());
		if (v[static_cast<size_t>(cs)].empty())
			continue; // never scheduled (Pending)
		if (auto st = num(cs, s, "scheduled_time"); !st)
			return unexpected(st.error());
		if (g < 1)
			continue; // CPU-only pod
		double start = s > 0 ? std::max(s, c) : c;
		if (del <= start)
			continue; // never ran
		Raw r;
		r.t = static_cast<int64_t>(c);
		r.gpus = static_cast<int64_t>(std::ceil(g));
		r.run = static_cast<int64_t>(std::ceil(del - start));
		r.where = where;
		if (cspec >= 0) {
			std::string spec = v[static_cast<size_t>(cspec)];
			std::string first = spec.substr(0, spec.find('|'));
			for (const std::string &k : cluster_classes)
				if (!first.empty() && k == first)
					r.cls = first;
		}
		raw.push_back(std::move(r));
	}
	return finish(std::move(raw), f);
}

expected<std::vector<Job>> read_trace(const std::string &path, const TraceFill &f,
				      const std::vector<std::string> &cluster_classes)
{
	std::ifstream in(path);
	if (!in)
		return unexpected(Error(path, "cannot open the trace"));
	std::string line;
	std::getline(in, line);
	if (line.find("num_gpus") != std::string::npos && line.find("timestamp") != std::string::npos)
		return read_philly(path, f);
	if (line.find("num_gpu") != std::string::npos && line.find("creation_time") != std::string::npos)
		return read_alibaba(path, f, cluster_classes);
	return unexpected(Error(path + ":1", "unknown trace format: expected Philly's columns (timestamp, duration, num_gpus) "
					     "or Alibaba's (num_gpu, creation_time, deletion_time, scheduled_time)"));
}

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

ConfigSchema::Setter real(double *out, double min, double max)
{
	return [out, min, max](std::string_view v) -> status {
		std::string s(v);
		char *end = nullptr;
		double x = std::strtod(s.c_str(), &end);
		if (s.empty() || *end || !(x >= min && x <= max))
			return unexpected(strprintf("expected a number from %g to %g", min, max));
		*out = x;
		return {};
	};
}

} // namespace

expected<MixGen> parse_mix_gen(std::string_view spec, const std::string &where)
{
	MixGen g;
	int64_t seed = 1;
	ConfigSchema s;
	s.integer("days", &g.days, 1, 3650, "arrival window in days")
		.add("load", "offered load", real(&g.load, 0.01, 10))
		.add("large_share", "share of GPU-hours in large jobs", real(&g.large_share, 0, 1))
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
		.add("small_hours", "small jobs' median run time", real(&g.small_hours, 0.01, 24 * 30))
		.integer("ckpt_min_gpus", &g.ckpt_min_gpus, 1, 1 << 20, "smallest checkpointing job")
		.integer("seed", &seed, 0, INT64_MAX, "random seed");
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
			 static_cast<long long>(g.ckpt_min_gpus), static_cast<unsigned long long>(g.seed));
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
		items.push_back({static_cast<int64_t>(u(rng) * window), gpus, std::max<int64_t>(60, static_cast<int64_t>(hours * 3600))});
		small_budget -= static_cast<double>(gpus) * hours;
	}
	std::stable_sort(items.begin(), items.end(), [](const Item &a, const Item &b) { return a.t < b.t; });
	std::vector<Job> out;
	for (const Item &it : items) {
		Job j;
		j.id = static_cast<uint32_t>(out.size() + 1);
		j.submit_s = it.t;
		fill_job(j, it.gpus, it.run, f);
		j.source = "generated job " + std::to_string(j.id);
		out.push_back(std::move(j));
	}
	return out;
}

} // namespace loom::sim
