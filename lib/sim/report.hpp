// loom sim: what a run leaves behind: CSV files, a summary table, SVG plots.
//
//   DIR/summary.csv            one row per placer (columns: summary_columns())
//   DIR/PLACER/jobs.csv        one row per job
//   DIR/PLACER/timeline.csv    one row per sample (hourly by default)
//   DIR/utilization.svg        busy GPUs over time, one line per placer
//   DIR/idle_leaves.svg        fully idle leaves over time (what large jobs need)
//   DIR/queue.svg              pending GPUs over time
//   DIR/wait_cdf.svg           queue wait, cumulative share of jobs
#pragma once

#include "lib/sim/simulator.hpp"
#include "lib/util/expected.hpp"

#include <string>
#include <vector>

namespace loom::sim {

std::string jobs_csv(const RunResult &r);
std::string timeline_csv(const RunResult &r);
std::string summary_csv(const std::vector<RunResult> &runs);
// For people: one column per placer.
std::string summary_table(const std::vector<RunResult> &runs);

struct Series {
	std::string name;
	std::vector<std::pair<double, double>> points;
};
// A line chart: axes with ticks, one polyline per series, a legend.
std::string svg_lines(const std::string &title, const std::string &x_label, const std::string &y_label,
		      const std::vector<Series> &series);

status write_outputs(const std::string &dir, const std::vector<RunResult> &runs);

} // namespace loom::sim
