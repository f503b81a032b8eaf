// loom health: the verdict as JSON (`loom health check --json`) and as a
// Prometheus textfile for node_exporter's textfile collector.
#pragma once

#include "lib/health/rules.hpp"
#include "lib/health/sample.hpp"

#include <string>

namespace loom::health {

std::string verdict_json(const std::string &node, const NodeSample &s, const Verdict &v);
// Metric names start with loom_health_; every series carries node="...".
std::string verdict_prometheus(const std::string &node, const NodeSample &s, const Verdict &v);

} // namespace loom::health
