// The checkpoint conformance corpus (tests/ckpt/conformance/*.json, format
// in its README.md) run against lib/ckpt and the C++ SDK: each case is built
// in a temporary directory (conformance_tree.cpp), read with
// list_checkpoints/verify_checkpoint/check_job, find_latest for the case's
// job and loom::sdk::Checkpointer::restore() on the job's rank (what the
// rank reads back), pruned, and compared with the verdict a person wrote.
// Exit 1 naming every case and difference.
//
//   conformance_cpp CORPUS_DIR
#include "lib/ckpt/catalog.hpp"
#include "lib/ckpt/commit.hpp"
#include "lib/ckpt/layout.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"
#include "sdk/cpp/loom/ckpt.hpp"
#include "tests/ckpt/conformance_tree.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <json-c/json.h>
#include <set>
#include <unistd.h>

using namespace loom;
using namespace loom::conformance;

namespace {

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

// What a case expects (README.md), and the job that restores.
struct Case {
	json_object *want = nullptr, *verdicts = nullptr;
	bool want_found = false;
	int64_t want_step = 0;
	ckpt::Job job;
	std::vector<ckpt::FileEntry> restored; // the rank's files of what find_latest took
	std::vector<std::string> errs;

	std::string expected_of(const std::string &name) const
	{
		json_object *v = member(verdicts, name.c_str());
		return v ? get_str(v) : std::string();
	}
	void fail(const std::string &what) { errs.push_back(what); }
};

Case read_case(json_object *c)
{
	Case k;
	k.want = member(c, "expect");
	if (!member(c, "tree") || !k.want || !member(k.want, "checkpoints") ||
	    !json_object_object_get_ex(k.want, "restore", nullptr))
		bad_case("needs tree, expect.checkpoints and expect.restore");
	k.verdicts = member(k.want, "checkpoints");
	json_object *restore = member(k.want, "restore");
	k.want_found = restore != nullptr;
	k.want_step = restore ? json_object_get_int64(restore) : 0;
	if (json_object *job = member(c, "job")) {
		json_object *w = member(job, "world_size"), *r = member(job, "rank");
		k.job.world_size = w ? json_object_get_int64(w) : 1;
		k.job.rank = r ? json_object_get_int64(r) : 0;
	}
	return k;
}

// Every checkpoint's verdict: full verification of every part, then the job's check.
void check_verdicts(Case &k, const std::string &ckpt)
{
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
			if (st)
				st = ckpt::check_job(e.path, *e.manifest, k.job, &why);
			if (!st)
				problem = st.error().str();
		}
		std::string got = ckpt::problem_name(why), exp = k.expected_of(e.name);
		if (exp.empty()) {
			k.fail(e.name + ": listed (" + got + "), but the case names no verdict for it");
			continue;
		}
		std::string category = exp.substr(0, exp.find(' '));
		std::string field = exp.find(' ') == std::string::npos ? "" : exp.substr(exp.find(' ') + 1);
		if (got != category)
			k.fail(e.name + ": expected " + exp + ", got " + got + " (" + problem + ")");
		else if (!field.empty() && problem.find(field) == std::string::npos)
			k.fail(e.name + ": " + got + ", but the message does not name " + field + ": " + problem);
	}
	json_object_object_foreach(k.verdicts, name, verdict)
	{
		if (!listed.count(name))
			k.fail(std::string(name) + ": expected " + get_str(verdict) +
			       ", but the reader does not list it");
	}
}

// What the job's restore takes: find_latest for the job.
void check_find_latest(Case &k, const std::string &ckpt)
{
	auto latest = ckpt::find_latest(ckpt, ckpt::Verify::full, k.job);
	if (!latest)
		bad_case(latest.error().str());
	bool found = latest->has_value();
	int64_t step = found ? (*latest)->entry.step : 0;
	if (found != k.want_found || (found && step != k.want_step))
		k.fail("find_latest: expected step " + step_text(k.want_found, k.want_step) + ", got " +
		       step_text(found, step));
	if (found)
		k.restored = ckpt::rank_files(*(*latest)->entry.manifest, k.job.rank);
	if (found)
		for (const auto &s : (*latest)->skipped) {
			std::string exp = k.expected_of(s.name);
			if (ckpt::problem_name(s.reason) != exp.substr(0, exp.find(' ')))
				k.fail("find_latest skipped " + s.name + " as " + ckpt::problem_name(s.reason) +
				       ", expected " + exp);
		}
}

// expect.files: what the job's rank reads, by the names it saved, and nothing else.
void check_files(Case &k, const sdk::Restored &r)
{
	json_object *files = member(k.want, "files");
	if (!files)
		return;
	std::set<std::string> want_names, got_names(r.files.begin(), r.files.end());
	json_object_object_foreach(files, name, text)
	{
		want_names.insert(name);
		std::vector<char> data;
		std::string err;
		if (!r.read(name, &data, &err))
			k.fail("rank " + std::to_string(k.job.rank) + " restores no " + name + ": " + err);
		else if (std::string(data.begin(), data.end()) != get_str(text))
			k.fail("rank " + std::to_string(k.job.rank) + "'s " + name + " reads '" +
			       std::string(data.begin(), data.end()) + "', expected '" + get_str(text) + "'");
	}
	if (got_names != want_names)
		k.fail("rank " + std::to_string(k.job.rank) + " restores the files " +
		       show({got_names.begin(), got_names.end()}) + ", expected " +
		       show({want_names.begin(), want_names.end()}));
}

// The SDK's Checkpointer::restore() on the job's rank.
void check_sdk_restore(Case &k, const std::string &ckpt)
{
	sdk::Config cfg;
	cfg.dir = ckpt;
	cfg.keep = 0;
	cfg.world_size = k.job.world_size;
	cfg.rank = k.job.rank;
	sdk::Restored r;
	{
		sdk::Checkpointer ck(cfg, false);
		r = ck.restore();
	}
	if (!r.error.empty())
		k.fail("Checkpointer::restore: " + r.error);
	if (r.found != k.want_found || (r.found && r.step != k.want_step))
		k.fail("Checkpointer::restore: expected step " + step_text(k.want_found, k.want_step) + ", got " +
		       step_text(r.found, r.step));
	for (const auto &f : r.found ? k.restored : std::vector<ckpt::FileEntry>()) {
		std::vector<char> data;
		std::string err;
		if (!r.read(f.path, &data, &err))
			k.fail("restored " + f.path + " does not read back: " + err);
		else if (data.size() != f.size)
			k.fail("restored " + f.path + ": read " + std::to_string(data.size()) + " bytes");
	}
	check_files(k, r);
}

void check_prune(Case &k, const std::string &ckpt)
{
	json_object *prune = member(k.want, "prune");
	if (!prune)
		return;
	int keep = static_cast<int>(json_object_get_int64(member(prune, "keep")));
	std::vector<std::string> remain;
	json_object *rem = member(prune, "remain");
	for (size_t i = 0; rem && i < json_object_array_length(rem); i++)
		remain.push_back(get_str(json_object_array_get_idx(rem, i)));
	std::sort(remain.begin(), remain.end());
	if (auto p = ckpt::prune(ckpt, keep); !p)
		k.fail("prune: " + p.error().str());
	auto left = remaining(ckpt);
	if (left != remain)
		k.fail("prune keep=" + std::to_string(keep) + ": expected " + show(remain) + ", left " + show(left));
}

std::vector<std::string> run_case(json_object *c, const std::string &tmp)
{
	std::string ckpt = tmp + "/ckpt", outside = tmp + "/outside";
	conformance::make_dirs(ckpt);
	conformance::make_dirs(outside);
	Case k = read_case(c);
	auto made_outside = build(member(c, "tree"), ckpt, outside);
	check_verdicts(k, ckpt);
	check_find_latest(k, ckpt);
	check_sdk_restore(k, ckpt);
	check_prune(k, ckpt);
	for (const auto &[p, data] : made_outside) {
		auto now = read_file(p, 1u << 20);
		if (!now || *now != data)
			k.fail(p + " outside the checkpoint directory was changed or removed");
	}
	return k.errs;
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
