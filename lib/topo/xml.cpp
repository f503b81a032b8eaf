#include "lib/topo/xml.hpp"

#include <cctype>

namespace loom::topo {

const std::string *XmlElement::attr(std::string_view key) const
{
	for (const auto &[k, v] : attrs)
		if (k == key)
			return &v;
	return nullptr;
}

std::string xml_escape(std::string_view s)
{
	std::string out;
	for (char c : s) {
		switch (c) {
		case '&':
			out += "&amp;";
			break;
		case '<':
			out += "&lt;";
			break;
		case '>':
			out += "&gt;";
			break;
		case '"':
			out += "&quot;";
			break;
		default:
			out += c;
		}
	}
	return out;
}

namespace {

struct Parser {
	std::string_view s;
	std::string source;
	size_t max_depth;
	size_t i = 0, line = 1;

	Error err(const std::string &msg) const { return Error(source + ":" + std::to_string(line), msg); }
	bool eof() const { return i >= s.size(); }
	void adv(size_t n = 1)
	{
		for (size_t k = 0; k < n && i < s.size(); k++, i++)
			if (s[i] == '\n')
				line++;
	}
	bool at(std::string_view p) const { return s.substr(i, p.size()) == p; }
	void skip_ws()
	{
		while (!eof() && std::isspace(static_cast<unsigned char>(s[i])))
			adv();
	}
	// Skip "<?...?>", "<!--...-->", "<!DOCTYPE ...>".
	status skip_misc(bool &skipped)
	{
		skipped = false;
		const char *end = at("<?") ? "?>" : at("<!--") ? "-->" : at("<!") ? ">" : nullptr;
		if (!end)
			return ok();
		size_t e = s.find(end, i + 2);
		if (e == std::string_view::npos)
			return unexpected(err("unterminated markup"));
		adv(e + std::string_view(end).size() - i);
		skipped = true;
		return ok();
	}
	expected<std::string> decode(std::string_view raw)
	{
		std::string out;
		for (size_t k = 0; k < raw.size(); k++) {
			if (raw[k] != '&') {
				out += raw[k];
				continue;
			}
			size_t semi = raw.find(';', k);
			if (semi == std::string_view::npos || semi - k > 6)
				return unexpected(err("bad entity"));
			std::string_view e = raw.substr(k + 1, semi - k - 1);
			if (e == "amp")
				out += '&';
			else if (e == "lt")
				out += '<';
			else if (e == "gt")
				out += '>';
			else if (e == "quot")
				out += '"';
			else if (e == "apos")
				out += '\'';
			else
				return unexpected(err("unknown entity &" + std::string(e) + ";"));
			k = semi;
		}
		return out;
	}
	std::string_view name()
	{
		size_t st = i;
		while (!eof() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' || s[i] == '-' ||
				  s[i] == ':' || s[i] == '.'))
			adv();
		return s.substr(st, i - st);
	}
	expected<XmlElement> element(size_t depth)
	{
		if (depth > max_depth)
			return unexpected(err("elements nested deeper than " + std::to_string(max_depth)));
		if (!at("<"))
			return unexpected(err("expected '<'"));
		adv();
		XmlElement el;
		el.line = line;
		el.name = name();
		if (el.name.empty())
			return unexpected(err("expected an element name"));
		for (;;) {
			skip_ws();
			if (eof())
				return unexpected(err("unexpected end of input in <" + el.name + ">"));
			if (at("/>")) {
				adv(2);
				return el;
			}
			if (at(">")) {
				adv();
				break;
			}
			std::string key(name());
			if (key.empty())
				return unexpected(err("bad attribute in <" + el.name + ">"));
			skip_ws();
			if (!at("="))
				return unexpected(err("expected '=' after " + key));
			adv();
			skip_ws();
			if (eof() || (s[i] != '"' && s[i] != '\''))
				return unexpected(err("expected a quoted value for " + key));
			char q = s[i];
			size_t close = s.find(q, i + 1);
			if (close == std::string_view::npos)
				return unexpected(err("unterminated value of " + key));
			auto v = decode(s.substr(i + 1, close - i - 1));
			if (!v)
				return unexpected(v.error());
			if (el.attr(key))
				return unexpected(err("attribute " + key + " given twice"));
			el.attrs.emplace_back(std::move(key), std::move(*v));
			adv(close + 1 - i);
		}
		for (;;) {
			size_t lt = s.find('<', i);
			if (lt == std::string_view::npos)
				return unexpected(err("unexpected end of input in <" + el.name + ">"));
			auto t = decode(s.substr(i, lt - i));
			if (!t)
				return unexpected(t.error());
			el.text += *t;
			adv(lt - i);
			bool skipped = false;
			if (status st = skip_misc(skipped); !st)
				return unexpected(st.error());
			if (skipped)
				continue;
			if (at("</")) {
				adv(2);
				if (name() != el.name)
					return unexpected(err("closing tag does not match <" + el.name + ">"));
				skip_ws();
				if (!at(">"))
					return unexpected(err("expected '>'"));
				adv();
				return el;
			}
			auto kid = element(depth + 1);
			if (!kid)
				return unexpected(kid.error());
			el.children.push_back(std::move(*kid));
		}
	}
};

} // namespace

expected<XmlElement> parse_xml(std::string_view text, const std::string &source, size_t max_depth)
{
	Parser p{text, source, max_depth};
	for (;;) {
		p.skip_ws();
		bool skipped = false;
		if (status st = p.skip_misc(skipped); !st)
			return unexpected(st.error());
		if (!skipped)
			break;
	}
	if (p.eof())
		return unexpected(source, "empty XML document");
	auto root = p.element(0);
	if (!root)
		return root;
	p.skip_ws();
	if (!p.eof())
		return unexpected(p.err("data after the root element"));
	return root;
}

} // namespace loom::topo
