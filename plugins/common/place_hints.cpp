#include "plugins/common/place_hints.hpp"

#include <cstring>

namespace loom::plugin {

expected<Comm> parse_comm(std::string_view v)
{
	if (v == "heavy")
		return Comm::heavy;
	if (v == "normal")
		return Comm::normal;
	if (v == "light")
		return Comm::light;
	return unexpected("--comm", "bad value '" + std::string(v) + "': expected heavy, normal or light");
}

const char *comm_name(Comm c)
{
	switch (c) {
	case Comm::light:
		return "light";
	case Comm::heavy:
		return "heavy";
	case Comm::normal:
		break;
	}
	return "normal";
}

status parse_locality(std::string_view v, PlaceHints &hints)
{
	std::string_view kind = v;
	bool strict = false;
	size_t colon = v.find(':');
	if (colon != std::string_view::npos) {
		std::string_view mode = v.substr(colon + 1);
		kind = v.substr(0, colon);
		if (mode == "strict")
			strict = true;
		else if (mode != "prefer")
			return unexpected("--locality", "bad value '" + std::string(v) +
								"': expected KIND, KIND:strict or KIND:prefer");
	}
	if (kind.empty() || kind.size() > 64)
		return unexpected("--locality", "bad value '" + std::string(v) +
							"': expected a domain kind such as leaf, pod or nvlink");
	for (char c : kind) {
		bool okc = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			   c == '_' || c == '-';
		if (!okc)
			return unexpected("--locality", "bad value '" + std::string(v) +
								"': a domain kind is letters, digits, '-' or '_'");
	}
	hints.locality = std::string(kind);
	hints.strict = strict;
	return ok();
}

expected<PlaceHints> hints_from_env(char **env, unsigned count)
{
	PlaceHints h;
	const size_t comm_len = std::strlen(env_comm), loc_len = std::strlen(env_locality);
	for (unsigned i = 0; env && i < count; i++) {
		const char *e = env[i];
		if (!e)
			continue;
		if (!std::strncmp(e, env_comm, comm_len) && e[comm_len] == '=') {
			auto c = parse_comm(e + comm_len + 1);
			if (!c)
				return unexpected(c.error());
			h.comm = *c;
		} else if (!std::strncmp(e, env_locality, loc_len) && e[loc_len] == '=') {
			status st = parse_locality(e + loc_len + 1, h);
			if (!st)
				return unexpected(st.error());
		}
	}
	return h;
}

} // namespace loom::plugin
