// loom sim: CSV, summary and SVG output.
#include "lib/sim/report.hpp"

#include "lib/util/fs.hpp"
#include "lib/util/log.hpp"

#include <algorithm>
#include <cmath>

namespace loom::sim {

std::string jobs_csv(const RunResult &r)
{
	std::string out = "id,submit_s,first_start_s,end_s,state,gpus,nodes,wait_s,leaves,nvlink_domains,common_level,"
			  "step_factor,restarts,lost_gpu_h,ettr,comm,ring_leaf_edges,degraded_leaves,tier,class,cost,"
			  "work_h,hostlist\n";
	for (const JobResult &j : r.jobs)
		out += strprintf(
			"%u,%lld,%lld,%lld,%s,%d,%d,%lld,%d,%d,%d,%.4f,%d,%.3f,%.4f,%s,%d,%d,%s,%s,%.2f,%.4f,\"%s\"\n",
			j.id, static_cast<long long>(j.submit_s), static_cast<long long>(j.first_start_s),
			static_cast<long long>(j.end_s), j.state.c_str(), j.gpus, j.nodes,
			static_cast<long long>(j.first_start_s >= 0 ? j.first_start_s - j.submit_s : -1), j.leaves,
			j.nvlink_domains, j.common_level, j.step_factor, j.restarts, j.lost_gpu_s / 3600, j.ettr(),
			place::comm_name(j.comm), j.ring_leaf_edges, j.degraded_leaves, j.tier.c_str(),
			j.gpu_class.c_str(), j.cost, j.work_s / 3600.0, j.first_nodes.c_str());
	return out;
}

std::string timeline_csv(const RunResult &r)
{
	std::string out =
		"t_h,busy_gpus,available_gpus,idle_nodes,idle_leaves,idle_nvlink_domains,pending_jobs,pending_gpus,"
		"drained_nodes\n";
	for (const Sample &s : r.timeline)
		out += strprintf("%.3f,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld\n", static_cast<double>(s.t) / 3600,
				 static_cast<long long>(s.busy_gpus), static_cast<long long>(s.available_gpus),
				 static_cast<long long>(s.idle_nodes), static_cast<long long>(s.idle_leaves),
				 static_cast<long long>(s.idle_nvlink), static_cast<long long>(s.pending_jobs),
				 static_cast<long long>(s.pending_gpus), static_cast<long long>(s.drained_nodes));
	return out;
}

namespace {

struct Row {
	const char *name;
	int digits;
	double (*get)(const Summary &);
};

const std::vector<Row> &rows()
{
	static const std::vector<Row> v = {
		{"jobs", 0, [](const Summary &s) { return double(s.jobs); }},
		{"started", 0, [](const Summary &s) { return double(s.started); }},
		{"completed", 0, [](const Summary &s) { return double(s.completed); }},
		{"timeouts", 0, [](const Summary &s) { return double(s.timeouts); }},
		{"failed", 0, [](const Summary &s) { return double(s.failed); }},
		{"utilization", 4, [](const Summary &s) { return s.utilization; }},
		{"utilization_available", 4, [](const Summary &s) { return s.utilization_available; }},
		{"wait_mean_h", 3, [](const Summary &s) { return s.wait_mean_h; }},
		{"wait_p95_h", 3, [](const Summary &s) { return s.wait_p95_h; }},
		{"jct_mean_h", 3, [](const Summary &s) { return s.jct_mean_h; }},
		{"multi_node_leaves_mean", 3, [](const Summary &s) { return s.multi_leaves_mean; }},
		{"multi_node_step_factor", 4, [](const Summary &s) { return s.multi_step_factor; }},
		{"heavy_step_factor", 4, [](const Summary &s) { return s.heavy_step_factor; }},
		{"idle_leaves_mean", 2, [](const Summary &s) { return s.idle_leaves_mean; }},
		{"large_jobs", 0, [](const Summary &s) { return double(s.large_jobs); }},
		{"ettr_large", 4, [](const Summary &s) { return s.ettr_large; }},
		{"failures", 0, [](const Summary &s) { return double(s.failures); }},
		{"job_failures", 0, [](const Summary &s) { return double(s.job_failures); }},
		{"drains", 0, [](const Summary &s) { return double(s.drains); }},
		{"requeues", 0, [](const Summary &s) { return double(s.requeues); }},
		{"holds", 0, [](const Summary &s) { return double(s.holds); }},
		{"warnings", 0, [](const Summary &s) { return double(s.warnings); }},
		{"replacements", 0, [](const Summary &s) { return double(s.replacements); }},
		{"spare_misses", 0, [](const Summary &s) { return double(s.spare_misses); }},
		{"replace_wait_mean_s", 1, [](const Summary &s) { return s.replace_wait_mean_s; }},
		{"migrations", 0, [](const Summary &s) { return double(s.migrations); }},
		{"migrations_to_spares", 0, [](const Summary &s) { return double(s.migrations_to_spares); }},
		{"in_alloc_restarts", 0, [](const Summary &s) { return double(s.in_alloc_restarts); }},
		{"standby_gpu_h", 1, [](const Summary &s) { return s.standby_gpu_h; }},
		{"spare_nodes_mean", 1, [](const Summary &s) { return s.spare_nodes_mean; }},
		{"lost_gpu_h", 1, [](const Summary &s) { return s.lost_gpu_h; }},
		{"decisions", 0, [](const Summary &s) { return double(s.decisions); }},
		{"decisions_per_s", 0,
		 [](const Summary &s) { return s.engine_s > 0 ? double(s.decisions) / s.engine_s : 0.0; }},
		{"engine_s", 3, [](const Summary &s) { return s.engine_s; }},
		{"wall_s", 3, [](const Summary &s) { return s.wall_s; }},
		{"engine_share", 3, [](const Summary &s) { return s.wall_s > 0 ? s.engine_s / s.wall_s : 0.0; }},
	};
	return v;
}

} // namespace

std::string summary_csv(const std::vector<RunResult> &runs)
{
	std::string out = "placer";
	for (const Row &r : rows())
		out += std::string(",") + r.name;
	out += "\n";
	for (const RunResult &run : runs) {
		out += run.placer;
		for (const Row &r : rows())
			out += "," + strprintf("%.*f", r.digits, r.get(run.summary));
		out += "\n";
	}
	return out;
}

std::string summary_table(const std::vector<RunResult> &runs)
{
	std::string out = strprintf("%-24s", "");
	for (const RunResult &run : runs)
		out += strprintf(" %12s", run.placer.c_str());
	out += "\n";
	for (const Row &r : rows()) {
		out += strprintf("%-24s", r.name);
		for (const RunResult &run : runs)
			out += strprintf(" %12s", strprintf("%.*f", r.digits, r.get(run.summary)).c_str());
		out += "\n";
	}
	return out;
}

namespace {

double nice_step(double range, int ticks)
{
	if (!(range > 0))
		return 1;
	double raw = range / ticks;
	double mag = std::pow(10, std::floor(std::log10(raw)));
	double f = raw / mag;
	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

std::string esc(const std::string &s)
{
	std::string o;
	for (char c : s)
		o += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
	return o;
}

} // namespace

std::string svg_lines(const std::string &title, const std::string &x_label, const std::string &y_label,
		      const std::vector<Series> &series)
{
	const double W = 760, H = 400, L = 80, R = 150, T = 40, B = 50;
	double xmax = 0, ymax = 0;
	for (const Series &s : series)
		for (const auto &[x, y] : s.points) {
			xmax = std::max(xmax, x);
			ymax = std::max(ymax, y);
		}
	if (xmax <= 0)
		xmax = 1;
	if (ymax <= 0)
		ymax = 1;
	double xs = nice_step(xmax, 8), ys = nice_step(ymax, 6);
	xmax = std::ceil(xmax / xs) * xs;
	ymax = std::ceil(ymax / ys) * ys;
	auto px = [&](double x) { return L + x / xmax * (W - L - R); };
	auto py = [&](double y) { return H - B - y / ymax * (H - T - B); };
	std::string o = strprintf(
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		"font-family=\"sans-serif\" font-size=\"12\">\n",
		W, H, W, H);
	o += strprintf("<rect width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", W, H);
	o += strprintf("<text x=\"%.0f\" y=\"22\" font-size=\"15\" text-anchor=\"middle\">%s</text>\n", (W - R + L) / 2,
		       esc(title).c_str());
	for (double x = 0; x <= xmax + xs / 2; x += xs) {
		o += strprintf("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", px(x),
			       py(0), px(x), py(ymax));
		o += strprintf("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", px(x), H - B + 16, x);
	}
	for (double y = 0; y <= ymax + ys / 2; y += ys) {
		o += strprintf("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", px(0),
			       py(y), px(xmax), py(y));
		o += strprintf("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", L - 6, py(y) + 4, y);
	}
	o += strprintf("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", (L + W - R) / 2, H - 12,
		       esc(x_label).c_str());
	o += strprintf("<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 16 %.1f)\">%s</text>\n",
		       (T + H - B) / 2, (T + H - B) / 2, esc(y_label).c_str());
	static const char *colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
	for (size_t i = 0; i < series.size(); i++) {
		const char *col = colors[i % 6];
		o += strprintf("<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", col);
		// At most ~2000 points per line: every k-th sample.
		size_t k = std::max<size_t>(1, series[i].points.size() / 2000);
		for (size_t p = 0; p < series[i].points.size(); p += k)
			o += strprintf("%.1f,%.1f ", px(series[i].points[p].first), py(series[i].points[p].second));
		o += "\"/>\n";
		double ly = T + 10 + static_cast<double>(i) * 20;
		o += strprintf(
			"<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"%s\" stroke-width=\"3\"/>\n",
			W - R + 15, ly, W - R + 40, ly, col);
		o += strprintf("<text x=\"%.0f\" y=\"%.0f\">%s</text>\n", W - R + 46, ly + 4,
			       esc(series[i].name).c_str());
	}
	o += strprintf("<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"black\"/>\n",
		       L, T, W - L - R, H - T - B);
	o += "</svg>\n";
	return o;
}

status write_outputs(const std::string &dir, const std::vector<RunResult> &runs)
{
	if (auto st = make_dirs(dir); !st)
		return st;
	if (auto st = write_file_atomic(dir + "/summary.csv", summary_csv(runs)); !st)
		return st;
	std::vector<Series> util, leaves, queue, wait;
	for (const RunResult &r : runs) {
		std::string sub = dir + "/" + r.placer;
		if (auto st = make_dirs(sub); !st)
			return st;
		if (auto st = write_file_atomic(sub + "/jobs.csv", jobs_csv(r)); !st)
			return st;
		if (auto st = write_file_atomic(sub + "/timeline.csv", timeline_csv(r)); !st)
			return st;
		Series u{r.placer, {}}, l{r.placer, {}}, q{r.placer, {}}, w{r.placer, {}};
		for (const Sample &s : r.timeline) {
			double d = static_cast<double>(s.t) / 86400;
			u.points.push_back({d, static_cast<double>(s.busy_gpus)});
			l.points.push_back({d, static_cast<double>(s.idle_leaves)});
			q.points.push_back({d, static_cast<double>(s.pending_gpus)});
		}
		std::vector<double> waits;
		for (const JobResult &j : r.jobs)
			if (j.first_start_s >= 0)
				waits.push_back(static_cast<double>(j.first_start_s - j.submit_s) / 3600);
		std::sort(waits.begin(), waits.end());
		size_t k = std::max<size_t>(1, waits.size() / 1000);
		for (size_t i = 0; i < waits.size(); i += k)
			w.points.push_back({waits[i], static_cast<double>(i + 1) / static_cast<double>(waits.size())});
		if (!waits.empty())
			w.points.push_back({waits.back(), 1});
		util.push_back(std::move(u));
		leaves.push_back(std::move(l));
		queue.push_back(std::move(q));
		wait.push_back(std::move(w));
	}
	struct Plot {
		const char *file, *title, *x, *y;
		const std::vector<Series> *s;
	} plots[] = {
		{"utilization.svg", "Busy GPUs", "day", "GPUs", &util},
		{"idle_leaves.svg", "Fully idle leaves (room for large jobs)", "day", "leaves", &leaves},
		{"queue.svg", "Pending GPUs", "day", "GPUs", &queue},
		{"wait_cdf.svg", "Queue wait", "hours", "share of jobs started", &wait},
	};
	for (const Plot &p : plots)
		if (auto st = write_file_atomic(dir + "/" + p.file, svg_lines(p.title, p.x, p.y, *p.s)); !st)
			return st;
	return {};
}

} // namespace loom::sim
