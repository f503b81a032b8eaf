// select/topo's job_test, the request (job_test_parts.hpp): the job's hints
// and its place::Request, the request as `loom place --explain` replays it,
// the nodes it is offered (spares withheld) and those it requires.
#include "plugins/select_topo/job_test_parts.hpp"

#include "lib/place/gpu_class.hpp"
#include "lib/util/hostlist.hpp"
#include "plugins/common/place_hints.hpp"

#include <algorithm>

namespace loom::select_topo::job_test_parts {

place::Hints job_hints(const JobAsk &ask)
{
	auto h = plugin::hints_from_env(ask.spank_env, ask.spank_env_size);
	if (h)
		return *h;
	error("select/topo: JobId=%u: %s: placement hints ignored", ask.job_id, h.error().str().c_str());
	return {};
}

place::Request make_request(const Snapshot &s, const JobAsk &ask, const place::Hints &hints, const Call &c,
			    size_t offered)
{
	place::Request r;
	r.min_nodes = static_cast<int>(c.min_nodes);
	uint32_t maxn = c.max_nodes < offered ? c.max_nodes : static_cast<uint32_t>(offered);
	r.max_nodes = maxn > c.min_nodes ? static_cast<int>(maxn) : 0;
	if (ask.gpus_per_node > 0)
		r.gpus_per_node = ask.gpus_per_node;
	else if (ask.gpus_total > 0)
		r.gpus = static_cast<int>(ask.gpus_total);
	r.whole_node = ask.whole_node;
	r.gpu_class = place::job_gpu_class(ask.features, ask.gpu_tres, s.config.gpu_classes);
	r.need = hints.need;
	if (!r.gpu_class.empty() && r.need.given()) {
		// A model named in --constraint (or the GRES type) is what Slurm
		// filters nodes by: it wins over the tier.
		if (debug_on())
			info("select/topo: JobId=%u: --constraint names class %s: --gpu-tier and its bounds do not "
			     "apply",
			     ask.job_id, r.gpu_class.c_str());
		r.need = {};
	}
	if (r.need.given()) {
		// Prices over the run; a value tier's time to wait for a cheaper
		// start (Weights::value_wait), now: in RUN_NOW, and in backfill's
		// WILL_RUN to know whether the job waits by choice.
		r.limit_s = ask.time_limit_s;
		if (c.mode == SELECT_MODE_RUN_NOW || c.mode == SELECT_MODE_WILL_RUN) {
			int64_t now = time(nullptr);
			int64_t waited = ask.eligible_at > 0 ? now - ask.eligible_at : 0;
			int64_t slack = ask.deadline > 0 ? ask.deadline - now - ask.time_limit_s : place::no_deadline;
			r.may_wait_s = place::wait_budget(s.weights.value_wait, ask.time_limit_s, waited, slack);
		}
	}
	r.comm = hints.comm;
	r.locality = hints.locality.mode;
	r.locality_level = hints.locality.kind;
	if (ask.max_switches > 0)
		r.max_leaves = static_cast<int>(ask.max_switches);
	return r;
}

// The request as replayed by `loom place --explain`: nodes Slurm did not offer
// this job are excluded by name.
std::string replay_request(const Snapshot &s, place::Request req, const place::Allowed &allowed)
{
	const topo::Cluster &c = s.fabric.cluster;
	std::vector<std::string> out;
	for (size_t m = 0; m < c.nodes.size(); m++)
		if (!allowed.test(static_cast<topo::Index>(m)))
			out.push_back(c.nodes[m].name);
	if (!out.empty())
		req.exclude = {hostlist_compress(out)};
	return place::format_request(req) + "\n";
}

// The spare pool's rule (lib/place/spares.hpp): spares are taken out of the
// nodes Slurm offers a job that may not use them, in every mode that gives
// or plans nodes, whoever places the job. A job may: when its time limit is
// at most spare_lend, when it runs in a reservation (a replacement's, or an
// admin's: Slurm offers it only the reservation's nodes), and on a node it
// asked for by name.
size_t withhold_spares(Snapshot &s, const JobAsk &ask, bitstr_t *bitmap)
{
	refresh_spares(s);
	if (!s.pool_ready || ask.in_reservation || place::may_borrow_spares(s.spare_spec, ask.time_limit_s))
		return 0;
	size_t n = 0;
	int64_t size = bit_size(bitmap);
	for (const place::SpareDomain &d : s.pool.domains)
		for (topo::Index m : d.spares) {
			int i = s.slurm_of[static_cast<size_t>(m)];
			if (i < 0 || i >= size || !bit_test(bitmap, i) ||
			    std::find(ask.required.begin(), ask.required.end(), i) != ask.required.end())
				continue;
			bit_clear(bitmap, i);
			n++;
		}
	return n;
}

bool required_in_fabric(const Snapshot &s, const JobAsk &ask, place::SlurmConstraints &cons)
{
	for (int i : ask.required) {
		topo::Index m = s.model(i);
		if (m == topo::none)
			return false;
		cons.required.push_back(m);
	}
	return true;
}

} // namespace loom::select_topo::job_test_parts
