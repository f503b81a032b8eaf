// The placement hints' words: parsed and printed here only.
//
// Header-only dependencies (lib/util/expected.hpp): the SPANK plugin compiles
// this file into itself, without the rest of libloom.
#include "lib/place/hints.hpp"

namespace loom::place {

namespace {

// Errors say where = "bad value 'X'" and what is allowed, so that a caller
// that names the value itself (a key=value parser) can take the message alone.
unexpected bad_value(std::string_view value, std::string allowed)
{
	return unexpected("bad value '" + std::string(value) + "'", std::move(allowed));
}

bool kind_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

} // namespace

expected<Comm> parse_comm(std::string_view v)
{
	if (v == "heavy")
		return Comm::heavy;
	if (v == "normal")
		return Comm::normal;
	if (v == "light")
		return Comm::light;
	return bad_value(v, "expected heavy, normal or light");
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

const char *locality_mode_name(Locality l)
{
	switch (l) {
	case Locality::strict:
		return "strict";
	case Locality::prefer:
		return "prefer";
	case Locality::any:
		break;
	}
	return "any";
}

expected<LocalityHint> parse_locality(std::string_view v)
{
	LocalityHint h;
	h.mode = Locality::prefer;
	std::string_view kind = v;
	if (size_t colon = v.find(':'); colon != std::string_view::npos) {
		std::string_view mode = v.substr(colon + 1);
		kind = v.substr(0, colon);
		if (mode == "strict")
			h.mode = Locality::strict;
		else if (mode != "prefer")
			return bad_value(v, "expected KIND, KIND:strict or KIND:prefer");
	}
	if (kind.empty() || kind.size() > 64)
		return bad_value(v, "expected a domain kind such as leaf, pod or nvlink");
	for (char c : kind)
		if (!kind_char(c))
			return bad_value(v, "a domain kind is letters, digits, '-' or '_'");
	h.kind = std::string(kind);
	return h;
}

std::string format_locality(const LocalityHint &h)
{
	if (h.mode == Locality::any || h.kind.empty())
		return {};
	return h.kind + ":" + locality_mode_name(h.mode);
}

} // namespace loom::place
