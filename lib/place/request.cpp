// The request's text form: fail-closed key=value words.
#include "lib/place/request.hpp"

#include "lib/topo/build.hpp"
#include "lib/util/config.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/log.hpp"

namespace loom::place {

namespace {

constexpr int64_t max_count = 1 << 20;

status parse_nodes(std::string_view v, Request &r)
{
	size_t dash = v.find('-');
	auto lo = parse_int(v.substr(0, dash), 1, max_count);
	if (!lo)
		return unexpected(lo.error());
	r.min_nodes = static_cast<int>(*lo);
	r.max_nodes = 0;
	if (dash != std::string_view::npos) {
		auto hi = parse_int(v.substr(dash + 1), 1, max_count);
		if (!hi)
			return unexpected(hi.error());
		if (*hi < *lo)
			return unexpected(strprintf("range %lld-%lld: the maximum is below the minimum",
						    static_cast<long long>(*lo), static_cast<long long>(*hi)));
		r.max_nodes = static_cast<int>(*hi);
	}
	return ok();
}

// A count from 'min' to max_count, into an int.
ConfigSchema::Setter count(int *out, int64_t min)
{
	return [out, min](std::string_view v) -> status {
		auto x = parse_int(v, min, max_count);
		if (!x)
			return unexpected(x.error());
		*out = static_cast<int>(*x);
		return ok();
	};
}

// Seconds, up to 2^40.
ConfigSchema::Setter seconds(int64_t *out)
{
	return [out](std::string_view v) -> status {
		auto x = parse_int(v, 0, int64_t{1} << 40);
		if (!x)
			return unexpected(x.error());
		*out = *x;
		return ok();
	};
}

// A name, as given (checked against the site's table later).
ConfigSchema::Setter name(std::string *out)
{
	return [out](std::string_view v) -> status {
		*out = std::string(v);
		return ok();
	};
}

// locality=KIND[:MODE], or the old within=KIND / prefer=KIND (old_mode): one of them.
status set_locality(Request &r, std::string_view v, Locality old_mode)
{
	if (old_mode != Locality::any && v.find(':') != std::string_view::npos)
		return unexpected("expected a domain kind or level (no ':' here)");
	auto h = parse_locality(v);
	if (!h)
		return unexpected(h.error().message);
	if (r.locality != Locality::any)
		return unexpected("give one of 'locality', 'within' or 'prefer'");
	r.locality = old_mode != Locality::any ? old_mode : h->mode;
	r.locality_level = std::move(h->kind);
	return ok();
}

status set_class(Request &r, std::string_view v)
{
	r.gpu_class = v == "any" ? "" : std::string(v);
	return ok();
}

status set_comm(Request &r, std::string_view v)
{
	auto c = parse_comm(v);
	if (!c)
		return unexpected(c.error().message);
	r.comm = *c;
	return ok();
}

status set_gpu_mem(Request &r, std::string_view v)
{
	auto m = parse_size(v);
	if (!m)
		return unexpected(m.error());
	r.need.min_mem = *m;
	return ok();
}

status set_workload(Request &r, std::string_view v)
{
	auto w = parse_workload(v);
	if (!w)
		return unexpected(w.error());
	r.need.workload = *w;
	return ok();
}

status set_exclude(Request &r, std::string_view v)
{
	auto names = hostlist_expand(v, topo::max_cluster_nodes);
	if (!names)
		return unexpected(names.error());
	r.exclude = std::move(*names);
	return ok();
}

// The keys, in the order the usage lists them.
ConfigSchema request_schema(Request &r)
{
	using std::string_view;
	ConfigSchema s;
	s.add("nodes", "node count N or MIN-MAX", [&r](string_view v) { return parse_nodes(v, r); })
		.add("gpus_per_node", "GPUs on every node", count(&r.gpus_per_node, 0))
		.add("gpus", "GPUs in total", count(&r.gpus, 0))
		.add("cores_per_node", "cores on every node", count(&r.cores_per_node, 0))
		.boolean("exclusive", &r.whole_node, "whole nodes")
		.add("class", "GPU class", [&r](string_view v) { return set_class(r, v); })
		.boolean("faster", &r.allow_faster_class, "a faster class when the class is full")
		.add("comm", "communication intensity: heavy, normal or light",
		     [&r](string_view v) { return set_comm(r, v); })
		.add("locality", "KIND[:strict|:prefer]: the gang in one domain of this kind or level",
		     [&r](string_view v) { return set_locality(r, v, Locality::any); })
		.add("within", "old spelling of locality=KIND:strict",
		     [&r](string_view v) { return set_locality(r, v, Locality::strict); })
		.add("prefer", "old spelling of locality=KIND:prefer",
		     [&r](string_view v) { return set_locality(r, v, Locality::prefer); })
		.add("switches", "at most this many leaves", count(&r.max_leaves, 0))
		.add("tier", "GPU tier (value, balanced, fast or a site tier)", name(&r.need.tier))
		.add("min_class", "GPU classes at least this fast", name(&r.need.min_class))
		.add("gpu_mem", "memory per GPU at least (80G)", [&r](string_view v) { return set_gpu_mem(r, v); })
		.add("workload", "train or infer: which throughput of a class counts",
		     [&r](string_view v) { return set_workload(r, v); })
		.boolean("mixed", &r.need.mixed, "the gang may span GPU classes")
		.add("limit", "time limit in seconds", seconds(&r.limit_s))
		.add("may_wait", "seconds a value tier may wait for a cheaper start", seconds(&r.may_wait_s))
		.add("exclude", "nodes not to use (hostlist)", [&r](string_view v) { return set_exclude(r, v); });
	return s;
}

} // namespace

status check_request(const Request &r)
{
	if (r.min_nodes < 1)
		return unexpected("nodes", "at least one node");
	if (r.max_nodes != 0 && r.max_nodes < r.min_nodes)
		return unexpected("nodes", strprintf("maximum %d below minimum %d", r.max_nodes, r.min_nodes));
	if (r.gpus_per_node < 0 || r.gpus < 0 || r.cores_per_node < 0 || r.max_leaves < 0)
		return unexpected("negative count");
	if (r.gpus_per_node > 0 && r.gpus > 0)
		return unexpected("gpus", "give gpus or gpus_per_node, not both");
	if (r.gpus > 0 && r.gpus < r.min_nodes)
		return unexpected("gpus", strprintf("%d GPUs cannot cover %d nodes", r.gpus, r.min_nodes));
	if (r.locality != Locality::any && r.locality_level.empty())
		return unexpected("locality", "no domain kind or level given");
	if (!r.gpu_class.empty() && r.need.given())
		return unexpected("class", "give a class or a tier and bounds (tier, min_class, gpu_mem), not both");
	if (r.need.mixed && !r.gpu_class.empty())
		return unexpected("mixed", "a job of one named class cannot span classes (give a tier or bounds)");
	if (r.limit_s < 0 || r.may_wait_s < 0)
		return unexpected("negative time");
	return ok();
}

expected<Request> parse_request(std::string_view text, const std::string &where)
{
	Request r;
	if (auto st = request_schema(r).parse_words(text, where); !st)
		return unexpected(st.error());
	if (auto st = check_request(r); !st)
		return unexpected(st.error().within(where));
	return r;
}

std::string format_size(uint64_t b)
{
	const char *units = "KMGTP";
	if (b == 0)
		return "0";
	int u = -1;
	while (u < 4 && b % 1024 == 0) {
		b /= 1024;
		u++;
	}
	return std::to_string(b) + (u >= 0 ? std::string(1, units[u]) : std::string());
}

std::string format_request(const Request &r)
{
	std::string s = "nodes=" + std::to_string(r.min_nodes);
	if (r.max_nodes > 0 && r.max_nodes != r.min_nodes)
		s += "-" + std::to_string(r.max_nodes);
	if (r.gpus_per_node > 0)
		s += " gpus_per_node=" + std::to_string(r.gpus_per_node);
	if (r.gpus > 0)
		s += " gpus=" + std::to_string(r.gpus);
	if (r.cores_per_node > 0)
		s += " cores_per_node=" + std::to_string(r.cores_per_node);
	if (r.whole_node)
		s += " exclusive=yes";
	if (!r.gpu_class.empty())
		s += " class=" + r.gpu_class;
	if (r.allow_faster_class)
		s += " faster=yes";
	if (r.comm != Comm::normal)
		s += std::string(" comm=") + comm_name(r.comm);
	if (std::string l = format_locality({r.locality, r.locality_level}); !l.empty())
		s += " locality=" + l;
	if (r.max_leaves > 0)
		s += " switches=" + std::to_string(r.max_leaves);
	if (!r.need.tier.empty())
		s += " tier=" + r.need.tier;
	if (!r.need.min_class.empty())
		s += " min_class=" + r.need.min_class;
	if (r.need.min_mem > 0)
		s += " gpu_mem=" + format_size(r.need.min_mem);
	if (r.need.workload != Workload::any)
		s += std::string(" workload=") + workload_name(r.need.workload);
	if (r.need.mixed)
		s += " mixed=yes";
	if (r.limit_s > 0)
		s += " limit=" + std::to_string(r.limit_s);
	if (r.may_wait_s > 0)
		s += " may_wait=" + std::to_string(r.may_wait_s);
	if (!r.exclude.empty()) {
		std::vector<std::string> names; // entries may be hostlists themselves
		for (const std::string &e : r.exclude) {
			auto x = hostlist_expand(e, topo::max_cluster_nodes);
			if (x)
				names.insert(names.end(), x->begin(), x->end());
			else
				names.push_back(e);
		}
		s += " exclude=" + hostlist_compress(names);
	}
	return s;
}

} // namespace loom::place
