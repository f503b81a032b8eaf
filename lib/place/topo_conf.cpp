// loom-topo.conf, read whole and fail-closed (topo_conf.hpp), with its GPU
// class, tier and off-peak keys (tiers.hpp).
#include "lib/place/topo_conf.hpp"

#include "lib/place/spare_spec.hpp"
#include "lib/util/config.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace loom::place {
namespace {

// A path select/topo opens from slurmctld, whatever its working directory.
ConfigSchema::Setter absolute_path(std::string *out, bool or_none)
{
	return [out, or_none](std::string_view v) -> status {
		if (v.empty() || (v[0] != '/' && !(or_none && v == "none")))
			return unexpected(or_none ? "expected an absolute path or none" : "expected an absolute path");
		*out = std::string(v);
		return ok();
	};
}

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

// gpu_class.NAME=throughput:X[,train:X][,infer:X][,mem:SIZE][,price:X][,offpeak_price:X]
status add_class(TierTable &t, std::string_view name, std::string_view v)
{
	PerfClass c;
	c.name = std::string(name);
	for (std::string_view item : split(v, ',')) {
		auto colon = item.find(':');
		if (colon == std::string_view::npos || colon == 0)
			return unexpected(
				"'" + std::string(item) +
				"': expected KEY:VALUE (throughput, train, infer, mem, price, offpeak_price)");
		std::string_view k = item.substr(0, colon), x = item.substr(colon + 1);
		if (k == "mem") {
			auto m = parse_size(x);
			if (!m || *m == 0)
				return unexpected("mem:'" + std::string(x) + "': expected a size per GPU (80G)");
			c.mem = *m;
			continue;
		}
		double *out = k == "throughput"      ? &c.throughput
			      : k == "train"         ? &c.train
			      : k == "infer"         ? &c.infer
			      : k == "price"         ? &c.price
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
	t.classes.push_back(std::move(c));
	return ok();
}

// gpu_tier.NAME=value|balanced|fast[,min_class:CLASS][,mem:SIZE]
status add_site_tier(TierTable &t, std::string_view name, std::string_view v)
{
	if (TierTable().find_tier(name)) // a table without site tiers finds the built-in ones only
		return unexpected("'" + std::string(name) + "' is a built-in tier (" + builtin_tier_words + ")");
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
	t.site_tiers.push_back(std::move(tier));
	return ok();
}

// offpeak=HH:MM-HH:MM
status set_offpeak(TierTable &t, std::string_view v)
{
	auto dash = v.find('-');
	if (dash == std::string_view::npos)
		return unexpected("expected HH:MM-HH:MM");
	auto a = parse_clock(v.substr(0, dash));
	auto b = parse_clock(v.substr(dash + 1));
	if (!a)
		return unexpected(a.error());
	if (!b)
		return unexpected(b.error());
	t.offpeak_from = *a % 1440;
	t.offpeak_to = *b % 1440;
	return ok();
}

void add_keys(ConfigSchema &s, TopoConf &c)
{
	s.string("cluster_file", &c.cluster_file, "fabric file (default: Slurm's topology.conf)")
		.list("gpu_classes", &c.gpu_classes, "GPU generation features, slowest first")
		.list("level_names", &c.level_names,
		      "names of the fabric's levels from the leaves up (--locality kinds)")
		.integer("max_candidates", &c.max_candidates, 1, 16, "node sets tried per job")
		.choice("placement", &c.placement, {"topo", "cons_tres"}, "who places jobs")
		.choice("will_run", &c.will_run, {"engine", "cons_tres"}, "who plans backfill's starts")
		.string("weights", &c.weights_file, "placement weights file")
		.string("explain_dir", &c.explain_dir, "where decisions are kept for loom place --explain")
		.add("failure_stats", "jobcomp/health failure statistics for health weights (none: off)",
		     absolute_path(&c.failure_stats, true), [&c] { return c.failure_stats; })
		.duration("failure_stats_poll", &c.failure_stats_poll_s, 1, 3600, "how often failure_stats is checked")
		.duration("node_sweep", &c.node_sweep_s, 0, 3600,
			  "how often, at most, the whole node table is read (0: at every node record change)")
		.boolean("snapshot_check", &c.snapshot_check,
			 "compare the engine's state with a full read at every job_test (tests)")
		.add(
			"spares", "spare nodes per domain kind (leaf:1,nvlink:2,pod:5%)",
			[&c](std::string_view v) -> status {
				if (v.empty())
					return unexpected("empty value");
				if (auto sp = parse_spares(v); !sp)
					return unexpected(sp.error());
				c.spares = std::string(v);
				return ok();
			},
			[&c] { return c.spares; })
		.duration("spare_lend", &c.spare_lend_s, 0, 30 * 86400,
			  "longest time limit of a job that may use spares")
		.add("spare_file", "where the spare pool is published", absolute_path(&c.spare_file, false),
		     [&c] { return c.spare_file; });
	add_tier_keys(s, &c.tiers);
}

} // namespace

void add_tier_keys(ConfigSchema &schema, TierTable *t)
{
	schema.prefix("gpu_class",
		      "a GPU class: throughput:X[,train:X][,infer:X][,mem:SIZE][,price:X][,offpeak_price:X]",
		      [t](std::string_view name, std::string_view v) { return add_class(*t, name, v); });
	schema.prefix("gpu_tier", "a site tier: value|balanced|fast[,min_class:CLASS][,mem:SIZE]",
		      [t](std::string_view name, std::string_view v) { return add_site_tier(*t, name, v); });
	schema.add("offpeak", "hours when offpeak_price applies: HH:MM-HH:MM (slurmctld's local time)",
		   [t](std::string_view v) { return set_offpeak(*t, v); });
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
			return unexpected(where,
					  "gpu_class." + c.name + ": '" + c.name +
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
				return unexpected(
					where, "gpu_class." + c.name +
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

ConfigSchema topo_conf_schema(TopoConf &c)
{
	ConfigSchema s;
	add_keys(s, c);
	return s;
}

expected<TopoConf> read_topo_conf(const std::string &path)
{
	TopoConf c;
	struct stat st;
	if (path.empty())
		return c;
	if (::stat(path.c_str(), &st) != 0) {
		if (errno == ENOENT)
			return c;
		return unexpected(path, std::string("cannot read: ") + std::strerror(errno));
	}
	c.path = path;
	ConfigSchema s = topo_conf_schema(c);
	if (status r = s.parse_file(path); !r)
		return unexpected(r.error());
	if (status t = check_tiers(c.tiers, c.gpu_classes, path); !t)
		return unexpected(t.error());
	return c;
}

} // namespace loom::place
