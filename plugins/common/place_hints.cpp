#include "plugins/common/place_hints.hpp"

#include "lib/util/config.hpp"

#include <cctype>
#include <cstring>
#include <string>

namespace loom::plugin {

expected<place::Comm> comm_option(std::string_view v)
{
	auto c = place::parse_comm(v);
	if (!c)
		return unexpected(c.error().within(std::string("--") + opt_comm));
	return c;
}

expected<place::LocalityHint> locality_option(std::string_view v)
{
	auto h = place::parse_locality(v);
	if (!h)
		return unexpected(h.error().within(std::string("--") + opt_locality));
	return h;
}

expected<std::string> gpu_name_option(const char *option, std::string_view v)
{
	bool good = !v.empty() && v.size() <= 64;
	for (char ch : v)
		good = good && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_');
	if (!good)
		return unexpected(std::string("--") + option + ": bad name '" + std::string(v) +
				  "': expected letters, digits, '-' or '_'");
	return std::string(v);
}

expected<uint64_t> gpu_mem_option(std::string_view v)
{
	auto m = parse_size(v);
	if (!m || *m == 0)
		return unexpected(std::string("--") + opt_gpu_mem + ": bad value '" + std::string(v) +
				  "': expected a size per GPU (80G, 141G)");
	return *m;
}

expected<place::Workload> gpu_workload_option(std::string_view v)
{
	auto w = place::parse_workload(v);
	if (!w || *w == place::Workload::any)
		return unexpected(std::string("--") + opt_gpu_workload + ": bad value '" + std::string(v) +
				  "': expected train or infer");
	return w;
}

namespace {

// "NAME=value" of env entry e, when its name is 'name'.
const char *value_of(const char *e, const char *name)
{
	size_t n = std::strlen(name);
	return !std::strncmp(e, name, n) && e[n] == '=' ? e + n + 1 : nullptr;
}

} // namespace

expected<place::Hints> hints_from_env(char **env, unsigned count)
{
	place::Hints h;
	const size_t comm_len = std::strlen(env_comm), loc_len = std::strlen(env_locality);
	for (unsigned i = 0; env && i < count; i++) {
		const char *e = env[i];
		if (!e)
			continue;
		if (const char *v = value_of(e, env_gpu_tier)) {
			auto t = gpu_name_option(opt_gpu_tier, v);
			if (!t)
				return unexpected(t.error());
			h.need.tier = *t;
			continue;
		}
		if (const char *v = value_of(e, env_gpu_min_class)) {
			auto t = gpu_name_option(opt_gpu_min_class, v);
			if (!t)
				return unexpected(t.error());
			h.need.min_class = *t;
			continue;
		}
		if (const char *v = value_of(e, env_gpu_mem)) {
			auto m = gpu_mem_option(v);
			if (!m)
				return unexpected(m.error());
			h.need.min_mem = *m;
			continue;
		}
		if (const char *v = value_of(e, env_gpu_workload)) {
			auto w = gpu_workload_option(v);
			if (!w)
				return unexpected(w.error());
			h.need.workload = *w;
			continue;
		}
		if (value_of(e, env_gpu_mixed)) {
			h.need.mixed = true;
			continue;
		}
		if (!std::strncmp(e, env_comm, comm_len) && e[comm_len] == '=') {
			auto c = comm_option(e + comm_len + 1);
			if (!c)
				return unexpected(c.error());
			h.comm = *c;
		} else if (!std::strncmp(e, env_locality, loc_len) && e[loc_len] == '=') {
			auto l = locality_option(e + loc_len + 1);
			if (!l)
				return unexpected(l.error());
			h.locality = std::move(*l);
		}
	}
	return h;
}

} // namespace loom::plugin
