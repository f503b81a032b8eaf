#include "lib/ckpt/manifest.hpp"

#include "lib/ckpt/layout.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"

#include <json-c/json.h>
#include <set>

namespace loom::ckpt {
namespace {

constexpr uint64_t manifest_max_bytes = 64ull << 20;
constexpr size_t max_files = 1000000;

bool is_hex64(const std::string &s)
{
	if (s.size() != 64)
		return false;
	for (char c : s)
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
	return true;
}

expected<FileEntry> read_entry(json_object *o, const std::string &path)
{
	ObjectReader r(o, path);
	if (!r.ok())
		return unexpected(r.error());
	FileEntry e;
	auto p = r.str("path");
	if (!p)
		return unexpected(p.error());
	if (auto st = check_relative_name(*p); !st)
		return unexpected(st.error().within(r.field_path("path")));
	e.path = *p;
	auto size = r.integer("size", 0, INT64_MAX);
	if (!size)
		return unexpected(size.error());
	e.size = static_cast<uint64_t>(*size);
	auto sum = r.str("sha256");
	if (!sum)
		return unexpected(sum.error());
	if (!is_hex64(*sum))
		return unexpected(r.field_path("sha256"), "expected 64 lower-case hex digits");
	e.sha256 = *sum;
	if (auto st = r.finish(); !st)
		return unexpected(st.error());
	return e;
}

} // namespace

uint64_t Manifest::total_bytes() const
{
	uint64_t t = 0;
	for (const auto &f : files)
		t += f.size;
	return t;
}

std::string manifest_to_json(const Manifest &m)
{
	Json o = Json::object();
	o.set("format", Json::string(manifest_format));
	o.set("step", Json::integer(m.step));
	o.set("world_size", Json::integer(m.world_size));
	o.set("created", Json::number(m.created));
	o.set("write_seconds", Json::number(m.write_seconds));
	if (!m.job_id.empty())
		o.set("job_id", Json::string(m.job_id));
	o.set("restart_count", Json::integer(m.restart_count));
	if (!m.writer.empty())
		o.set("writer", Json::string(m.writer));
	Json files = Json::array();
	for (const auto &f : m.files) {
		Json e = Json::object();
		e.set("path", Json::string(f.path));
		e.set("size", Json::integer(static_cast<int64_t>(f.size)));
		e.set("sha256", Json::string(f.sha256));
		files.push(std::move(e));
	}
	o.set("files", std::move(files));
	return o.dump(true);
}

expected<Manifest> manifest_parse(std::string_view text, const std::string &source)
{
	auto doc = json_parse(text, source, 16);
	if (!doc)
		return unexpected(doc.error());
	ObjectReader r(doc->get(), "$");
	if (!r.ok())
		return unexpected(r.error().within(source));
	auto fail = [&](const Error &e) { return unexpected(e.within(source)); };
	Manifest m;
	auto format = r.str("format");
	if (!format)
		return fail(format.error());
	if (*format != manifest_format)
		return fail(Error(r.field_path("format"),
				  "unsupported format '" + *format + "' (expected " + manifest_format + ")"));
	auto step = r.integer("step", 0, max_step);
	if (!step)
		return fail(step.error());
	m.step = *step;
	auto ws = r.integer("world_size", 1, 100000000);
	if (!ws)
		return fail(ws.error());
	m.world_size = *ws;
	auto created = r.number("created");
	if (!created)
		return fail(created.error());
	if (!(*created >= 0 && *created < 1e11))
		return fail(Error(r.field_path("created"), "expected a unix time"));
	m.created = *created;
	auto ws_s = r.number("write_seconds");
	if (!ws_s)
		return fail(ws_s.error());
	if (!(*ws_s >= 0 && *ws_s < 1e7))
		return fail(Error(r.field_path("write_seconds"), "expected seconds between 0 and 1e7"));
	m.write_seconds = *ws_s;
	auto job = r.str_or("job_id", "");
	if (!job)
		return fail(job.error());
	m.job_id = *job;
	auto rc = r.integer_or("restart_count", 0, 0, 1000000);
	if (!rc)
		return fail(rc.error());
	m.restart_count = *rc;
	auto writer = r.str_or("writer", "");
	if (!writer)
		return fail(writer.error());
	m.writer = *writer;
	auto files = r.array("files");
	if (!files)
		return fail(files.error());
	size_t n = json_object_array_length(*files);
	if (n > max_files)
		return fail(Error(r.field_path("files"), "more than " + std::to_string(max_files) + " files"));
	std::set<std::string> seen;
	for (size_t i = 0; i < n; i++) {
		std::string path = ObjectReader::index_path(r.field_path("files"), i);
		auto e = read_entry(json_object_array_get_idx(*files, i), path);
		if (!e)
			return fail(e.error());
		if (!seen.insert(e->path).second)
			return fail(Error(path, "file '" + e->path + "' listed twice"));
		m.files.push_back(std::move(*e));
	}
	if (auto st = r.finish(); !st)
		return fail(st.error());
	return m;
}

expected<Manifest> manifest_read(const std::string &checkpoint_dir)
{
	std::string path = path_join(checkpoint_dir, manifest_name);
	auto text = read_file(path, manifest_max_bytes);
	if (!text)
		return unexpected(text.error());
	return manifest_parse(*text, path);
}

} // namespace loom::ckpt
