#include "lib/health/predictor.hpp"

#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"
#include "lib/util/log.hpp"

#include <algorithm>
#include <cmath>
#include <json-c/json.h>
#include <optional>
#include <unistd.h>

namespace loom::health {

std::vector<Metric> metrics_of(const NodeSample &s, const HealthConfig &c)
{
	std::vector<Metric> m;
	for (const auto &g : s.gpus) {
		std::string p = "gpu" + std::to_string(g.index) + ".";
		if (g.temp_c)
			m.push_back({p + "temp", *g.temp_c, c.gpu_temp_suspect});
		if (g.mem_temp_c)
			m.push_back({p + "mem_temp", *g.mem_temp_c, c.gpu_mem_temp_suspect});
		if (g.ecc_agg_dram_corr && c.ecc_dram_corr_suspect > 0)
			m.push_back({p + "ecc_dram_corr", static_cast<double>(*g.ecc_agg_dram_corr),
				     static_cast<double>(c.ecc_dram_corr_suspect)});
		if (g.ecc_agg_sram_corr && c.ecc_sram_corr_suspect > 0)
			m.push_back({p + "ecc_sram_corr", static_cast<double>(*g.ecc_agg_sram_corr),
				     static_cast<double>(c.ecc_sram_corr_suspect)});
		if ((g.retired_sbe || g.retired_dbe) && c.retired_pages_drain > 0)
			m.push_back({p + "retired_pages",
				     static_cast<double>(g.retired_sbe.value_or(0) + g.retired_dbe.value_or(0)),
				     static_cast<double>(c.retired_pages_drain)});
	}
	if (c.ib_errors_suspect > 0)
		for (const auto &port : s.ib_ports) {
			uint64_t sum = 0;
			for (const auto &k : c.ib_error_counters)
				if (auto it = port.counters.find(k); it != port.counters.end())
					sum += it->second;
			m.push_back({"ib." + port.device + "/" + std::to_string(port.port) + ".errors",
				     static_cast<double>(sum), static_cast<double>(c.ib_errors_suspect)});
		}
	for (const auto &port : s.ib_ports)
		for (const auto &[counter, value] : port.hw_counters) {
			// The lower limit that acts: suspect, else drain.
			int64_t limit = 0;
			if (auto it = c.ib_hw_counters_suspect.find(counter); it != c.ib_hw_counters_suspect.end())
				limit = it->second;
			else if (auto d = c.ib_hw_counters_drain.find(counter); d != c.ib_hw_counters_drain.end())
				limit = d->second;
			if (limit > 0)
				m.push_back({"ib." + port.device + "/" + std::to_string(port.port) + "." + counter,
					     static_cast<double>(value), static_cast<double>(limit)});
		}
	if (c.edac_ce_suspect > 0)
		for (const auto &mc : s.edac)
			if (mc.corrected)
				m.push_back({"edac." + mc.name + ".ce", static_cast<double>(*mc.corrected),
					     static_cast<double>(c.edac_ce_suspect)});
	return m;
}

namespace {

// Least-squares slope of pts[from, to).
double ls_slope(const std::vector<std::pair<double, double>> &pts, size_t from, size_t to)
{
	double n = static_cast<double>(to - from), sx = 0, sy = 0, sxx = 0, sxy = 0;
	for (size_t i = from; i < to; i++) {
		double x = pts[i].first - pts[from].first, y = pts[i].second;
		sx += x;
		sy += y;
		sxx += x * x;
		sxy += x * y;
	}
	double den = n * sxx - sx * sx;
	return den > 0 ? (n * sxy - sx * sy) / den : 0;
}

// Least-squares parabola y = a + b x + c x^2 over pts (x from the first
// point); false when the system is singular.
bool ls_parabola(const std::vector<std::pair<double, double>> &pts, double &a, double &b, double &c)
{
	double s[5] = {0, 0, 0, 0, 0}, t[3] = {0, 0, 0};
	for (const auto &[x0, y] : pts) {
		double x = (x0 - pts.front().first) / 60.0, p = 1;
		for (int k = 0; k < 5; k++) {
			if (k < 3)
				t[k] += p * y;
			s[k] += p;
			p *= x;
		}
	}
	// Normal equations [s0 s1 s2; s1 s2 s3; s2 s3 s4] [a b c] = t, by Cramer's rule.
	auto det3 = [](double m00, double m01, double m02, double m10, double m11, double m12, double m20, double m21,
		       double m22) {
		return m00 * (m11 * m22 - m12 * m21) - m01 * (m10 * m22 - m12 * m20) + m02 * (m10 * m21 - m11 * m20);
	};
	double d = det3(s[0], s[1], s[2], s[1], s[2], s[3], s[2], s[3], s[4]);
	if (!(std::fabs(d) > 1e-12))
		return false;
	a = det3(t[0], s[1], s[2], t[1], s[2], s[3], t[2], s[3], s[4]) / d;
	b = det3(s[0], t[0], s[2], s[1], t[1], s[3], s[2], t[2], s[4]) / d;
	c = det3(s[0], s[1], t[0], s[1], s[2], t[1], s[2], s[3], t[2]) / d;
	return std::isfinite(a) && std::isfinite(b) && std::isfinite(c);
}

// The trend of one series (oldest first, last = now) toward threshold, if it
// reaches it within horizon_s.
std::optional<Trend> trend_of(const std::vector<std::pair<double, double>> &pts, const Metric &m, int64_t horizon_s,
			      size_t min_points)
{
	constexpr double min_t = 3.0;
	if (pts.size() < min_points || pts.back().second >= m.threshold)
		return std::nullopt;
	{
		int ups = 0, steps = 0;
		for (size_t i = 1; i < pts.size(); i++) {
			steps++;
			ups += pts[i].second > pts[i - 1].second;
		}
		if (3 * ups < 2 * steps)
			return std::nullopt;
		double n = static_cast<double>(pts.size()), sx = 0, sy = 0, sxx = 0, sxy = 0;
		double t0 = pts.front().first;
		for (const auto &[t, y] : pts) {
			double x = t - t0;
			sx += x;
			sy += y;
			sxx += x * x;
			sxy += x * y;
		}
		double den = n * sxx - sx * sx;
		if (den <= 0)
			return std::nullopt;
		double slope = (n * sxy - sx * sy) / den;
		if (!(slope > 0) || !std::isfinite(slope))
			return std::nullopt;
		// The slope must stand out of the noise: at least min_t standard
		// errors (a clean ramp or counter has a tiny error; noise around a
		// steady value does not clear it).
		double intercept = (sy - slope * sx) / n, ss = 0;
		for (const auto &[t, y] : pts) {
			double r = y - (intercept + slope * (t - t0));
			ss += r * r;
		}
		double sxx_c = sxx - sx * sx / n;
		double se = pts.size() > 2 && sxx_c > 0 ? std::sqrt(ss / (n - 2) / sxx_c) : 0;
		if (se > 0 && slope < min_t * se)
			return std::nullopt;
		// A curve that flattens (a GPU settling at its working temperature)
		// is no trend: the last third of the window must
		// climb at least half as fast as the third before it, and the ETA uses
		// the smaller of the overall and the recent slope.
		// And a rise that began only in the recent half (a job starting on an
		// idle GPU) is a step, not a trend: the older half must climb too.
		if (ls_slope(pts, 0, pts.size() / 2) < 0.2 * slope)
			return std::nullopt;
		// A curve that bends over and peaks below the threshold (a warm-up
		// settling at its working temperature) never reaches it.
		if (double qa, qb, qc;
		    pts.size() >= 5 && ls_parabola(pts, qa, qb, qc) && qc < 0 && qa - qb * qb / (4 * qc) < m.threshold)
			return std::nullopt;
		size_t third = pts.size() / 3;
		if (third >= 2) {
			double last = ls_slope(pts, pts.size() - third, pts.size());
			double prev = ls_slope(pts, pts.size() - 2 * third, pts.size() - third);
			if (prev > 0 && last < 0.5 * prev)
				return std::nullopt;
			slope = std::min(slope, std::max(last, 0.0));
		}
		if (!(slope > 0))
			return std::nullopt;
		double value = pts.back().second;
		double eta = (m.threshold - value) / slope;
		if (eta <= static_cast<double>(horizon_s))
			return Trend{m.name, value, m.threshold, slope, eta};
	}
	return std::nullopt;
}

} // namespace

std::vector<Trend> predict(const std::vector<HistoryPoint> &history, const std::vector<Metric> &current,
			   int64_t horizon_s, size_t min_points)
{
	std::vector<Trend> out;
	for (const auto &m : current) {
		if (m.value >= m.threshold)
			continue; // over the threshold: the rules' business, not a prediction
		std::vector<std::pair<double, double>> pts;
		for (const auto &h : history)
			if (auto it = h.values.find(m.name); it != h.values.end())
				pts.emplace_back(static_cast<double>(h.t), it->second);
		auto now = trend_of(pts, m, horizon_s, min_points);
		if (!now)
			continue;
		// It must have held one check earlier too: one lucky run of noise is
		// not a trend.
		std::vector<std::pair<double, double>> before(pts.begin(), pts.end() - 1);
		if (trend_of(before, m, horizon_s, min_points))
			out.push_back(*now);
	}
	return out;
}

std::string trend_evidence(const Trend &t)
{
	return strprintf("%s at %g rising %.3g/min: reaches %g in about %.0f min", t.metric.c_str(), t.value,
			 t.slope_per_s * 60.0, t.threshold, std::ceil(t.eta_s / 60.0));
}

ReplayResult replay_series(const std::string &metric, const std::vector<std::pair<int64_t, double>> &points,
			   double threshold, size_t history_len, int64_t horizon_s)
{
	ReplayResult r;
	std::vector<HistoryPoint> hist;
	for (const auto &[t, value] : points) {
		HistoryPoint p;
		p.t = t;
		p.values[metric] = value;
		hist.push_back(std::move(p));
		if (hist.size() > history_len)
			hist.erase(hist.begin());
		if (value >= threshold) {
			if (r.fails_at < 0)
				r.fails_at = t;
			continue;
		}
		if (!predict(hist, {{metric, value, threshold}}, horizon_s).empty()) {
			r.warnings++;
			if (r.first_warning < 0 && r.fails_at < 0)
				r.first_warning = t;
		}
	}
	return r;
}

expected<std::vector<HistoryPoint>> load_history(const std::string &path)
{
	std::vector<HistoryPoint> h;
	if (::access(path.c_str(), F_OK) != 0)
		return h;
	auto j = json_parse_file(path, 8u << 20);
	if (!j)
		return unexpected(j.error());
	ObjectReader r(j->get(), "$");
	auto arr = r.array("samples");
	if (!arr)
		return unexpected(arr.error().within(path));
	if (auto st = r.finish(); !st)
		return unexpected(st.error().within(path));
	size_t n = json_object_array_length(*arr);
	for (size_t i = 0; i < n; i++) {
		std::string where = ObjectReader::index_path("$.samples", i);
		ObjectReader pr(json_object_array_get_idx(*arr, i), where);
		if (!pr.ok())
			return unexpected(pr.error().within(path));
		auto t = pr.integer("t", 0);
		auto vals = pr.object("values");
		if (!t)
			return unexpected(t.error().within(path));
		if (!vals)
			return unexpected(vals.error().within(path));
		if (auto st = pr.finish(); !st)
			return unexpected(st.error().within(path));
		HistoryPoint p;
		p.t = *t;
		json_object_object_foreach(*vals, key, val)
		{
			if (!json_object_is_type(val, json_type_double) && !json_object_is_type(val, json_type_int))
				return unexpected(path, where + ".values." + key + ": expected a number");
			p.values[key] = json_object_get_double(val);
		}
		h.push_back(std::move(p));
	}
	return h;
}

status save_history(const std::string &path, const std::vector<HistoryPoint> &h)
{
	Json arr = Json::array();
	for (const auto &p : h) {
		Json o = Json::object();
		o.set("t", Json::integer(p.t));
		Json vals = Json::object();
		for (const auto &[k, v] : p.values)
			vals.set(k.c_str(), Json::number(v));
		o.set("values", std::move(vals));
		arr.push(std::move(o));
	}
	Json root = Json::object();
	root.set("samples", std::move(arr));
	return write_file_atomic(path, root.dump(false));
}

void predict_and_judge(const std::string &history_path, const NodeSample &s, const HealthConfig &c, int64_t now,
		       Verdict &v)
{
	auto loaded = load_history(history_path);
	std::vector<HistoryPoint> hist;
	if (loaded)
		hist = std::move(*loaded);
	else
		log_warning("predictor: %s: starting a new history", loaded.error().str().c_str());
	std::vector<Metric> cur = metrics_of(s, c);
	HistoryPoint p;
	p.t = now;
	for (const auto &m : cur)
		p.values[m.name] = m.value;
	// A clock that went backwards starts the history afresh.
	if (!hist.empty() && hist.back().t >= now)
		hist.clear();
	hist.push_back(std::move(p));
	if (hist.size() > static_cast<size_t>(c.history_len))
		hist.erase(hist.begin(), hist.end() - c.history_len);
	if (auto st = save_history(history_path, hist); !st)
		log_warning("predictor: %s", st.error().str().c_str());
	bool any = false;
	for (const auto &t : predict(hist, cur, c.predict_horizon)) {
		v.findings.push_back({"predict", Outcome::suspect, trend_evidence(t), t.eta_s});
		any = true;
	}
	if (any && v.outcome == Outcome::ok) {
		v.outcome = Outcome::suspect;
		v.actions.insert(v.actions.begin(), {"suspect", "checkpoint"});
	}
}

} // namespace loom::health
