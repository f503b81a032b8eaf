// loom topology: a small, bounded XML element reader (elements, attributes,
// text) for NCCL topology files. No DTDs, entities beyond the five standard
// ones, or namespaces; depth and size are bounded so bad input is an error.
#pragma once

#include "lib/util/expected.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace loom::topo {

struct XmlElement {
	std::string name;
	std::vector<std::pair<std::string, std::string>> attrs;
	std::vector<XmlElement> children;
	std::string text;
	size_t line = 0;

	// Attribute value, or nullptr.
	const std::string *attr(std::string_view key) const;
};

expected<XmlElement> parse_xml(std::string_view text, const std::string &source, size_t max_depth = 64);

// Escape &, <, >, " for attribute values.
std::string xml_escape(std::string_view s);

} // namespace loom::topo
