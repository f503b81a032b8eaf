// select/topo: the engine's snapshot of slurmctld (as cons_tres keeps its
// node_data/part_data): the fabric, the engine's free-capacity State and the
// map between Slurm's node table and the fabric model.
//
// Built when the fabric is loaded; refreshed from Slurm's node table only
// when an allocation or a node record may have changed, never rebuilt per
// job_test. Decisions are lib/place's; this file only converts.
#pragma once

#include "lib/place/fabric.hpp"
#include "lib/place/spares.hpp"
#include "lib/place/state.hpp"
#include "lib/place/topo_conf.hpp"
#include "lib/place/weights.hpp"
#include "plugins/common/slurm_internal.hpp"

#include <cstdint>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

namespace loom::select_topo {

struct Snapshot {
	place::TopoConf config;
	place::Fabric fabric;
	std::unique_ptr<place::State> state; // points into fabric.cluster: keep the Snapshot on the heap
	place::Weights weights;
	std::vector<topo::Index> model_of; // Slurm node index -> model node
	std::vector<int> slurm_of;         // model node -> Slurm node index (-1: not in Slurm)
	std::vector<std::string> kinds;    // what --locality takes on this fabric (checked at submit)
	// What the engine's State was last read from (see refresh()).
	uint64_t seen_weights = UINT64_MAX;
	time_t seen_node_update = -1;
	time_t swept_at = 0;   // when the last sweep of every node began
	size_t sweep_next = 0; // the sweep under way: the next Slurm node index it reads
	bool sweeping = false;
	// The spare pool (lib/place/spares.hpp) and where it is published.
	place::SpareSpec spare_spec;
	place::SparePool pool;
	std::string spare_file;
	time_t pool_seen_update = -1; // last_node_update the pool was computed at
	time_t pool_at = 0;
	bool pool_ready = false;

	// The model node of a Slurm node index (topo::none: not in the fabric).
	topo::Index model(int64_t slurm_index) const;
	// "n[1-4]": the model nodes' names as a hostlist.
	std::string names(const std::vector<topo::Index> &nodes) const;
};

// loom-topo.conf, the weights file and the fabric, mapped onto Slurm's node table.
expected<std::unique_ptr<Snapshot>> load_snapshot();

// What jobs hold may have changed: anywhere (the next refresh() reads every
// node), on a job's nodes, or on one node (the next refresh() reads those).
void snapshot_note_change() noexcept;
void snapshot_note_job(const job_record_t *job) noexcept;
void snapshot_note_node(int index) noexcept;

// Free GPUs, suspect marks and health weights from Slurm's node table into
// the engine's State: of the nodes noted since the last refresh, or of every
// node (see snapshot.cpp for when). A decision never reads the whole table
// unless a full read is due.
struct Refresh {
	size_t nodes = 0;  // nodes read
	bool full = false; // every node
	size_t swept = 0;  // of those, read by the sweep under way (sweep_slice at most)
};
// A sweep reads this many nodes per job_test, however large the cluster: its
// cost per decision does not grow with the node count.
constexpr size_t sweep_slice = 128;
Refresh refresh(Snapshot &s);

// The spare pool from the node table, when a node record changed (at most
// once a second: a pass over every node); published to spare_file, by the
// writer thread, when its spares changed.
void refresh_spares(Snapshot &s);

// Read these nodes again (the nodes a job is about to get: a suspect mark or
// a GPU count Slurm told no select plugin about); true when any differed.
bool recheck(Snapshot &s, const std::vector<topo::Index> &nodes);

// Where the engine's free GPUs differ from a full read of the node table
// ("" = nowhere): at most 'max' nodes named. The snapshot_check= test.
std::string snapshot_diff(const Snapshot &s, size_t max = 8);

// The nodes Slurm offers a job (its bitmap), as model nodes: nodes outside the
// fabric are not in 'allowed', but 'count' counts every node offered. With
// weights, each model node's scheduling weight (node_sched_weight) too.
struct Offered {
	place::Allowed allowed;
	std::vector<uint64_t> weight; // by model node; empty without weights
	size_t count = 0;
};
Offered offered_nodes(const Snapshot &s, bitstr_t *bitmap, bool weights = false, bool run_now = false);
// A Slurm bitmap (of bitmap_size bits) of the model nodes; 'within', when
// given, keeps only its nodes. The caller frees it.
bitstr_t *bitmap_of(const Snapshot &s, const std::vector<topo::Index> &nodes, int64_t bitmap_size,
		    bitstr_t *within = nullptr);

// DebugFlags=SelectType is on.
bool debug_on();
// Where decisions are kept for `loom place --explain` ("" = not kept).
std::string explain_dir(const Snapshot &s);

} // namespace loom::select_topo
