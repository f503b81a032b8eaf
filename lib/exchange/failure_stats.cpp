#include "lib/exchange/failure_stats.hpp"

#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"

#include <algorithm>
#include <cmath>
#include <json-c/json.h>
#include <unistd.h>

namespace loom::exchange {
namespace {

constexpr int64_t format_version = 1;

Json counts_json(const FailureCounts &c)
{
	Json o = Json::object();
	o.set("exposure_s", Json::number(c.exposure_s));
	o.set("failures", Json::integer(c.failures));
	Json by = Json::object();
	for (const auto &[k, v] : c.by_class)
		by.set(k.c_str(), Json::integer(v));
	o.set("by_class", std::move(by));
	o.set("last_failure", Json::integer(c.last_failure));
	if (c.failures > 0)
		o.set("mtbf_s", Json::number(c.mtbf_s()));
	return o;
}

status read_counts(ObjectReader &r, FailureCounts &c)
{
	auto exp = r.number("exposure_s");
	auto fail = r.integer("failures", 0);
	auto last = r.integer_or("last_failure", 0, 0);
	auto by = r.object("by_class");
	if (!exp)
		return unexpected(exp.error());
	if (!fail)
		return unexpected(fail.error());
	if (!last)
		return unexpected(last.error());
	if (!by)
		return unexpected(by.error());
	(void)r.number_or("mtbf_s", 0); // derived; read so that finish() accepts it
	c.exposure_s = *exp;
	c.failures = *fail;
	c.last_failure = *last;
	json_object_object_foreach(*by, key, val)
	{
		if (!json_object_is_type(val, json_type_int))
			return unexpected(r.field_path("by_class") + "." + key, "expected an integer");
		c.by_class[key] = json_object_get_int64(val);
	}
	return ok();
}

} // namespace

double mtbf_estimate(double exposure_s, int64_t failures, double prior_mtbf_s)
{
	double e = std::isfinite(exposure_s) && exposure_s > 0 ? exposure_s : 0;
	double f = failures > 0 ? static_cast<double>(failures) : 0;
	double prior = std::isfinite(prior_mtbf_s) && prior_mtbf_s > 0 ? prior_mtbf_s : 0;
	return (e + prior) / (f + 1.0);
}

double job_mtbf(const FailureStats &s, const std::vector<std::string> &nodes, double prior_mtbf_s)
{
	double rate = 0;
	for (const auto &n : nodes) {
		auto it = s.nodes.find(n);
		double m = it != s.nodes.end() ? mtbf_estimate(it->second.exposure_s, it->second.failures, prior_mtbf_s)
					       : prior_mtbf_s;
		if (m > 0)
			rate += 1.0 / m;
	}
	return rate > 0 ? 1.0 / rate : prior_mtbf_s;
}

double fleet_mtbf(const FailureStats &s)
{
	double exposure = 0;
	int64_t failures = 0;
	for (const auto &[name, n] : s.nodes) {
		exposure += std::isfinite(n.exposure_s) && n.exposure_s > 0 ? n.exposure_s : 0;
		failures += n.failures > 0 ? n.failures : 0;
	}
	return failures > 0 ? exposure / static_cast<double>(failures) : -1;
}

std::map<std::string, double> node_health_weights(const FailureStats &s)
{
	std::map<std::string, double> w;
	double fleet = fleet_mtbf(s);
	if (!(fleet > 0)) {
		// Failures but no exposure at all (jobs that failed at once): count failures only.
		for (const auto &[name, n] : s.nodes)
			if (n.failures > 0)
				w[name] = 1.0 / (static_cast<double>(n.failures) + 1.0);
		return w;
	}
	for (const auto &[name, n] : s.nodes)
		w[name] = std::min(1.0, mtbf_estimate(n.exposure_s, n.failures, fleet) / fleet);
	return w;
}

std::string failure_stats_json(const FailureStats &s)
{
	Json root = Json::object();
	root.set("version", Json::integer(format_version));
	root.set("updated", Json::integer(s.updated));
	Json nodes = Json::object();
	for (const auto &[name, n] : s.nodes) {
		Json o = counts_json(n);
		o.set("gpu_class", Json::string(n.gpu_class));
		nodes.set(name.c_str(), std::move(o));
	}
	root.set("nodes", std::move(nodes));
	Json classes = Json::object();
	for (const auto &[name, c] : s.gpu_classes)
		classes.set(name.c_str(), counts_json(c));
	root.set("gpu_classes", std::move(classes));
	return root.dump();
}

expected<FailureStats> parse_failure_stats(std::string_view text, const std::string &source)
{
	auto j = json_parse(text, source);
	if (!j)
		return unexpected(j.error());
	FailureStats s;
	ObjectReader r(j->get(), "$");
	if (!r.ok())
		return unexpected(r.error().within(source));
	auto ver = r.integer("version", 1, 1);
	auto upd = r.integer("updated", 0);
	auto nodes = r.object("nodes");
	auto classes = r.object("gpu_classes");
	for (const Error *e : {ver ? nullptr : &ver.error(), upd ? nullptr : &upd.error(),
			       nodes ? nullptr : &nodes.error(), classes ? nullptr : &classes.error()})
		if (e)
			return unexpected(e->within(source));
	if (auto st = r.finish(); !st)
		return unexpected(st.error().within(source));
	s.updated = *upd;
	json_object_object_foreach(*nodes, key, val)
	{
		ObjectReader nr(val, "$.nodes." + std::string(key));
		if (!nr.ok())
			return unexpected(nr.error().within(source));
		NodeStats ns;
		auto gc = nr.str("gpu_class");
		if (!gc)
			return unexpected(gc.error().within(source));
		ns.gpu_class = *gc;
		if (auto st = read_counts(nr, ns); !st)
			return unexpected(st.error().within(source));
		if (auto st = nr.finish(); !st)
			return unexpected(st.error().within(source));
		s.nodes[key] = std::move(ns);
	}
	json_object_object_foreach(*classes, ckey, cval)
	{
		ObjectReader cr(cval, "$.gpu_classes." + std::string(ckey));
		if (!cr.ok())
			return unexpected(cr.error().within(source));
		FailureCounts fc;
		if (auto st = read_counts(cr, fc); !st)
			return unexpected(st.error().within(source));
		if (auto st = cr.finish(); !st)
			return unexpected(st.error().within(source));
		s.gpu_classes[ckey] = std::move(fc);
	}
	return s;
}

expected<FailureStats> load_failure_stats(const std::string &path)
{
	if (::access(path.c_str(), F_OK) != 0)
		return FailureStats{};
	auto text = read_file(path, 64u << 20);
	if (!text)
		return unexpected(text.error());
	return parse_failure_stats(*text, path);
}

status save_failure_stats(const std::string &path, const FailureStats &s)
{
	return write_file_atomic(path, failure_stats_json(s));
}

} // namespace loom::exchange
