// select/topo: what a value-tier job that may wait for its cheapest class
// sees of the nodes Slurm did not offer it (lib/place's place_need asks
// whether that class could hold the gang once its nodes free).
#pragma once

#include "lib/place/request.hpp"
#include "lib/place/state.hpp"
#include "plugins/select_topo/snapshot.hpp"

#include <memory>

namespace loom::select_topo {

// Adds to 'allowed' the nodes of the job's partition that Slurm did not
// offer and that will free: busy ones (too few free GPUs now) and completing
// ones (their jobs ended, epilogs still running; the State counts them free).
// Both count for the question and cannot be chosen: a completing node is
// given no free GPU in a copy of the State, returned (null when there is no
// completing node: the Snapshot's State serves as it is). Nodes free now
// that Slurm did not offer (reserved by backfill, excluded) stay out.
std::unique_ptr<place::State> add_waitable_nodes(const Snapshot &s, const job_record_t *job, const place::Request &req,
						 place::Allowed &allowed);

// The Snapshot's State replaced by 'view' for one decision (none when view
// is null), put back on destruction.
class StateView {
public:
	StateView(Snapshot &s, std::unique_ptr<place::State> view);
	~StateView();
	StateView(const StateView &) = delete;
	StateView &operator=(const StateView &) = delete;

private:
	Snapshot &s_;
	std::unique_ptr<place::State> kept_;
};

} // namespace loom::select_topo
