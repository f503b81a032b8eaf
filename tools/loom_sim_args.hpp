// loom sim: its command line (loom_sim_args.cpp, one option table) and what
// the run needs from it (loom_sim.cpp).
#pragma once

#include "tools/options.hpp"

#include "lib/sim/simulator.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::tool {

struct SimArgs {
	std::string cluster_file, gen, trace_file, gen_jobs, out_dir, weights_file, spares_text;
	std::string failures = "default", progress = "auto";
	std::vector<std::string> placers;
	int64_t days = 0, seed = 1, skip_days = 0, large = 1024;
	double time_scale = 1, size_scale = 1, dump_h = -1, load = 0;
	bool quiet = false;
	sim::RunConfig base;
};

// The table that fills 'a' (it keeps references into 'a').
OptionTable sim_options(SimArgs &a);
// After parsing: the options that go together. -1 when they do, else the
// exit code (the error said on stderr).
int check_sim_args(const OptionTable &t, const SimArgs &a);

} // namespace loom::tool
