#include "lib/ckpt/manifest.hpp"

#include "lib/ckpt/layout.hpp"
#include "lib/ckpt/manifest_ranks.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <json-c/json.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace loom::ckpt {
namespace {

constexpr size_t max_files = manifest_max_files;

// A \uD800-\uDFFF escape that is not half of a surrogate pair. json-c turns
// it into U+FFFD where other readers keep it or fail: refused, so that every
// reader sees the same names.
bool has_lone_surrogate(std::string_view text)
{
	auto escape_at = [&](size_t i, unsigned *v) {
		if (i + 6 > text.size() || text[i] != '\\' || text[i + 1] != 'u')
			return false;
		unsigned x = 0;
		for (size_t k = i + 2; k < i + 6; k++) {
			char c = text[k];
			unsigned d = c >= '0' && c <= '9'   ? c - '0'
				     : c >= 'a' && c <= 'f' ? c - 'a' + 10
				     : c >= 'A' && c <= 'F' ? c - 'A' + 10
							    : 16;
			if (d == 16)
				return false;
			x = x * 16 + d;
		}
		*v = x;
		return true;
	};
	for (size_t i = 0; i < text.size(); i++) {
		if (text[i] != '\\')
			continue;
		unsigned v, w;
		if (!escape_at(i, &v)) {
			i++; // any other escape: skip the escaped character
			continue;
		}
		if (v >= 0xdc00 && v <= 0xdfff)
			return true;
		if (v >= 0xd800 && v <= 0xdbff) {
			if (!escape_at(i + 6, &w) || w < 0xdc00 || w > 0xdfff)
				return true;
			i += 6;
		}
		i += 5;
	}
	return false;
}

// Where a control character stands that JSON (RFC 8259) does not allow:
// inside a string none, between tokens all but tab, LF and CR. json-c lets a
// raw tab inside a string and a form feed between tokens pass, other readers
// do not. npos when there is none.
size_t raw_control_at(std::string_view text)
{
	bool in_string = false;
	for (size_t i = 0; i < text.size(); i++) {
		auto c = static_cast<unsigned char>(text[i]);
		if (in_string && c == '\\') {
			if (i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0x20)
				return i + 1;
			i++; // the escaped character
			continue;
		}
		if (c == '"')
			in_string = !in_string;
		else if (c < 0x20 && (in_string || (c != '\t' && c != '\n' && c != '\r')))
			return i;
	}
	return std::string_view::npos;
}

// The manifest's text: a regular file (never through a symlink) of at most manifest_max_bytes.
expected<std::string> read_manifest_text(const std::string &path, ManifestFault *fault)
{
	int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		int e = errno;
		*fault = e == ENOENT ? ManifestFault::missing : ManifestFault::refused;
		if (e == ENOENT)
			return unexpected(path, "no manifest (an uncommitted or torn checkpoint)");
		return unexpected(path, e == ELOOP ? std::string("is a symlink: refused")
						   : std::string("cannot open: ") + std::strerror(e));
	}
	struct stat st = {};
	if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) > manifest_max_bytes) {
		bool regular = S_ISREG(st.st_mode);
		::close(fd);
		*fault = ManifestFault::refused;
		return unexpected(path,
				  regular ? "larger than " + std::to_string(manifest_max_bytes) + " bytes: refused"
					  : std::string("is not a regular file: refused"));
	}
	std::string text;
	char buf[65536];
	while (true) {
		ssize_t n = ::read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			::close(fd);
			*fault = ManifestFault::refused;
			return unexpected(path, std::string("read error: ") + std::strerror(e));
		}
		if (n == 0)
			break;
		text.append(buf, static_cast<size_t>(n));
		if (text.size() > manifest_max_bytes) {
			::close(fd);
			*fault = ManifestFault::refused;
			return unexpected(path,
					  "larger than " + std::to_string(manifest_max_bytes) + " bytes: refused");
		}
	}
	::close(fd);
	return text;
}

bool is_hex64(const std::string &s)
{
	if (s.size() != 64)
		return false;
	for (char c : s)
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
	return true;
}

} // namespace

namespace detail {

expected<FileEntry> read_file_entry(json_object *o, const std::string &path, std::string_view prefix)
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
	if (p->compare(0, prefix.size(), prefix) != 0)
		return unexpected(r.field_path("path"), "'" + *p + "' is not below " + std::string(prefix) +
								" (a rank's files are in its own directory)");
	e.path = *p;
	auto size = r.integer("size", 0, manifest_max_file_size);
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

} // namespace detail

namespace {

// The files of a loom-ckpt/1 manifest.
status read_files(ObjectReader &r, Manifest &m)
{
	auto files = r.array("files");
	if (!files)
		return unexpected(files.error());
	size_t n = json_object_array_length(*files);
	if (n > max_files)
		return unexpected(r.field_path("files"), "more than " + std::to_string(max_files) + " files");
	std::set<std::string> seen;
	for (size_t i = 0; i < n; i++) {
		std::string path = ObjectReader::index_path(r.field_path("files"), i);
		auto e = detail::read_file_entry(json_object_array_get_idx(*files, i), path);
		if (!e)
			return unexpected(e.error());
		if (!seen.insert(e->path).second)
			return unexpected(path, "file '" + e->path + "' listed twice");
		m.files.push_back(std::move(*e));
	}
	return ok();
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
	o.set("format", Json::string(m.version == 2 ? manifest_format_ranks : manifest_format));
	o.set("step", Json::integer(m.step));
	o.set("world_size", Json::integer(m.world_size));
	o.set("created", Json::number(m.created));
	o.set("write_seconds", Json::number(m.write_seconds));
	if (!m.job_id.empty())
		o.set("job_id", Json::string(m.job_id));
	o.set("restart_count", Json::integer(m.restart_count));
	if (!m.writer.empty())
		o.set("writer", Json::string(m.writer));
	if (m.version == 2) {
		o.set("layout", Json::string(m.layout));
		Json parts = Json::array();
		for (const auto &p : m.ranks)
			parts.push(detail::part_json(p));
		o.set("ranks", std::move(parts));
	} else {
		o.set("files", detail::files_json(m.files));
	}
	return o.dump(true);
}

expected<Manifest> manifest_parse(std::string_view text, const std::string &source)
{
	if (!is_utf8(text))
		return unexpected(source, "not valid UTF-8");
	if (auto at = raw_control_at(text); at != std::string_view::npos)
		return unexpected(source, "a raw control character at byte " + std::to_string(at) +
						  " (JSON allows only tab, CR and LF, and only between tokens)");
	if (has_lone_surrogate(text))
		return unexpected(source, "a \\u escape of half a surrogate pair");
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
	if (*format != manifest_format && *format != manifest_format_ranks)
		return fail(Error(r.field_path("format"), "unsupported format '" + *format + "' (expected " +
								  manifest_format + " or " + manifest_format_ranks +
								  ")"));
	m.version = *format == manifest_format ? 1 : 2;
	auto step = r.integer("step", 0, max_step);
	if (!step)
		return fail(step.error());
	m.step = *step;
	auto ws = r.integer("world_size", 1, manifest_max_world_size);
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
	auto rc = r.integer_or("restart_count", 0, 0, manifest_max_restart_count);
	if (!rc)
		return fail(rc.error());
	m.restart_count = *rc;
	auto writer = r.str_or("writer", "");
	if (!writer)
		return fail(writer.error());
	m.writer = *writer;
	if (auto st = m.version == 2 ? detail::read_ranks(r, m) : read_files(r, m); !st)
		return fail(st.error());
	if (auto st = r.finish(); !st)
		return fail(st.error());
	return m;
}

expected<Manifest> manifest_read(const std::string &checkpoint_dir, ManifestFault *fault)
{
	ManifestFault scratch;
	ManifestFault &f = fault ? *fault : scratch;
	f = ManifestFault::none;
	std::string path = path_join(checkpoint_dir, manifest_name);
	auto text = read_manifest_text(path, &f);
	if (!text)
		return unexpected(text.error());
	auto m = manifest_parse(*text, path);
	if (!m)
		f = ManifestFault::invalid;
	return m;
}

} // namespace loom::ckpt
