// The conformance corpus's trees: see conformance_tree.hpp.
#include "tests/ckpt/conformance_tree.hpp"

#include "lib/ckpt/layout.hpp"
#include "lib/ckpt/sha256.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <json-c/json.h>
#include <optional>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

namespace loom::conformance {

void bad_case(const std::string &what) { throw Failure{what}; }

namespace {

// The bytes a case string stands for, templates applied (README.md).
std::string expand(const std::string &s, const std::string &outside, bool allow_bytes = false)
{
	std::string out;
	size_t pos = 0;
	while (true) {
		size_t open = s.find("{{", pos);
		size_t close = open == std::string::npos ? open : s.find("}}", open + 2);
		if (close == std::string::npos) {
			out += s.substr(pos);
			return out;
		}
		out += s.substr(pos, open - pos);
		std::string word = s.substr(open + 2, close - open - 2);
		if (word == "outside") {
			out += outside;
		} else if (word == "host") {
			out += ckpt::staging_host();
		} else if (word.rfind("repeat:", 0) == 0) {
			size_t colon = word.find(':', 7);
			if (colon == std::string::npos)
				bad_case("bad template {{" + word + "}}");
			long n = std::strtol(word.substr(7, colon - 7).c_str(), nullptr, 10);
			for (long i = 0; i < n; i++)
				out += word.substr(colon + 1);
		} else if (word.rfind("sha256:", 0) == 0) {
			std::string t = word.substr(7);
			out += ckpt::sha256_hex(t.data(), t.size());
		} else if (word.rfind("byte:", 0) == 0 && word.size() == 7 && allow_bytes) {
			out += static_cast<char>(std::strtol(word.substr(5).c_str(), nullptr, 16));
		} else {
			bad_case("bad template {{" + word + "}}");
		}
		pos = close + 2;
	}
}

} // namespace

std::string get_str(json_object *o)
{
	return std::string(json_object_get_string(o), static_cast<size_t>(json_object_get_string_len(o)));
}

json_object *member(json_object *o, const char *key)
{
	json_object *v = nullptr;
	return json_object_object_get_ex(o, key, &v) ? v : nullptr;
}

namespace {

// A deep copy of a case value with templates applied to its strings.
json_object *expand_json(json_object *v, const std::string &outside)
{
	switch (json_object_get_type(v)) {
	case json_type_string: {
		std::string s = expand(get_str(v), outside);
		return json_object_new_string_len(s.data(), static_cast<int>(s.size()));
	}
	case json_type_array: {
		json_object *a = json_object_new_array();
		for (size_t i = 0; i < json_object_array_length(v); i++)
			json_object_array_add(a, expand_json(json_object_array_get_idx(v, i), outside));
		return a;
	}
	case json_type_object: {
		json_object *o = json_object_new_object();
		json_object_object_foreach(v, k, x) json_object_object_add(o, k, expand_json(x, outside));
		return o;
	}
	default:
		return json_object_get(v); // numbers keep the text they were read from
	}
}

// A files array with the {"path", "content"} shorthand expanded.
json_object *files_json(json_object *val, const std::string &outside)
{
	json_object *files = json_object_new_array();
	for (size_t i = 0; i < json_object_array_length(val); i++) {
		json_object *f = json_object_array_get_idx(val, i);
		json_object *content = json_object_get_type(f) == json_type_object ? member(f, "content") : nullptr;
		if (content && member(f, "path") && json_object_object_length(f) == 2) {
			std::string data = expand(get_str(content), outside);
			json_object *e = json_object_new_object();
			json_object_object_add(e, "path", expand_json(member(f, "path"), outside));
			json_object_object_add(e, "size", json_object_new_int64(static_cast<int64_t>(data.size())));
			std::string h = ckpt::sha256_hex(data.data(), data.size());
			json_object_object_add(e, "sha256", json_object_new_string(h.c_str()));
			json_object_array_add(files, e);
		} else {
			json_object_array_add(files, expand_json(f, outside));
		}
	}
	return files;
}

bool is_array(json_object *v) { return v && json_object_get_type(v) == json_type_array; }

// A loom-ckpt/2 part: its step is the directory's unless given (right after
// "rank"), its files take the content shorthand.
json_object *part_json(json_object *spec, const std::optional<int64_t> &step, const std::string &outside)
{
	if (json_object_get_type(spec) != json_type_object)
		return expand_json(spec, outside);
	json_object *p = json_object_new_object();
	bool stepped = member(spec, "step") != nullptr || !step;
	json_object_object_foreach(spec, key, val)
	{
		bool files = std::strcmp(key, "files") == 0 && is_array(val);
		json_object_object_add(p, key, files ? files_json(val, outside) : expand_json(val, outside));
		if (std::strcmp(key, "rank") == 0 && !stepped) {
			json_object_object_add(p, "step", json_object_new_int64(*step));
			stepped = true;
		}
	}
	if (!stepped)
		json_object_object_add(p, "step", json_object_new_int64(*step));
	return p;
}

json_object *parts_json(json_object *val, const std::optional<int64_t> &step, const std::string &outside)
{
	json_object *parts = json_object_new_array();
	for (size_t i = 0; i < json_object_array_length(val); i++)
		json_object_array_add(parts, part_json(json_object_array_get_idx(val, i), step, outside));
	return parts;
}

std::string manifest_text(json_object *spec, const std::string &path, const std::string &outside)
{
	Json m(json_object_new_object());
	auto put = [&](const char *k, json_object *v) { json_object_object_add(m.get(), k, v); };
	json_object *ranks = member(spec, "ranks");
	bool v2 = is_array(ranks);
	put("format", json_object_new_string(v2 ? "loom-ckpt/2" : "loom-ckpt/1"));
	size_t slash = path.rfind('/');
	std::string dir = path.substr(0, slash);
	auto step = ckpt::parse_checkpoint_name(dir.substr(dir.rfind('/') + 1));
	if (step)
		put("step", json_object_new_int64(*step));
	put("world_size", json_object_new_int64(v2 ? static_cast<int64_t>(json_object_array_length(ranks)) : 1));
	put("created", json_object_new_int64(1700000000));
	put("write_seconds", json_object_new_double_s(0.5, "0.5"));
	if (v2)
		put("layout", json_object_new_string("ranks"));
	json_object_object_foreach(spec, key, val)
	{
		if (val == nullptr) // null: leave the field out
			json_object_object_del(m.get(), key);
		else if (std::strcmp(key, "files") == 0 && is_array(val))
			put(key, files_json(val, outside));
		else if (std::strcmp(key, "ranks") == 0 && v2)
			put(key, parts_json(val, step, outside));
		else
			put(key, expand_json(val, outside));
	}
	return m.dump(true);
}

void write_bytes(const std::string &path, const std::string &data)
{
	if (auto st = write_file_atomic(path, data, 0644); !st)
		bad_case(st.error().str());
}

} // namespace

void make_dirs(const std::string &path)
{
	for (size_t pos = 1; (pos = path.find('/', pos)) != std::string::npos; pos++)
		(void)::mkdir(path.substr(0, pos).c_str(), 0755);
	(void)::mkdir(path.c_str(), 0755);
}

// Build the tree; returns what was written outside the checkpoint directory.
std::map<std::string, std::string> build(json_object *tree, const std::string &ckpt, const std::string &outside)
{
	std::map<std::string, std::string> made_outside;
	for (size_t i = 0; i < json_object_array_length(tree); i++) {
		json_object *e = json_object_array_get_idx(tree, i);
		const char *kind = nullptr;
		for (const char *k : {"dir", "file", "symlink", "fifo"})
			if (member(e, k))
				kind = k;
		if (!kind)
			bad_case("tree entry " + std::to_string(i) + " has no dir, file, symlink or fifo");
		std::string rel = expand(get_str(member(e, kind)), outside);
		std::string p = rel.rfind(outside + "/", 0) == 0 ? rel : ckpt + "/" + rel;
		make_dirs(p.substr(0, p.rfind('/')));
		std::string k = kind;
		if (k == "dir") {
			make_dirs(p);
		} else if (k == "symlink") {
			if (::symlink(expand(get_str(member(e, "to")), outside).c_str(), p.c_str()) != 0)
				bad_case(p + ": symlink: " + std::strerror(errno));
		} else if (k == "fifo") {
			if (::mkfifo(p.c_str(), 0600) != 0)
				bad_case(p + ": mkfifo: " + std::strerror(errno));
		} else if (json_object *sparse = member(e, "sparse")) {
			int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (fd < 0 || ::ftruncate(fd, json_object_get_int64(sparse)) != 0)
				bad_case(p + ": cannot make a sparse file");
			::close(fd);
		} else {
			json_object *m = member(e, "manifest");
			std::string data =
				m ? manifest_text(m, p, outside) : expand(get_str(member(e, "text")), outside, true);
			write_bytes(p, data);
			if (p.rfind(outside + "/", 0) == 0)
				made_outside[p] = data;
		}
		if (json_object *age = member(e, "age_s")) {
			struct timeval tv[2];
			::gettimeofday(&tv[0], nullptr);
			tv[0].tv_sec -= json_object_get_int64(age);
			tv[1] = tv[0];
			(void)::lutimes(p.c_str(), tv);
		}
	}
	return made_outside;
}

} // namespace loom::conformance
