// loom health: the predictor. A short per-node history of the values that
// have thresholds (GPU and HBM temperatures, correctable ECC counts, retired
// pages, InfiniBand error counters and hw_counters, EDAC corrected errors);
// when one of them trends toward its threshold fast enough to reach it within
// the horizon, the node turns suspect before it fails, so that running
// checkpointed jobs save their state and placement steers new work away.
//
// The trend is a least-squares slope over the history, and counts only when
// the series mostly rises (at least two thirds of its steps go up) and the
// slope is at least three standard errors above zero, so that noise around a
// steady value does not raise alarms.
#pragma once

#include "lib/health/config.hpp"
#include "lib/health/rules.hpp"
#include "lib/health/sample.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace loom::health {

struct Metric {
	std::string name; // "gpu3.temp", "gpu0.ecc_dram_corr", "ib.mlx5_1/1.errors",
			  // "ib.mlx5_1/1.local_ack_timeout_err", "edac.mc0.ce"
	double value = 0;
	double threshold = 0; // the value at which the rules act
};

struct HistoryPoint {
	int64_t t = 0;
	std::map<std::string, double> values;
};

struct Trend {
	std::string metric;
	double value = 0, threshold = 0;
	double slope_per_s = 0;
	double eta_s = 0; // seconds until the threshold at this slope
};

// The metrics of a sample that have an active threshold in the config.
std::vector<Metric> metrics_of(const NodeSample &s, const HealthConfig &c);

// Pure: trends in 'history' (oldest first, the current sample last) that
// reach their threshold within horizon_s. A metric already at or above its
// threshold is the rules' business, not a prediction.
std::vector<Trend> predict(const std::vector<HistoryPoint> &history, const std::vector<Metric> &current,
			   int64_t horizon_s, size_t min_points = 4);
// (A trend must hold at this check and at the one before it.)

std::string trend_evidence(const Trend &t);

// History file (JSON, written atomically): load, append now's metrics, keep
// the last history_len points, save; then add a "predict" finding per trend
// to v (turning an ok verdict suspect). A history file that cannot be read is
// replaced (the predictor starts afresh), never fatal.
void predict_and_judge(const std::string &history_path, const NodeSample &s, const HealthConfig &c, int64_t now,
		       Verdict &v);

// Replay one metric's series through the predictor as `loom health check`
// would see it, one check per point, keeping history_len points. Counts the
// checks that warned while the value was still below the threshold, the time
// of the first such warning and of the first value at or above it (-1: none).
struct ReplayResult {
	int warnings = 0;
	int64_t first_warning = -1, fails_at = -1;
	// How long before the failure the first warning came (-1: no warning before it).
	int64_t lead_s() const
	{
		return first_warning >= 0 && fails_at >= 0 && first_warning < fails_at ? fails_at - first_warning : -1;
	}
};
ReplayResult replay_series(const std::string &metric, const std::vector<std::pair<int64_t, double>> &points,
			   double threshold, size_t history_len, int64_t horizon_s);

expected<std::vector<HistoryPoint>> load_history(const std::string &path);
status save_history(const std::string &path, const std::vector<HistoryPoint> &h);

} // namespace loom::health
