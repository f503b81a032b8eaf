// loom sim: the trace readers (the generated mix: job_mix.cpp).
#include "lib/sim/jobs.hpp"

#include "lib/util/log.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <optional>

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

// A trace file: its header, then one row at a time with "file:line" for errors.
class Csv {
public:
	status open(const std::string &path)
	{
		path_ = path;
		in_.open(path);
		if (!in_)
			return unexpected(Error(path, "cannot open the trace"));
		std::string line;
		if (!std::getline(in_, line))
			return unexpected(Error(path, "empty trace"));
		head_ = csv_fields(line);
		return {};
	}
	int col(const char *name) const
	{
		auto it = std::find(head_.begin(), head_.end(), name);
		return it == head_.end() ? -1 : static_cast<int>(it - head_.begin());
	}
	// The next row; false at the end or on error (then error() says why).
	bool next(std::vector<std::string> &fields, std::string &where)
	{
		std::string line;
		while (std::getline(in_, line)) {
			no_++;
			if (line.empty() || line == "\r")
				continue;
			fields = csv_fields(line);
			where = path_ + ":" + std::to_string(no_);
			if (fields.size() != head_.size()) {
				error_ = Error(where, strprintf("%zu fields, the header has %zu", fields.size(),
								head_.size()));
				return false;
			}
			return true;
		}
		return false;
	}
	const std::optional<Error> &error() const { return error_; }

private:
	std::string path_;
	std::ifstream in_;
	std::vector<std::string> head_;
	int no_ = 1;
	std::optional<Error> error_;
};

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
	if (std::sscanf(s.c_str(), "%4d-%2d-%2d %2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
			&tm.tm_min, &tm.tm_sec, &n) != 6 ||
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
	Csv csv;
	if (auto st = csv.open(path); !st)
		return unexpected(st.error());
	int ct = csv.col("timestamp"), cd = csv.col("duration"), cg = csv.col("num_gpus");
	if (ct < 0 || cd < 0 || cg < 0)
		return unexpected(
			Error(path + ":1", "not a Philly trace: expected the columns timestamp, duration, num_gpus"));
	std::vector<Raw> raw;
	std::vector<std::string> v;
	std::string where;
	while (csv.next(v, where)) {
		Raw r;
		double d = 0, g = 0;
		const std::string &ts = v[static_cast<size_t>(ct)], &ds = v[static_cast<size_t>(cd)],
				  &gs = v[static_cast<size_t>(cg)];
		if (!to_time(ts, r.t))
			return unexpected(Error(where, "bad timestamp '" + ts + "': expected YYYY-MM-DD HH:MM:SS"));
		if (!to_double(ds, d) || d < 0 || d > 1e9)
			return unexpected(Error(where, "bad duration '" + ds + "': expected seconds"));
		if (!to_double(gs, g) || g < 1 || g > 1e6 || g != std::floor(g))
			return unexpected(Error(where, "bad num_gpus '" + gs + "': expected a whole number >= 1"));
		r.gpus = static_cast<int64_t>(g);
		r.run = static_cast<int64_t>(std::ceil(d));
		r.where = where;
		raw.push_back(std::move(r));
	}
	if (csv.error())
		return unexpected(*csv.error());
	return finish(std::move(raw), f);
}

expected<std::vector<Job>> read_alibaba(const std::string &path, const TraceFill &f,
					const std::vector<std::string> &cluster_classes)
{
	Csv csv;
	if (auto st = csv.open(path); !st)
		return unexpected(st.error());
	int cg = csv.col("num_gpu"), cc = csv.col("creation_time"), cdel = csv.col("deletion_time"),
	    cs = csv.col("scheduled_time"), cspec = csv.col("gpu_spec");
	if (cg < 0 || cc < 0 || cdel < 0 || cs < 0)
		return unexpected(Error(path + ":1",
					"not an Alibaba GPU trace: expected the columns num_gpu, creation_time, "
					"deletion_time, scheduled_time"));
	std::vector<Raw> raw;
	std::vector<std::string> v;
	std::string where;
	while (csv.next(v, where)) {
		double g = 0, c = 0, del = 0, s = 0;
		auto num = [&](int i, double &out, const char *what) -> status {
			if (!to_double(v[static_cast<size_t>(i)], out) || out < 0 || out > 1e10)
				return unexpected(Error(
					where, strprintf("bad %s '%s'", what, v[static_cast<size_t>(i)].c_str())));
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
			const std::string &spec = v[static_cast<size_t>(cspec)];
			std::string first = spec.substr(0, spec.find('|'));
			for (const std::string &k : cluster_classes)
				if (!first.empty() && k == first)
					r.cls = first;
		}
		raw.push_back(std::move(r));
	}
	if (csv.error())
		return unexpected(*csv.error());
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
	return unexpected(Error(path + ":1",
				"unknown trace format: expected Philly's columns (timestamp, duration, num_gpus) "
				"or Alibaba's (num_gpu, creation_time, deletion_time, scheduled_time)"));
}

} // namespace loom::sim
