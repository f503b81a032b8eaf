// loom health: a finished job in the failure statistics.
//
// The statistics and their file are lib/exchange/failure_stats.hpp (jobcomp/
// health writes them; spank_ckpt, select/topo and loom sim read them). What a
// job adds to them depends on its classification (classify.hpp): exposure
// for every node it ran on, and, for infrastructure failures, one failure
// against each culprit node (or against the GPU class when no node could be
// named).
#pragma once

#include "lib/exchange/failure_stats.hpp"
#include "lib/health/classify.hpp"

#include <cstdint>
#include <map>
#include <string>

namespace loom::health {

// Add one finished job. gpu_class_of gives each node's GPU class ("h100"; "" -> "none").
void record_job(exchange::FailureStats &s, const JobEnd &job, const Classification &c,
		const std::map<std::string, std::string> &gpu_class_of, int64_t now);

} // namespace loom::health
