// loom health: the spare pool file and the replacement of failed nodes.
//
// select/topo computes the spare pool (lib/place/spares.hpp) and writes it,
// whenever it changes, to StateSaveLocation/loom-spares.json (spare_file=
// in loom-topo.conf). jobcomp/health and `loom spares` read it. The file:
//
//   {"format": "loom-spares/1", "written": 1764800000, "lend_max_s": 1800,
//    "domains": [{"kind": "leaf", "name": "leaf1", "nodes": "n[1-4]",
//                 "want": 1, "spares": "n4"}, ...]}
//
// nodes and spares are Slurm hostlists; domains come rule by rule, in the
// order of spares= (so the first domain holding a node is its tightest).
//
// A replacement (jobcomp/health, when it requeues an infrastructure failure
// whose culprits it named): every culprit is replaced by a spare of the
// first domain in the file that holds it and still has one, else of the next
// (a leaf's, then a pod's); an idle spare before one a short job borrowed. All
// of the job's culprits are replaced, or none is: the job then takes the
// normal requeue and waits whole, as it would without spares.
#pragma once

#include "lib/health/slurm_ops.hpp"
#include "lib/place/spares.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace loom::health {

constexpr const char *spare_file_format = "loom-spares/1";

struct SpareFile {
	struct Domain {
		std::string kind, name;
		std::vector<std::string> nodes, spares;
		int want = 0;
	};
	int64_t written = 0;
	int64_t lend_max_s = 0;
	std::vector<Domain> domains;
};

std::string spare_file_json(const SpareFile &f);
// Strict: an unknown field, a bad hostlist or a spare outside its domain is
// an error naming the JSON path.
expected<SpareFile> parse_spare_file(std::string_view text, const std::string &source);
expected<SpareFile> read_spare_file(const std::string &path);

struct Replacement {
	bool ok = false;
	std::vector<std::string> nodes;                           // the job's new nodes (old healthy + spares), sorted
	std::vector<std::pair<std::string, std::string>> swaps;   // culprit -> spare
	std::vector<std::string> domains;                         // the spare's domain, per swap
	std::string why;                                          // when !ok: what was missing
	// "n2 -> n4 (leaf leaf1), n3 -> n8 (pod pod1)"
	std::string summary() const;
};
// states: `scontrol show node` of the candidate spares (a spare missing from
// it, drained, down, not responding, reserved or rebooting is not used).
// busy_until: for a busy candidate, when the last job on it reaches its time
// limit (seconds since the epoch; absent: unknown or no limit). A busy spare
// is waited for only when that is within the pool's lend_max_s of now: a
// borrower's; a job that was on the node before it became a spare could hold
// the replacement for days.
Replacement plan_replacement(const SpareFile &pool, const std::vector<std::string> &job_nodes,
			     const std::vector<std::string> &culprits, const std::map<std::string, SlurmNode> &states,
			     const std::map<std::string, int64_t> &busy_until = {}, int64_t now = 0);
// The file of a pool (lib/place/spares.hpp) chosen at 'now' on this fabric.
SpareFile spare_file_of(const topo::Cluster &c, const place::SparePool &pool, int64_t lend_max_s, int64_t now);

// The spares plan_replacement may look at for these culprits (to ask Slurm
// for their states first).
std::vector<std::string> candidate_spares(const SpareFile &pool, const std::vector<std::string> &culprits);

} // namespace loom::health
