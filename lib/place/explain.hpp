// loom placement: a decision for people (text) and for tools (JSON).
#pragma once

#include "lib/place/engine.hpp"

#include <string>

namespace loom::place {

// "chosen: n[9-12] ...", runner-up, or the reason nothing fits; node names
// in rank order.
std::string format_decision(const topo::Cluster &c, const Request &r, const Decision &d);
// {"request": ..., "placed": bool, "reason": ..., "candidates": [{"nodes": [...],
//  "gpus": [...], "why": ..., "score": {...}}]}
std::string decision_json(const topo::Cluster &c, const Request &r, const Decision &d, bool pretty = true);

} // namespace loom::place
