// loom: the GPUs in Slurm's GRES text, the job's request and the node's
// configuration alike: one reader for select/topo (the class a job is placed
// as), jobcomp/health (the class its failure counts against) and loom health
// (how many GPUs a node should have).
#pragma once

#include <string>
#include <string_view>

namespace loom {

// A job's GPU request in Slurm's TRES form: "gres/gpu:h100=8",
// "gres:gpu:h100:8", "gres/gpu:8", "gres/gpu=8", "gres/gpu", possibly among
// other GRES ("gres/nic:1,gres/gpu:a100:2"). "gres/gpumem=..." and
// "gres/mygpu:2" are not GPUs.
struct GresGpu {
	bool gpus = false; // the request names GPUs at all
	std::string type;  // "h100"; "" when untyped
};
GresGpu gres_gpu(std::string_view tres);

// The GPUs of a node's Gres= ("gpu:8", "gpu:h100:8(S:0-1)",
// "gpu:h100:4(S:0),gpu:a100:4(S:1),nic:2" -> 8); -1 when it names none, or
// none with a count ("(null)", "nic:2", "gpu:h100").
int gres_gpu_count(std::string_view node_gres);

} // namespace loom
