#include "plugins/common/place_hints.hpp"

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

expected<place::Hints> hints_from_env(char **env, unsigned count)
{
	place::Hints h;
	const size_t comm_len = std::strlen(env_comm), loc_len = std::strlen(env_locality);
	for (unsigned i = 0; env && i < count; i++) {
		const char *e = env[i];
		if (!e)
			continue;
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
