// loom placement: the GPU class a job asks for, from what it gave Slurm.
//
// One rule, for select/topo and for anyone who wants to know what class a job
// is placed as: the first GPU class named in --constraint ("h100",
// "h100&ib", "[a100|h100]"); else the GPU type of its GRES request
// (--gres=gpu:h100:8, --gpus-per-node=h100:8, --gpus=h100:16) when that type
// is a class the nodes have; else any class (""). Classes are what the nodes
// carry: the node features loom-topo.conf's gpu_classes= names.
#pragma once

#include "lib/util/gres.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace loom::place {

// The class the job is placed as ("" = any). constraint: --constraint as
// given; tres: the GPU request (per node, per job or per task); classes: the
// GPU classes of the nodes.
std::string job_gpu_class(std::string_view constraint, std::string_view tres, const std::vector<std::string> &classes);

} // namespace loom::place
