// loom placement: GPU classes, prices and tiers (tiers.hpp); their keys in
// loom-topo.conf are read in topo_conf.cpp.
#include "lib/place/tiers.hpp"

#include "lib/util/log.hpp"

#include <algorithm>
#include <cmath>

namespace loom::place {

namespace {

const Tier builtins[] = {
	{"value", Objective::value, "", 0, true},
	{"balanced", Objective::balanced, "", 0, true},
	{"fast", Objective::fast, "", 0, true},
};

std::string money(double x) { return strprintf("%.2f", x); }

} // namespace

const char *objective_name(Objective o)
{
	return o == Objective::value ? "value" : o == Objective::fast ? "fast" : "balanced";
}

expected<Objective> parse_objective(std::string_view w)
{
	if (w == "value")
		return Objective::value;
	if (w == "balanced")
		return Objective::balanced;
	if (w == "fast")
		return Objective::fast;
	return unexpected("bad objective '" + std::string(w) + "': expected value, balanced or fast");
}

const char *workload_name(Workload w)
{
	return w == Workload::train ? "train" : w == Workload::infer ? "infer" : "any";
}

expected<Workload> parse_workload(std::string_view w)
{
	if (w == "train")
		return Workload::train;
	if (w == "infer")
		return Workload::infer;
	if (w == "any")
		return Workload::any;
	return unexpected("bad value '" + std::string(w) + "': expected train or infer");
}

double PerfClass::speed(Workload w) const
{
	if (w == Workload::train && train > 0)
		return train;
	if (w == Workload::infer && infer > 0)
		return infer;
	return throughput;
}

const PerfClass *TierTable::find_class(std::string_view name) const
{
	for (const PerfClass &c : classes)
		if (c.name == name)
			return &c;
	return nullptr;
}

expected<Tier> TierTable::find_tier(std::string_view name) const
{
	for (const Tier &t : builtins)
		if (t.name == name)
			return t;
	for (const Tier &t : site_tiers)
		if (t.name == name)
			return t;
	std::string all;
	for (const Tier &t : builtins)
		all += (all.empty() ? "" : ", ") + t.name;
	for (const Tier &t : site_tiers)
		all += ", " + t.name;
	return unexpected("unknown tier '" + std::string(name) + "': this site has " + all);
}

std::string TierTable::tier_words() const
{
	std::string w = builtin_tier_words;
	for (const Tier &t : site_tiers)
		w += "|" + t.name;
	return w;
}

std::string TierTable::class_words() const
{
	std::string w;
	for (const PerfClass &c : classes)
		w += (w.empty() ? "" : "|") + c.name;
	return w;
}

bool TierTable::offpeak(int m) const
{
	if (offpeak_from < 0 || offpeak_to < 0 || offpeak_from == offpeak_to)
		return false;
	m = ((m % 1440) + 1440) % 1440;
	if (offpeak_from < offpeak_to)
		return m >= offpeak_from && m < offpeak_to;
	return m >= offpeak_from || m < offpeak_to;
}

double TierTable::price_at(const PerfClass &c, int m) const
{
	return c.offpeak_price >= 0 && offpeak(m) ? c.offpeak_price : c.price;
}

double TierTable::price_over(const PerfClass &c, int m, double minutes) const
{
	if (minutes <= 0 || c.offpeak_price < 0 || offpeak_from < 0 || offpeak_to < 0 || offpeak_from == offpeak_to)
		return price_at(c, m);
	// Whole days at the day's mean, then the rest minute by minute (at most
	// 1439 steps).
	double day_off = 0;
	for (int k = 0; k < 1440; k++)
		day_off += offpeak(k) ? 1 : 0;
	double days = std::floor(minutes / 1440);
	double off = days * day_off, rest = minutes - days * 1440;
	int start = ((m % 1440) + 1440) % 1440;
	int whole = static_cast<int>(rest);
	for (int k = 0; k < whole; k++)
		off += offpeak(start + k) ? 1 : 0;
	off += (rest - whole) * (offpeak(start + whole) ? 1 : 0);
	return (off * c.offpeak_price + (minutes - off) * c.price) / minutes;
}

int TierTable::minutes_to_offpeak(int m) const
{
	if (offpeak_from < 0 || offpeak_to < 0 || offpeak_from == offpeak_to)
		return -1;
	m = ((m % 1440) + 1440) % 1440;
	if (offpeak(m))
		return 0;
	return ((offpeak_from - m) % 1440 + 1440) % 1440;
}

int64_t wait_budget(double share, int64_t limit_s, int64_t waited_s, int64_t slack_s)
{
	int64_t b = 0;
	if (limit_s > 0 && share > 0)
		b = static_cast<int64_t>(share * static_cast<double>(limit_s)) - std::max<int64_t>(0, waited_s);
	else if (slack_s != no_deadline && share > 0)
		b = slack_s; // no limit: the deadline alone bounds it
	if (slack_s != no_deadline)
		b = std::min(b, slack_s);
	return std::max<int64_t>(0, b);
}

status check_need(const TierTable &t, const Need &n)
{
	if (!n.given())
		return ok();
	if (t.empty())
		return unexpected(std::string(!n.tier.empty()        ? "--gpu-tier"
					      : !n.min_class.empty() ? "--gpu-min-class"
								     : "--gpu-mem") +
				  ": this site defines no GPU classes (gpu_class.NAME= in loom-topo.conf)");
	if (!n.tier.empty())
		if (auto tier = t.find_tier(n.tier); !tier)
			return unexpected(tier.error().within("--gpu-tier"));
	if (!n.min_class.empty() && !t.find_class(n.min_class)) {
		std::string all;
		for (const PerfClass &c : t.classes)
			all += (all.empty() ? "" : ", ") + c.name;
		return unexpected("--gpu-min-class: unknown class '" + n.min_class + "': this site has " + all);
	}
	return ok();
}

expected<TierPlan> plan_tier(const TierTable &t, const Need &n, int minute, double run_minutes, double balance_time)
{
	if (auto st = check_need(t, n); !st)
		return unexpected(st.error());
	TierPlan p;
	Tier tier;
	if (!n.tier.empty())
		tier = *t.find_tier(n.tier);
	p.objective = tier.objective;
	p.tier = n.tier;
	p.offpeak = t.offpeak(minute);
	// The bounds: the tier's and the job's own.
	std::vector<std::pair<std::string, std::string>> min_classes; // (class, whose)
	if (!tier.min_class.empty())
		min_classes.emplace_back(tier.min_class, "tier " + tier.name);
	if (!n.min_class.empty())
		min_classes.emplace_back(n.min_class, "--gpu-min-class");
	std::vector<ClassOption> ok_, out;
	double best_speed = 0, best_cpw = 0;
	for (const PerfClass &c : t.classes) {
		ClassOption o;
		o.name = c.name;
		o.speed = c.speed(n.workload);
		o.price = t.price_over(c, minute, run_minutes);
		o.cost_per_work = o.price > 0 ? o.price / o.speed : 0;
		for (const auto &[m, whose] : min_classes) {
			const PerfClass *mc = t.find_class(m);
			if (mc && o.speed < mc->speed(n.workload) && o.excluded.empty())
				o.excluded = strprintf("slower than %s (%s)", m.c_str(), whose.c_str());
		}
		uint64_t mem = std::max(tier.min_mem, n.min_mem);
		if (mem > 0 && o.excluded.empty() && c.mem < mem)
			o.excluded = c.mem == 0 ? "its memory is not given (gpu_class." + c.name + " mem:)"
						: strprintf("%.0f GiB per GPU, under %.0f GiB",
							    double(c.mem) / (1ull << 30), double(mem) / (1ull << 30));
		if (o.excluded.empty()) {
			best_speed = std::max(best_speed, o.speed);
			if (o.cost_per_work > 0 && (best_cpw == 0 || o.cost_per_work < best_cpw))
				best_cpw = o.cost_per_work;
			ok_.push_back(o);
		} else {
			out.push_back(o);
		}
	}
	for (ClassOption &o : ok_) {
		double rel_cost = best_cpw > 0 && o.cost_per_work > 0 ? o.cost_per_work / best_cpw : 1;
		double rel_time = o.speed > 0 ? best_speed / o.speed : 1;
		o.key = p.objective == Objective::value  ? rel_cost
			: p.objective == Objective::fast ? rel_time
							 : rel_cost * std::pow(rel_time, balance_time);
	}
	// Ties: value takes the slower class (keeps fast GPUs for those who need
	// them), fast and balanced the cheaper per work.
	std::stable_sort(ok_.begin(), ok_.end(), [&](const ClassOption &a, const ClassOption &b) {
		if (std::fabs(a.key - b.key) > 1e-9)
			return a.key < b.key;
		if (p.objective == Objective::value)
			return a.speed < b.speed;
		return a.cost_per_work < b.cost_per_work;
	});
	p.eligible = ok_.size();
	p.options = std::move(ok_);
	p.options.insert(p.options.end(), out.begin(), out.end());
	return p;
}

std::string describe_plan(const TierPlan &p)
{
	const char *what = p.objective == Objective::value  ? "lowest price per unit of work"
			   : p.objective == Objective::fast ? "highest throughput"
							    : "price per work x time per work";
	std::string s =
		p.tier.empty() ? strprintf("classes by %s", what) : strprintf("tier %s (%s)", p.tier.c_str(), what);
	if (p.offpeak)
		s += ", off-peak prices";
	s += ":";
	for (size_t i = 0; i < p.eligible; i++) {
		const ClassOption &o = p.options[i];
		s += strprintf("%s%s x%.3g", i ? ", " : " ", o.name.c_str(), o.speed);
		if (o.price > 0)
			s += " " + money(o.price) + "/GPU-h = " + money(o.cost_per_work) + "/work";
	}
	if (p.eligible == 0)
		s += " none eligible";
	for (size_t i = p.eligible; i < p.options.size(); i++)
		s += strprintf("%s%s excluded: %s", i == p.eligible ? "; " : ", ", p.options[i].name.c_str(),
			       p.options[i].excluded.c_str());
	return s;
}

} // namespace loom::place
