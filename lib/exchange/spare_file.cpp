#include "lib/exchange/spare_file.hpp"

#include "lib/util/fs.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/json.hpp"

#include <json-c/json.h>
#include <set>

namespace loom::exchange {

std::string spare_file_json(const SpareFile &f)
{
	Json doms = Json::array();
	for (const SpareFile::Domain &d : f.domains) {
		Json o = Json::object();
		o.set("kind", Json::string(d.kind));
		o.set("name", Json::string(d.name));
		o.set("nodes", Json::string(hostlist_compress(d.nodes)));
		o.set("want", Json::integer(d.want));
		o.set("spares", Json::string(hostlist_compress(d.spares)));
		doms.push(std::move(o));
	}
	Json root = Json::object();
	root.set("format", Json::string(spare_file_format));
	root.set("written", Json::integer(f.written));
	root.set("lend_max_s", Json::integer(f.lend_max_s));
	root.set("domains", std::move(doms));
	return root.dump(true);
}

expected<SpareFile> parse_spare_file(std::string_view text, const std::string &source)
{
	auto j = json_parse(text, source);
	if (!j)
		return unexpected(j.error());
	ObjectReader r(j->get(), "$");
	if (!r.ok())
		return unexpected(source, r.error().str());
	SpareFile f;
	auto fmt = r.str("format");
	if (!fmt)
		return unexpected(source, fmt.error().str());
	if (*fmt != spare_file_format)
		return unexpected(source, "$.format: '" + *fmt + "', expected '" + spare_file_format + "'");
	auto written = r.integer("written", 0);
	auto lend = r.integer("lend_max_s", 0);
	auto doms = r.array("domains");
	if (!written || !lend || !doms)
		return unexpected(source, (!written ? written.error() : !lend ? lend.error() : doms.error()).str());
	f.written = *written;
	f.lend_max_s = *lend;
	size_t n = json_object_array_length(*doms);
	for (size_t i = 0; i < n; i++) {
		std::string at = ObjectReader::index_path("$.domains", i);
		ObjectReader d(json_object_array_get_idx(*doms, i), at);
		if (!d.ok())
			return unexpected(source, d.error().str());
		SpareFile::Domain dom;
		auto kind = d.str("kind");
		auto name = d.str("name");
		auto nodes = d.str("nodes");
		auto want = d.integer("want", 0, 1 << 20);
		auto spares = d.str("spares");
		for (const Error *e :
		     {kind ? nullptr : &kind.error(), name ? nullptr : &name.error(), nodes ? nullptr : &nodes.error(),
		      want ? nullptr : &want.error(), spares ? nullptr : &spares.error()})
			if (e)
				return unexpected(source, e->str());
		if (status st = d.finish(); !st)
			return unexpected(source, st.error().str());
		auto nl = hostlist_expand(*nodes);
		// A domain with no spare left: "" (hostlist_compress of none).
		auto sl = spares->empty() ? expected<std::vector<std::string>>(std::vector<std::string>{})
					  : hostlist_expand(*spares);
		if (!nl)
			return unexpected(source, at + ".nodes: " + nl.error().str());
		if (!sl)
			return unexpected(source, at + ".spares: " + sl.error().str());
		std::set<std::string> members(nl->begin(), nl->end());
		for (const std::string &s : *sl)
			if (!members.count(s))
				return unexpected(source, at + ".spares: " + s + " is not a node of " + *name);
		dom.kind = *kind;
		dom.name = *name;
		dom.nodes = std::move(*nl);
		dom.spares = std::move(*sl);
		dom.want = static_cast<int>(*want);
		f.domains.push_back(std::move(dom));
	}
	if (status st = r.finish(); !st)
		return unexpected(source, st.error().str());
	return f;
}

expected<SpareFile> read_spare_file(const std::string &path)
{
	auto text = read_file(path, 64u << 20);
	if (!text)
		return unexpected(text.error());
	return parse_spare_file(*text, path);
}

} // namespace loom::exchange
