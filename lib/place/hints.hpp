// loom placement: the job's placement hints, one vocabulary wherever they are
// spelled: sbatch/salloc/srun options (spank_place), the job's SPANK
// environment read back in slurmctld (select/topo), the request's text form
// (`loom place --request`, the job_<id>.request files select/topo keeps for
// `loom place --explain`) and every printout of a request.
//
//   hint       words                      sbatch                   request text
//   comm       heavy | normal | light     --comm=heavy             comm=heavy
//   locality   KIND[:strict|:prefer]      --locality=leaf:strict   locality=leaf:strict
//   tier       value|balanced|fast|SITE   --gpu-tier=value         tier=value
//   min class  CLASS                      --gpu-min-class=h100     min_class=h100
//   GPU memory SIZE per GPU               --gpu-mem=80G            gpu_mem=80G
//   workload   train|infer                --gpu-workload=infer     workload=infer
//
// Tier and class names are the site's (loom-topo.conf, tiers.hpp): spank_place
// checks them at submit against that table.
//
// KIND is a domain kind of the fabric ("leaf", "pod", "spine", "nvlink"; `loom
// topo show` lists them) or a level number ("0" = the top): letters, digits,
// '-' and '_'. strict: the gang fits in one such domain or waits; prefer (the
// default when no mode is given): the same as a wish. A request is printed
// with its mode always spelled out ("leaf:strict", "pod:prefer").
//
// Request files written before this vocabulary said within=KIND (strict) and
// prefer=KIND; parse_request still reads them, format_request never writes them.
#pragma once

#include "lib/place/tiers.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace loom::place {

// How much the gang's ranks talk to each other.
enum class Comm : uint8_t { light, normal, heavy };
// Whether the gang must (strict) or should (prefer) fit in one domain.
enum class Locality : uint8_t { any, prefer, strict };

// The words, for option tables and help texts.
constexpr const char *comm_words = "heavy|normal|light";
constexpr const char *locality_words = "KIND[:strict|:prefer]";

// "heavy", "normal", "light". Errors: "bad value 'loud': expected heavy, normal or light".
expected<Comm> parse_comm(std::string_view word);
const char *comm_name(Comm c);

// A locality hint: the mode and the domain kind (or level) it applies to.
struct LocalityHint {
	Locality mode = Locality::any;
	std::string kind; // "" exactly when mode is any
};

// "leaf", "leaf:strict", "pod:prefer" ("" is an error: no hint is no word at
// all). Errors name the value and what is allowed.
expected<LocalityHint> parse_locality(std::string_view value);
// "leaf:strict", "pod:prefer"; "" for no hint. parse_locality gives it back.
std::string format_locality(const LocalityHint &h);
// "strict", "prefer", "any".
const char *locality_mode_name(Locality l);

// Every hint a job gives, as sbatch took it.
struct Hints {
	Comm comm = Comm::normal;
	LocalityHint locality;
	Need need; // --gpu-tier, --gpu-min-class, --gpu-mem, --gpu-workload
};

} // namespace loom::place
