// loom placement: what a job asks for, and its one-line text form.
//
// The text form is what `loom place --request` reads and what the select/topo
// plugin writes when it dumps a decision, so that the decision can be replayed:
//
//   nodes=4 gpus_per_node=8 class=h100 comm=heavy locality=pod:strict
//
// Keys (each at most once; unknown keys and bad values are errors):
//   nodes=N | nodes=MIN-MAX   node count (default 1)
//   gpus_per_node=G           GPUs on every node (0 = none)
//   gpus=T                    GPUs in total, spread over MIN..MAX nodes
//   cores_per_node=C          cores on every node
//   exclusive=yes             whole nodes: every GPU and core of each node
//   class=NAME                GPU performance class from the cluster ("" or "any" = any)
//   faster=yes                a faster class may be used when the class asked for is full
//   comm=heavy|normal|light   communication intensity (default normal), as sbatch --comm
//   locality=KIND[:strict|:prefer]
//                             the gang must (strict) or should (prefer, the default)
//                             fit in one domain of this kind ("leaf", "pod") or
//                             level ("0" = root), as sbatch --locality (hints.hpp)
//   switches=N                at most N leaf domains (Slurm --switches)
//   exclude=HOSTLIST          nodes the job may not use
//   tier=NAME                 a GPU tier instead of a class (value, balanced, fast or a
//                             site tier: tiers.hpp), as sbatch --gpu-tier
//   min_class=NAME            classes at least this fast (--gpu-min-class)
//   gpu_mem=SIZE              memory per GPU at least (--gpu-mem)
//   workload=train|infer      which throughput of a class counts (--gpu-workload)
//   mixed=yes                 the gang may span GPU classes when no one class of its
//                             tier holds it (--gpu-mixed)
//   limit=SECONDS             the job's time limit: a tier's prices are taken over the
//                             run (off-peak hours at their price)
//   may_wait=SECONDS          how much longer a value-tier job may wait for its
//                             cheapest class or cheaper hours (Weights::value_wait)
// Read, never written: within=KIND (locality=KIND:strict) and prefer=KIND
// (locality=KIND:prefer), from request files kept before the one spelling.
#pragma once

#include "lib/place/hints.hpp"
#include "lib/place/tiers.hpp"
#include "lib/util/expected.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace loom::place {

struct Request {
	int min_nodes = 1;
	int max_nodes = 0;     // 0: same as min_nodes
	int gpus_per_node = 0; // 0: no per-node GPU request
	int gpus = 0;          // total GPUs, used when gpus_per_node is 0
	int cores_per_node = 0;
	bool whole_node = false; // exclusive nodes
	std::string gpu_class;   // "" = any class
	bool allow_faster_class = false;
	Comm comm = Comm::normal;
	Locality locality = Locality::any;
	std::string locality_level;       // domain kind ("leaf", "pod", ...) or a level number ("0" = root)
	int max_leaves = 0;               // 0: no limit
	std::vector<std::string> exclude; // node names or hostlists ("n[1-4]")
	Need need;                        // a tier or bounds instead of a class (tiers.hpp)
	int64_t limit_s = 0;              // time limit, seconds (0: none given)
	int64_t may_wait_s = 0;           // a value tier may wait this long for a cheaper start

	int node_limit() const { return max_nodes > 0 ? max_nodes : min_nodes; }
};

// "80G", "1536M", "4096": a size as parse_size reads it back.
std::string format_size(uint64_t bytes);

// Parse the text form; 'where' names the source in errors.
expected<Request> parse_request(std::string_view text, const std::string &where = "request");
// The text form (parse_request(format_request(r)) gives r back).
std::string format_request(const Request &r);
// Consistency: counts in range, gpus and gpus_per_node not both, ...
status check_request(const Request &r);

} // namespace loom::place
