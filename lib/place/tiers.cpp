// loom placement: GPU classes, prices and tiers (tiers.hpp).
#include "lib/place/tiers.hpp"

#include "lib/place/topo_conf.hpp"
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

std::vector<std::string_view> split(std::string_view s, char sep)
{
	std::vector<std::string_view> out;
	size_t b = 0;
	for (;;) {
		size_t e = s.find(sep, b);
		out.push_back(s.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
		if (e == std::string_view::npos)
			return out;
		b = e + 1;
	}
}

expected<int> parse_clock(std::string_view s)
{
	auto colon = s.find(':');
	if (colon == std::string_view::npos)
		return unexpected("'" + std::string(s) + "': expected HH:MM");
	auto h = parse_int(s.substr(0, colon), 0, 24);
	auto m = parse_int(s.substr(colon + 1), 0, 59);
	if (!h || !m || (*h == 24 && *m != 0))
		return unexpected("'" + std::string(s) + "': expected HH:MM from 00:00 to 24:00");
	return static_cast<int>(*h * 60 + *m);
}

std::string money(double x)
{
	return strprintf("%.2f", x);
}

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

void add_tier_keys(ConfigSchema &schema, TierTable *t)
{
	schema.prefix("gpu_class",
		      "a GPU class: throughput:X[,train:X][,infer:X][,mem:SIZE][,price:X][,offpeak_price:X]",
		      [t](std::string_view name, std::string_view v) -> status {
			      PerfClass c;
			      c.name = std::string(name);
			      for (std::string_view item : split(v, ',')) {
				      auto colon = item.find(':');
				      if (colon == std::string_view::npos || colon == 0)
					      return unexpected("'" + std::string(item) + "': expected KEY:VALUE (throughput, train, "
											    "infer, mem, price, offpeak_price)");
				      std::string_view k = item.substr(0, colon), x = item.substr(colon + 1);
				      if (k == "mem") {
					      auto m = parse_size(x);
					      if (!m || *m == 0)
						      return unexpected("mem:'" + std::string(x) + "': expected a size per GPU (80G)");
					      c.mem = *m;
					      continue;
				      }
				      double *out = k == "throughput" ? &c.throughput : k == "train" ? &c.train
							    : k == "infer"	    ? &c.infer
							    : k == "price"	    ? &c.price
							    : k == "offpeak_price" ? &c.offpeak_price
										   : nullptr;
				      if (!out)
					      return unexpected("unknown class key '" + std::string(k) +
								"' (known: throughput, train, infer, mem, price, offpeak_price)");
				      bool speed = k == "throughput" || k == "train" || k == "infer";
				      auto r = parse_real(x, speed ? 1e-3 : 0, speed ? 1e3 : 1e9);
				      if (!r)
					      return unexpected(std::string(k) + ":'" + std::string(x) + "': " + r.error().str());
				      *out = *r;
			      }
			      t->classes.push_back(std::move(c));
			      return ok();
		      });
	schema.prefix("gpu_tier", "a site tier: value|balanced|fast[,min_class:CLASS][,mem:SIZE]",
		      [t](std::string_view name, std::string_view v) -> status {
			      for (const Tier &b : builtins)
				      if (b.name == name)
					      return unexpected("'" + std::string(name) + "' is a built-in tier (" +
								builtin_tier_words + ")");
			      Tier tier;
			      tier.name = std::string(name);
			      auto parts = split(v, ',');
			      auto o = parse_objective(parts[0]);
			      if (!o)
				      return unexpected(o.error());
			      tier.objective = *o;
			      for (size_t i = 1; i < parts.size(); i++) {
				      std::string_view item = parts[i];
				      auto colon = item.find(':');
				      std::string_view k = item.substr(0, colon);
				      std::string_view x = colon == std::string_view::npos ? "" : item.substr(colon + 1);
				      if (k == "min_class" && !x.empty()) {
					      tier.min_class = std::string(x);
				      } else if (k == "mem" && !x.empty()) {
					      auto m = parse_size(x);
					      if (!m || *m == 0)
						      return unexpected("mem:'" + std::string(x) + "': expected a size per GPU (80G)");
					      tier.min_mem = *m;
				      } else {
					      return unexpected("'" + std::string(item) + "': expected min_class:CLASS or mem:SIZE");
				      }
			      }
			      t->site_tiers.push_back(std::move(tier));
			      return ok();
		      });
	schema.add("offpeak", "hours when offpeak_price applies: HH:MM-HH:MM (slurmctld's local time)",
		   [t](std::string_view v) -> status {
			   auto dash = v.find('-');
			   if (dash == std::string_view::npos)
				   return unexpected("expected HH:MM-HH:MM");
			   auto a = parse_clock(v.substr(0, dash));
			   auto b = parse_clock(v.substr(dash + 1));
			   if (!a)
				   return unexpected(a.error());
			   if (!b)
				   return unexpected(b.error());
			   t->offpeak_from = *a % 1440;
			   t->offpeak_to = *b % 1440;
			   return ok();
		   });
}

status check_tiers(TierTable &t, std::vector<std::string> &gpu_classes, const std::string &where)
{
	if (t.classes.empty()) {
		if (!t.site_tiers.empty())
			return unexpected(where, "gpu_tier." + t.site_tiers[0].name + ": no gpu_class.NAME is defined");
		if (t.offpeak_from >= 0)
			return unexpected(where, "offpeak: no gpu_class.NAME is defined");
		return ok();
	}
	if (gpu_classes.empty()) {
		std::vector<const PerfClass *> by(t.classes.size());
		for (size_t i = 0; i < by.size(); i++)
			by[i] = &t.classes[i];
		std::stable_sort(by.begin(), by.end(),
				 [](const PerfClass *a, const PerfClass *b) { return a->throughput < b->throughput; });
		for (const PerfClass *c : by)
			gpu_classes.push_back(c->name);
	}
	for (const PerfClass &c : t.classes)
		if (std::find(gpu_classes.begin(), gpu_classes.end(), c.name) == gpu_classes.end())
			return unexpected(where, "gpu_class." + c.name + ": '" + c.name +
							 "' is not in gpu_classes (the node features naming GPU classes)");
	for (const Tier &tier : t.site_tiers)
		if (!tier.min_class.empty() && !t.find_class(tier.min_class))
			return unexpected(where, "gpu_tier." + tier.name + ": min_class '" + tier.min_class +
							 "' is not a class (" + t.class_words() + ")");
	bool priced = false, unpriced = false;
	for (const PerfClass &c : t.classes)
		(c.price > 0 ? priced : unpriced) = true;
	if (priced && unpriced)
		for (const PerfClass &c : t.classes)
			if (c.price <= 0)
				return unexpected(where, "gpu_class." + c.name +
								 ": no price, while other classes have one (value and balanced "
								 "compare prices: give every class one, or none)");
	return ok();
}

expected<TierTable> read_tier_table(const std::string &path)
{
	auto c = read_topo_conf(path);
	if (!c)
		return unexpected(c.error());
	return std::move(c->tiers);
}

status check_need(const TierTable &t, const Need &n)
{
	if (!n.given())
		return ok();
	if (t.empty())
		return unexpected(std::string(!n.tier.empty() ? "--gpu-tier" : !n.min_class.empty() ? "--gpu-min-class" : "--gpu-mem") +
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
						: strprintf("%.0f GiB per GPU, under %.0f GiB", double(c.mem) / (1ull << 30),
							    double(mem) / (1ull << 30));
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
		o.key = p.objective == Objective::value ? rel_cost
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
	const char *what = p.objective == Objective::value	  ? "lowest price per unit of work"
			   : p.objective == Objective::fast ? "highest throughput"
							    : "price per work x time per work";
	std::string s = p.tier.empty() ? strprintf("classes by %s", what)
				       : strprintf("tier %s (%s)", p.tier.c_str(), what);
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
