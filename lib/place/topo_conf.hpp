// loom-topo.conf beside slurm.conf (optional): the one reader of the file,
// for every process that reads it: select/topo in slurmctld, spank_place in
// sbatch, salloc and srun (the tiers, at submit) and, through loom_fabric.so,
// in slurmstepd (the fabric: fabric.hpp), and `loom place` / `loom sim`
// (--topo-conf). Each sees the whole file, so a typo is refused by all of
// them with the same message, not accepted by some.
//
//   cluster_file=/etc/slurm/loom-cluster.json  fabric (any format `loom topo` reads);
//                                              default: Slurm's topology.conf
//   gpu_classes=a100,h100                      node features naming GPU generations,
//                                              slowest first
//   gpu_class.NAME=throughput:X,mem:SIZE,price:X,...
//   gpu_tier.NAME=value|balanced|fast[,min_class:C][,mem:SIZE]
//   offpeak=HH:MM-HH:MM                        performance classes, prices and tiers
//                                              (tiers.hpp)
//   level_names=leaf,su,spine                  the fabric's levels, for a file that names none
//   max_candidates=3                           node sets tried with cons_tres per job
//   placement=topo                             topo, or cons_tres: no placement of loom's,
//                                              every job placed by cons_tres (timed, for
//                                              comparison and as an off switch)
//   will_run=engine                            backfill's plans (WILL_RUN): the engine's
//                                              nodes at cons_tres's start time, or
//                                              cons_tres: cons_tres's own plan
//   weights=/etc/slurm/loom-weights.conf       placement weights (loom-place(1))
//   explain_dir=/var/spool/slurmctld/loom      with DebugFlags=SelectType: one
//                                              state+request file per decision,
//                                              for `loom place --explain`
//   failure_stats=PATH|none                    jobcomp/health's failure statistics,
//                                              for node health weights; default:
//                                              its file when JobCompType=jobcomp/health
//   failure_stats_poll=10s                     how often the file is checked
//   node_sweep=10s, snapshot_check=no          select/topo's reads of the node table
//   spares=leaf:1,pod:5%                       spare nodes kept per domain kind
//                                              (spare_spec.hpp); default none
//   spare_lend=30min                           jobs with a time limit up to this may
//                                              run on spares (0: none)
//   spare_file=PATH                            where the pool is published; default
//                                              StateSaveLocation/loom-spares.json
//
// Parsed fail-closed: an unknown or repeated key or a bad value is an error
// naming the file, line, key and value; what only the whole file can tell
// (a class missing from gpu_classes) names the file and the key. Slurm-free,
// and free of the fabric model: spank_place compiles it in (with tiers.cpp,
// spare_spec.cpp and lib/util's config, fs and log).
#pragma once

#include "lib/place/tiers.hpp"
#include "lib/util/config.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::place {

struct TopoConf {
	std::string path; // the file read ("" = none, defaults)
	std::string cluster_file;
	std::vector<std::string> gpu_classes;
	TierTable tiers;                      // gpu_class.NAME, gpu_tier.NAME, offpeak
	std::vector<std::string> level_names; // kinds by height for a fabric that names none
	int64_t max_candidates = 3;
	std::string placement = "topo";
	std::string will_run = "engine";
	std::string weights_file;
	std::string explain_dir;
	std::string failure_stats; // "" = default, "none" = off
	int64_t failure_stats_poll_s = 10;
	// How often, at most, the whole node table is read for what Slurm does
	// not tell a select plugin (a suspect mark in Extra/Comment, a GPU count
	// changed by scontrol on 24.11+). Allocations are followed node by node
	// at once, and the nodes a job is about to get are always read first.
	int64_t node_sweep_s = 10;
	// Compare the engine's free GPUs with a full read of the node table at
	// every job_test and log any difference (tests; costs the full read).
	bool snapshot_check = false;
	// The spare pool (spares.hpp): spares per domain kind (checked by
	// parse_spares here, against the fabric's kinds by select/topo), the
	// longest job that may borrow a spare, and where the pool is published
	// for jobcomp/health and `loom place --spares` ("" = StateSaveLocation/loom-spares.json).
	std::string spares;
	int64_t spare_lend_s = 1800;
	std::string spare_file;
};

// The keys, bound to 'c' (the tier keys too); read before parsing, its
// values are the defaults.
ConfigSchema topo_conf_schema(TopoConf &c);
// Reads 'path' if it exists; a missing file gives the defaults, one that
// exists and cannot be read is an error.
expected<TopoConf> read_topo_conf(const std::string &path);

} // namespace loom::place
