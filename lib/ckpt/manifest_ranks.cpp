// loom ckpt: the parts of a "loom-ckpt/2" manifest (doc/loom-ckpt-protocol.md
// section 7.2), in the manifest and in a rank's .parts/rank-<r>.json.
#include "lib/ckpt/manifest_ranks.hpp"

#include "lib/ckpt/layout.hpp"
#include "lib/util/fs.hpp"

#include <json-c/json.h>
#include <set>

namespace loom::ckpt {
namespace {

// What the parts of one manifest share: the world, the layout, the ranks and
// paths seen so far and the number of files.
struct PartChecks {
	int64_t world = 1;
	bool ranks_layout = true;
	std::set<int64_t> ranks;
	std::set<std::string> paths;
	size_t files = 0;
};

status read_part_files(ObjectReader &r, RankPart &p, PartChecks &c)
{
	auto files = r.array("files");
	if (!files)
		return unexpected(files.error());
	size_t n = json_object_array_length(*files);
	c.files += n;
	if (c.files > manifest_max_files)
		return unexpected(r.field_path("files"),
				  "more than " + std::to_string(manifest_max_files) + " files in all parts");
	std::string prefix = c.ranks_layout ? rank_dir_name(p.rank) + "/" : "";
	for (size_t i = 0; i < n; i++) {
		std::string path = ObjectReader::index_path(r.field_path("files"), i);
		auto e = detail::read_file_entry(json_object_array_get_idx(*files, i), path, prefix);
		if (!e)
			return unexpected(e.error());
		if (!c.paths.insert(e->path).second)
			return unexpected(path, "file '" + e->path + "' listed twice in the manifest");
		p.files.push_back(std::move(*e));
	}
	return ok();
}

// One part's fields in the protocol's order; the caller finishes the reader.
expected<RankPart> read_part(ObjectReader &r, PartChecks &c)
{
	if (!r.ok())
		return unexpected(r.error());
	RankPart p;
	auto rank = r.integer("rank", 0, c.world - 1);
	if (!rank)
		return unexpected(rank.error());
	if (!c.ranks.insert(*rank).second)
		return unexpected(r.field_path("rank"), "rank " + std::to_string(*rank) + " has a part already");
	p.rank = *rank;
	auto step = r.integer("step", 0, max_step);
	if (!step)
		return unexpected(step.error());
	p.step = *step;
	auto host = r.str_or("host", "");
	if (!host)
		return unexpected(host.error());
	p.host = *host;
	bool timed = r.has("write_seconds");
	auto ws = r.number_or("write_seconds", -1);
	if (!ws)
		return unexpected(ws.error());
	if (timed && !(*ws >= 0 && *ws < 1e7))
		return unexpected(r.field_path("write_seconds"), "expected seconds between 0 and 1e7");
	p.write_seconds = *ws;
	if (auto st = read_part_files(r, p, c); !st)
		return unexpected(st.error());
	return p;
}

} // namespace

namespace detail {

status read_ranks(ObjectReader &r, Manifest &m)
{
	auto layout = r.str("layout");
	if (!layout)
		return unexpected(layout.error());
	if (*layout != layout_ranks && *layout != layout_dcp)
		return unexpected(r.field_path("layout"), "unknown layout '" + *layout + "' (expected ranks or dcp)");
	m.layout = *layout;
	auto parts = r.array("ranks");
	if (!parts)
		return unexpected(parts.error());
	size_t n = json_object_array_length(*parts);
	if (n > static_cast<uint64_t>(m.world_size))
		return unexpected(r.field_path("ranks"),
				  std::to_string(n) + " parts for a world size of " + std::to_string(m.world_size));
	PartChecks c;
	c.world = m.world_size;
	c.ranks_layout = m.layout == layout_ranks;
	for (size_t i = 0; i < n; i++) {
		std::string path = ObjectReader::index_path(r.field_path("ranks"), i);
		ObjectReader pr(json_object_array_get_idx(*parts, i), path);
		auto p = read_part(pr, c);
		if (!p)
			return unexpected(p.error());
		if (auto st = pr.finish(); !st)
			return st;
		m.ranks.push_back(std::move(*p));
	}
	for (const auto &p : m.ranks)
		m.files.insert(m.files.end(), p.files.begin(), p.files.end());
	return ok();
}

Json files_json(const std::vector<FileEntry> &files)
{
	Json a = Json::array();
	for (const auto &f : files) {
		Json e = Json::object();
		e.set("path", Json::string(f.path));
		e.set("size", Json::integer(static_cast<int64_t>(f.size)));
		e.set("sha256", Json::string(f.sha256));
		a.push(std::move(e));
	}
	return a;
}

Json part_json(const RankPart &p)
{
	Json o = Json::object();
	o.set("rank", Json::integer(p.rank));
	o.set("step", Json::integer(p.step));
	if (!p.host.empty())
		o.set("host", Json::string(p.host));
	if (p.write_seconds >= 0)
		o.set("write_seconds", Json::number(p.write_seconds));
	o.set("files", files_json(p.files));
	return o;
}

} // namespace detail

const RankPart *Manifest::part(int64_t rank) const
{
	for (const auto &p : ranks)
		if (p.rank == rank)
			return &p;
	return nullptr;
}

std::vector<FileEntry> rank_files(const Manifest &m, int64_t rank)
{
	if (m.version != 2 || m.layout != layout_ranks)
		return m.files;
	std::vector<FileEntry> out;
	const RankPart *p = m.part(rank);
	size_t strip = rank_dir_name(rank).size() + 1;
	for (const auto &f : p ? p->files : out) {
		FileEntry e = f;
		e.path = f.path.substr(strip);
		out.push_back(std::move(e));
	}
	return out;
}

std::string rank_files_dir(const std::string &path, const Manifest &m, int64_t rank)
{
	if (m.version != 2 || m.layout != layout_ranks)
		return path;
	return path_join(path, rank_dir_name(rank));
}

std::string part_to_json(const RankPart &p, int64_t world_size)
{
	Json o = detail::part_json(p);
	o.set("world_size", Json::integer(world_size));
	return o.dump(true);
}

expected<PartFile> part_parse(std::string_view text, const std::string &source, const std::string &layout)
{
	if (!is_utf8(text))
		return unexpected(source, "not valid UTF-8");
	auto doc = json_parse(text, source, 16);
	if (!doc)
		return unexpected(doc.error());
	ObjectReader r(doc->get(), "$");
	auto world = r.integer("world_size", 1, manifest_max_world_size);
	if (!world)
		return unexpected(world.error().within(source));
	PartChecks c;
	c.world = *world;
	c.ranks_layout = layout == layout_ranks;
	auto p = read_part(r, c);
	if (!p)
		return unexpected(p.error().within(source));
	if (auto st = r.finish(); !st)
		return unexpected(st.error().within(source));
	return PartFile{std::move(*p), *world};
}

} // namespace loom::ckpt
