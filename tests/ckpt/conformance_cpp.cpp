// The checkpoint conformance corpus (tests/ckpt/conformance/*.json, format
// in its README.md) run against lib/ckpt and the C++ SDK: each case is built
// in a temporary directory, read with list_checkpoints/verify_checkpoint,
// find_latest and loom::sdk::Checkpointer::restore(), pruned, and compared
// with the verdict a person wrote. Exit 1 naming every case and difference.
//
//   conformance_cpp CORPUS_DIR
#include "lib/ckpt/catalog.hpp"
#include "lib/ckpt/commit.hpp"
#include "lib/ckpt/layout.hpp"
#include "lib/ckpt/sha256.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"
#include "sdk/cpp/loom/ckpt.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <json-c/json.h>
#include <map>
#include <set>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

using namespace loom;

namespace {

struct Failure {
	std::string what;
};

[[noreturn]] void bad_case(const std::string &what) { throw Failure{what}; }

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

std::string get_str(json_object *o)
{
	return std::string(json_object_get_string(o), static_cast<size_t>(json_object_get_string_len(o)));
}

json_object *member(json_object *o, const char *key)
{
	json_object *v = nullptr;
	return json_object_object_get_ex(o, key, &v) ? v : nullptr;
}

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

std::string manifest_text(json_object *spec, const std::string &path, const std::string &outside)
{
	Json m(json_object_new_object());
	auto put = [&](const char *k, json_object *v) { json_object_object_add(m.get(), k, v); };
	put("format", json_object_new_string("loom-ckpt/1"));
	size_t slash = path.rfind('/');
	std::string dir = path.substr(0, slash);
	if (auto step = ckpt::parse_checkpoint_name(dir.substr(dir.rfind('/') + 1)))
		put("step", json_object_new_int64(*step));
	put("world_size", json_object_new_int64(1));
	put("created", json_object_new_int64(1700000000));
	put("write_seconds", json_object_new_double_s(0.5, "0.5"));
	json_object_object_foreach(spec, key, val)
	{
		if (val == nullptr) { // null: leave the field out
			json_object_object_del(m.get(), key);
			continue;
		}
		if (std::strcmp(key, "files") == 0 && json_object_get_type(val) == json_type_array) {
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
			put(key, files);
		} else {
			put(key, expand_json(val, outside));
		}
	}
	return m.dump(true);
}

void write_bytes(const std::string &path, const std::string &data)
{
	if (auto st = write_file_atomic(path, data, 0644); !st)
		bad_case(st.error().str());
}

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
			std::string data = m ? manifest_text(m, p, outside) : expand(get_str(member(e, "text")), outside, true);
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

std::vector<std::string> remaining(const std::string &ckpt)
{
	std::vector<std::string> out;
	for (const auto &n : list_dir(ckpt))
		if (ckpt::parse_checkpoint_name(n))
			out.push_back(n);
	for (const char *sub : {".staging", ".trash"})
		for (const auto &n : list_dir(ckpt + "/" + sub))
			out.push_back(std::string(sub) + "/" + n);
	std::sort(out.begin(), out.end());
	return out;
}

std::string show(const std::vector<std::string> &v)
{
	std::string s = "[";
	for (const auto &x : v)
		s += (s.size() > 1 ? ", " : "") + x;
	return s + "]";
}

std::string step_text(bool found, int64_t step) { return found ? std::to_string(step) : "none"; }

std::vector<std::string> run_case(json_object *c, const std::string &tmp)
{
	std::vector<std::string> errs;
	std::string ckpt = tmp + "/ckpt", outside = tmp + "/outside";
	make_dirs(ckpt);
	make_dirs(outside);
	json_object *tree = member(c, "tree"), *want = member(c, "expect");
	if (!tree || !want || !member(want, "checkpoints") || !json_object_object_get_ex(want, "restore", nullptr))
		bad_case("needs tree, expect.checkpoints and expect.restore");
	auto made_outside = build(tree, ckpt, outside);
	json_object *wanted = member(want, "checkpoints");
	json_object *restore = member(want, "restore");
	bool want_found = restore != nullptr;
	int64_t want_step = restore ? json_object_get_int64(restore) : 0;
	auto expected_of = [&](const std::string &n) {
		json_object *v = member(wanted, n.c_str());
		return v ? get_str(v) : std::string();
	};

	// Every checkpoint's verdict (full verification).
	auto list = ckpt::list_checkpoints(ckpt);
	if (!list)
		bad_case(list.error().str());
	std::set<std::string> listed;
	for (const auto &e : *list) {
		listed.insert(e.name);
		ckpt::Problem why = e.reason;
		std::string problem = e.problem;
		if (e.manifest) {
			auto st = ckpt::verify_checkpoint(e.path, *e.manifest, ckpt::Verify::full, &why);
			if (!st)
				problem = st.error().str();
		}
		std::string got = ckpt::problem_name(why), exp = expected_of(e.name);
		if (exp.empty()) {
			errs.push_back(e.name + ": listed (" + got + "), but the case names no verdict for it");
			continue;
		}
		std::string category = exp.substr(0, exp.find(' '));
		std::string field = exp.find(' ') == std::string::npos ? "" : exp.substr(exp.find(' ') + 1);
		if (got != category)
			errs.push_back(e.name + ": expected " + exp + ", got " + got + " (" + problem + ")");
		else if (!field.empty() && problem.find(field) == std::string::npos)
			errs.push_back(e.name + ": " + got + ", but the message does not name " + field + ": " + problem);
	}
	json_object_object_foreach(wanted, name, verdict)
	{
		if (!listed.count(name))
			errs.push_back(std::string(name) + ": expected " + get_str(verdict) + ", but the reader does not list it");
	}

	// What restore takes: find_latest, and the SDK's Checkpointer::restore().
	auto latest = ckpt::find_latest(ckpt, ckpt::Verify::full);
	if (!latest)
		bad_case(latest.error().str());
	bool found = latest->has_value();
	int64_t step = found ? (*latest)->entry.step : 0;
	if (found != want_found || (found && step != want_step))
		errs.push_back("find_latest: expected step " + step_text(want_found, want_step) + ", got " +
			       step_text(found, step));
	if (found)
		for (const auto &s : (*latest)->skipped) {
			std::string exp = expected_of(s.name);
			if (ckpt::problem_name(s.reason) != exp.substr(0, exp.find(' ')))
				errs.push_back("find_latest skipped " + s.name + " as " + ckpt::problem_name(s.reason) +
					       ", expected " + exp);
		}
	sdk::Config cfg;
	cfg.dir = ckpt;
	cfg.keep = 0;
	sdk::Restored r;
	{
		sdk::Checkpointer ck(cfg, false);
		r = ck.restore();
	}
	if (!r.error.empty())
		errs.push_back("Checkpointer::restore: " + r.error);
	if (r.found != want_found || (r.found && r.step != want_step))
		errs.push_back("Checkpointer::restore: expected step " + step_text(want_found, want_step) + ", got " +
			       step_text(r.found, r.step));
	if (found && r.found)
		for (const auto &f : (*latest)->entry.manifest->files) {
			std::vector<char> data;
			std::string err;
			if (!sdk::Checkpointer::read_file(r.path, f.path, &data, &err))
				errs.push_back("restored " + f.path + " does not read back: " + err);
			else if (data.size() != f.size)
				errs.push_back("restored " + f.path + ": read " + std::to_string(data.size()) + " bytes");
		}

	// Retention.
	if (json_object *prune = member(want, "prune")) {
		int keep = static_cast<int>(json_object_get_int64(member(prune, "keep")));
		std::vector<std::string> remain;
		json_object *rem = member(prune, "remain");
		for (size_t i = 0; rem && i < json_object_array_length(rem); i++)
			remain.push_back(get_str(json_object_array_get_idx(rem, i)));
		std::sort(remain.begin(), remain.end());
		if (auto p = ckpt::prune(ckpt, keep); !p)
			errs.push_back("prune: " + p.error().str());
		auto left = remaining(ckpt);
		if (left != remain)
			errs.push_back("prune keep=" + std::to_string(keep) + ": expected " + show(remain) + ", left " +
				       show(left));
	}
	for (const auto &[p, data] : made_outside) {
		auto now = read_file(p, 1u << 20);
		if (!now || *now != data)
			errs.push_back(p + " outside the checkpoint directory was changed or removed");
	}
	return errs;
}

// A reader that blocks (a FIFO opened blocking) fails the case, not make check.
char g_case[256] = "";
void on_alarm(int)
{
	static const char msg[] = "FAIL (did not finish within 30 s: a reader blocked?) ";
	[[maybe_unused]] ssize_t w = ::write(1, msg, sizeof msg - 1);
	w = ::write(1, g_case, std::strlen(g_case));
	w = ::write(1, "\n", 1);
	::_exit(1);
}

} // namespace

int main(int argc, char **argv)
{
	std::string corpus;
	if (argc == 2)
		corpus = argv[1];
	else if (const char *src = std::getenv("LOOM_SRCDIR"))
		corpus = std::string(src) + "/tests/ckpt/conformance";
	else
		corpus = "tests/ckpt/conformance";
	std::vector<std::string> names;
	for (const auto &n : list_dir(corpus))
		if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0)
			names.push_back(n);
	std::sort(names.begin(), names.end());
	if (names.empty()) {
		std::printf("conformance_cpp: FAIL: no cases in %s\n", corpus.c_str());
		return 1;
	}
	int failed = 0;
	for (const auto &n : names) {
		char tmpl[] = "/tmp/loom-conf-cpp-XXXXXX";
		if (!::mkdtemp(tmpl)) {
			std::printf("conformance_cpp: FAIL: mkdtemp: %s\n", std::strerror(errno));
			return 1;
		}
		std::vector<std::string> errs;
		std::snprintf(g_case, sizeof g_case, "%s", n.c_str());
		std::signal(SIGALRM, on_alarm);
		::alarm(30);
		try {
			auto doc = json_parse_file(corpus + "/" + n);
			if (!doc)
				bad_case(doc.error().str());
			errs = run_case(doc->get(), tmpl);
		} catch (const Failure &f) {
			errs.push_back("bad case or runner failure: " + f.what);
		} catch (const std::exception &ex) {
			errs.push_back(std::string("exception: ") + ex.what());
		}
		::alarm(0);
		(void)ckpt::remove_tree(tmpl);
		std::string id = n.substr(0, n.size() - 5);
		if (errs.empty())
			std::printf("ok   %s\n", id.c_str());
		else
			failed++;
		for (const auto &e : errs)
			std::printf("FAIL %s: %s\n", id.c_str(), e.c_str());
	}
	std::printf("conformance_cpp: %zu case(s), %d failed\n", names.size(), failed);
	return failed ? 1 : 0;
}
