// loom placement: GPU performance classes, prices and tiers: a job asks for a
// need ("the cheapest capacity that trains this", "the fastest free now")
// instead of a model, and the engine picks the class.
//
// One table, read from loom-topo.conf (topo_conf.hpp) by select/topo
// (placement, and the price in the job's record), by spank_place at submit
// (the names a job may give, refused otherwise with the list, and shown in
// --help) and by `loom place` / `loom sim`:
//
//   gpu_classes=a100,h100,b200                 the node features naming classes, slowest first
//   gpu_class.a100=throughput:1,mem:80G,price:1.10
//   gpu_class.h100=throughput:2,train:2,infer:2.4,mem:80G,price:1.90,offpeak_price:1.40
//   gpu_class.b200=throughput:3,mem:192G,price:2.60
//   offpeak=22:00-06:00                        when offpeak_price applies (slurmctld's local time)
//   gpu_tier.cheap=value,mem:80G               a site tier: an objective and optional bounds
//   gpu_tier.urgent=fast,min_class:h100
//
// A class: throughput per GPU relative to a reference class (1), optionally
// per workload kind (train:, infer:; default the throughput), memory per GPU,
// a price per GPU-hour (any currency; 0 or absent: not priced) and an
// optional off-peak price.
//
// Tiers, built in: value (lowest price per unit of work: price / throughput),
// fast (highest throughput), balanced (lowest price per work x time per work,
// each relative to the best class: neither the cheapest slow class nor the
// dearest fast one when a class between is free). Site tiers name one of these
// objectives and may bound the classes: min_class: (throughput at least that
// class's), mem: (memory per GPU at least). A job's own --gpu-min-class and
// --gpu-mem bound it the same way.
//
// The engine tries the classes in the objective's order and takes the first
// that holds the whole gang now (a gang never spans classes); the explanation
// lists every class considered, its figures, and why each before the chosen
// one lost (excluded, or no room now).
#pragma once

#include "lib/util/config.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loom::place {

enum class Objective : uint8_t { value, balanced, fast };
enum class Workload : uint8_t { any, train, infer };

constexpr const char *builtin_tier_words = "value|balanced|fast";
constexpr const char *workload_words = "train|infer";

const char *objective_name(Objective o);
expected<Objective> parse_objective(std::string_view word);
const char *workload_name(Workload w);
// "train", "infer" (and "any", for a request's text form).
expected<Workload> parse_workload(std::string_view word);

struct PerfClass {
	std::string name;
	double throughput = 1;
	double train = 0, infer = 0; // 0: the throughput
	uint64_t mem = 0;            // bytes per GPU; 0: not given
	double price = 0;            // per GPU-hour; 0: not priced
	double offpeak_price = -1;   // < 0: the price at every hour

	double speed(Workload w) const;
};

struct Tier {
	std::string name;
	Objective objective = Objective::balanced;
	std::string min_class; // "" = none
	uint64_t min_mem = 0;
	bool builtin = false;
};

class TierTable {
public:
	std::vector<PerfClass> classes; // in definition order
	std::vector<Tier> site_tiers;
	int offpeak_from = -1, offpeak_to = -1; // minutes of the day, [from, to) wrapping midnight; -1: none

	bool empty() const { return classes.empty(); }
	const PerfClass *find_class(std::string_view name) const;
	// A built-in or site tier; the error lists every tier name.
	expected<Tier> find_tier(std::string_view name) const;
	// "value|balanced|fast|cheap|urgent", "a100|h100|b200".
	std::string tier_words() const;
	std::string class_words() const;
	bool offpeak(int minute_of_day) const;
	double price_at(const PerfClass &c, int minute_of_day) const;
	// The mean price per GPU-hour of a run of 'minutes' starting at
	// 'minute_of_day' (off-peak hours at their price); minutes <= 0: price_at.
	double price_over(const PerfClass &c, int minute_of_day, double minutes) const;
	// Minutes from 'minute_of_day' to the next start of off-peak hours; 0
	// inside them; -1 when the table has none.
	int minutes_to_offpeak(int minute_of_day) const;
};

// The table in loom-topo.conf (add_tier_keys, check_tiers and read_tier_table
// are in topo_conf.cpp, beside the file's other keys).
// Registers gpu_class.NAME, gpu_tier.NAME and offpeak on a schema, filling t.
void add_tier_keys(ConfigSchema &schema, TierTable *t);
// Once the file is read: every site tier's min_class is a class, every class
// is one of gpu_classes (the node features; when gpu_classes is empty, it is
// set to the defined classes, slowest first). Errors name 'where' and the key.
status check_tiers(TierTable &t, std::vector<std::string> &gpu_classes, const std::string &where);

// The table of a loom-topo.conf, for spank_place at submit, `loom place` and
// `loom sim`: the whole file read as select/topo reads it (read_topo_conf,
// topo_conf.hpp), so a key that slurmctld refuses is refused here too, with
// the same message. A missing file is an empty table.
expected<TierTable> read_tier_table(const std::string &path);

// What a job asked for instead of (or on top of) a model.
struct Need {
	std::string tier;      // "" = none
	std::string min_class; // "" = none
	uint64_t min_mem = 0;  // bytes per GPU
	Workload workload = Workload::any;
	bool mixed = false; // the gang may span classes (--gpu-mixed): only when no one class holds it

	bool given() const { return !tier.empty() || !min_class.empty() || min_mem > 0; }
};

// How much longer a job whose tier can wait (value) may wait for its
// cheapest class or cheaper hours: 'share' of its time limit, less what it
// has waited since it became eligible, and never past the latest start that
// still ends by its deadline (deadline_slack_s: deadline - now - time limit;
// no_deadline without one). With neither a time limit nor a deadline nothing
// bounds the wait: none. Seconds, at least 0.
constexpr int64_t no_deadline = INT64_MIN;
int64_t wait_budget(double share, int64_t time_limit_s, int64_t waited_s, int64_t deadline_slack_s);

// The need's names checked against the table: errors name the option and
// list what is allowed ("--gpu-tier: unknown tier 'cheapest': this site has
// value, balanced, fast, cheap").
status check_need(const TierTable &t, const Need &n);

// One class as the tier saw it.
struct ClassOption {
	std::string name;
	double speed = 1;         // for the job's workload
	double price = 0;         // per GPU-hour now
	double cost_per_work = 0; // price / speed (0 when not priced)
	double key = 0;           // the objective's figure (lower first)
	std::string excluded;     // why the tier cannot use it ("" = eligible)
};

struct TierPlan {
	Objective objective = Objective::balanced;
	std::string tier;                 // the tier's name ("" = none: bounds only, balanced)
	std::vector<ClassOption> options; // eligible first in the order to try, then the excluded
	size_t eligible = 0;
	bool offpeak = false;
};

// The classes to try for the need, at 'minute_of_day' (prices: their mean
// over a run of 'run_minutes' from then, the job's time limit; 0: the price
// at that minute). balance_time is the weight of time in balanced's key:
// (price per work / best) x (time per work / best)^balance_time (Weights). An
// error when the need names what the table lacks; a plan with eligible = 0
// when its bounds exclude every class (each option says why).
expected<TierPlan> plan_tier(const TierTable &t, const Need &n, int minute_of_day, double run_minutes = 0,
			     double balance_time = 1);

// "tier value (lowest price per unit of work): b200 0.87/work, h100 0.95/work,
// a100 1.10/work; excluded: ..." for --explain and logs.
std::string describe_plan(const TierPlan &p);

} // namespace loom::place
