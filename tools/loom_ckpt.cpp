// loom ckpt: list, verify and prune checkpoint directories (users and admins).
//
//   loom ckpt ls DIR|--job ID [--json]
//   loom ckpt verify DIR|--job ID [--quick] [--ranks N]
//   loom ckpt prune DIR|--job ID --keep N [--dry-run]
// Without DIR or --job, inside a --ckpt job: its directory ($LOOM_CKPT_DIR).
#include "tools/command.hpp"
#include "tools/options.hpp"

#include "lib/ckpt/catalog.hpp"
#include "lib/ckpt/commit.hpp"
#include "lib/ckpt/job_note.hpp"
#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"
#include "lib/util/log.hpp"
#include "lib/util/subprocess.hpp"

#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

using namespace loom;

const char *const ckpt_about =
	"--job ID: the directory of that --ckpt job, from its AdminComment (scontrol show job);\n"
	"without DIR or --job, inside a --ckpt job: $LOOM_CKPT_DIR";

struct CkptArgs {
	std::string dir, job;
	bool json = false, quick = false, dry_run = false;
	int64_t keep = 0, ranks = 0;
};

tool::OptionTable ckpt_options(const std::string &sub, CkptArgs &a)
{
	using namespace tool;
	std::string cmd = "loom ckpt " + sub;
	OptionTable t(cmd,
		      sub == "ls"       ? "DIR|--job ID [--json]"
		      : sub == "verify" ? "DIR|--job ID [--quick] [--ranks N]"
					: "DIR|--job ID --keep N [--dry-run]",
		      sub == "ls" ? "Committed checkpoints, newest first, with a quick check of each.\n" +
					    std::string(ckpt_about)
		      : sub == "verify"
			      ? "Checks every checkpoint's files against its manifest (SHA-256; --quick: sizes)\n"
				"and names the one a restore would take; exit 1 when any is broken.\n" +
					std::string(ckpt_about)
			      : "Keeps the newest N complete checkpoints, removes older ones and staging debris.\n" +
					std::string(ckpt_about));
	t.add("--job", "ID", "the --ckpt job whose directory to use", [&a](const std::string &v) {
		if (!parse_int(v, 1, INT64_MAX))
			return std::string("expected a job id");
		a.job = v;
		return std::string();
	});
	if (sub == "ls")
		t.add("--json", "", "machine-readable output", set_flag(a.json));
	if (sub == "verify")
		t.add("--quick", "", "sizes only, no SHA-256", set_flag(a.quick))
			.add("--ranks", "N", "the checkpoint a job of N ranks would restore",
			     set_int(a.ranks, 1, ckpt::manifest_max_world_size));
	if (sub == "prune")
		t.add("--keep", "N", "complete checkpoints to keep", set_int(a.keep, 1, 100000))
			.add("--dry-run", "", "say what would be removed, remove nothing", set_flag(a.dry_run));
	t.positional([&a](const std::string &v) {
		if (!a.dir.empty())
			return "one directory only ('" + a.dir + "', '" + v + "')";
		a.dir = v;
		return std::string();
	});
	return t;
}

void ckpt_usage(FILE *out)
{
	bool first = true;
	for (const char *sub : {"ls", "verify", "prune"}) {
		CkptArgs a;
		tool::OptionTable t = ckpt_options(sub, a);
		std::fprintf(out, "%s%s %s\n", first ? "usage: " : "       ", t.cmd().c_str(), t.synopsis().c_str());
		first = false;
	}
	std::fprintf(out, "\n%s\n", ckpt_about);
}

// The directory of a --ckpt job: the note spank_ckpt keeps in its AdminComment.
expected<std::string> job_dir(const std::string &job)
{
	auto r = run_command({"scontrol", "show", "job", job}, 10);
	if (!r)
		return unexpected(r.error().within("scontrol show job " + job));
	if (r->exit_code != 0)
		return unexpected("scontrol show job " + job, std::string(trim(r->output)));
	std::string comment;
	for (const auto &l : split_lines(r->output)) {
		auto line = trim(l);
		if (line.substr(0, 13) == "AdminComment=")
			comment = std::string(line.substr(13));
	}
	auto note = ckpt::parse_job_note(comment, "job " + job);
	if (!note)
		return unexpected(note.error());
	return note->dir;
}

std::string when(double t)
{
	char buf[32];
	std::time_t s = static_cast<std::time_t>(t);
	struct tm tmv;
	::localtime_r(&s, &tmv);
	std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tmv);
	return buf;
}

// The writers: "1" (loom-ckpt/1: one process), "4" (four ranks), "4 dcp".
std::string ranks_text(const ckpt::Manifest &m)
{
	if (m.version == 1)
		return "1";
	return std::to_string(m.world_size) + (m.layout == ckpt::layout_dcp ? " dcp" : "");
}

// "2 files" or "4 ranks, 8 files" (with the layout when it is dcp).
std::string contents_text(const ckpt::Manifest &m)
{
	std::string files = std::to_string(m.files.size()) + " files";
	if (m.version == 1)
		return files;
	return std::to_string(m.world_size) + " ranks, " + (m.layout == ckpt::layout_dcp ? "layout dcp, " : "") + files;
}

void ls_json(Json &arr, const ckpt::Entry &e, const std::string &state, ckpt::Problem why)
{
	Json o = Json::object();
	o.set("name", Json::string(e.name)).set("step", Json::integer(e.step));
	o.set("path", Json::string(e.path)).set("state", Json::string(state));
	o.set("reason", Json::string(ckpt::problem_name(why)));
	if (e.manifest) {
		const ckpt::Manifest &m = *e.manifest;
		o.set("format", Json::string(m.version == 1 ? ckpt::manifest_format : ckpt::manifest_format_ranks));
		o.set("world_size", Json::integer(m.version == 1 ? 1 : m.world_size));
		if (m.version == 2) {
			o.set("layout", Json::string(m.layout));
			o.set("parts", Json::integer(static_cast<int64_t>(m.ranks.size())));
		}
		o.set("files", Json::integer(static_cast<int64_t>(m.files.size())));
		o.set("bytes", Json::integer(static_cast<int64_t>(m.total_bytes())));
		o.set("created", Json::number(m.created));
		o.set("write_seconds", Json::number(m.write_seconds));
	}
	arr.push(std::move(o));
}

int cmd_ls(const std::string &dir, bool json)
{
	auto list = ckpt::list_checkpoints(dir);
	if (!list) {
		std::fprintf(stderr, "loom ckpt ls: %s\n", list.error().str().c_str());
		return tool::exit_problems;
	}
	auto latest = ckpt::read_latest(dir);
	Json arr = Json::array();
	if (!json)
		std::printf("%-18s %12s %7s %6s %14s %-19s %9s  %s\n", "CHECKPOINT", "STEP", "RANKS", "FILES", "BYTES",
			    "CREATED", "WRITE_S", "STATE");
	for (const auto &e : *list) {
		std::string state = "ok";
		ckpt::Problem why = e.reason;
		if (!e.manifest)
			state = "broken: " + e.problem;
		else if (auto st = ckpt::verify_checkpoint(e.path, *e.manifest, ckpt::Verify::quick, &why); !st)
			state = "broken: " + st.error().str();
		if (latest && *latest == e.name)
			state += " (latest)";
		if (json) {
			ls_json(arr, e, state, why);
		} else if (e.manifest) {
			const ckpt::Manifest &m = *e.manifest;
			std::printf("%-18s %12lld %7s %6zu %14llu %-19s %9.2f  %s\n", e.name.c_str(),
				    static_cast<long long>(e.step), ranks_text(m).c_str(), m.files.size(),
				    static_cast<unsigned long long>(m.total_bytes()), when(m.created).c_str(),
				    m.write_seconds, state.c_str());
		} else {
			std::printf("%-18s %12lld %7s %6s %14s %-19s %9s  %s\n", e.name.c_str(),
				    static_cast<long long>(e.step), "-", "-", "-", "-", "-", state.c_str());
		}
	}
	if (json)
		std::fputs(arr.dump(true).c_str(), stdout);
	return tool::exit_ok;
}

int cmd_verify(const std::string &dir, bool quick, int64_t ranks)
{
	auto list = ckpt::list_checkpoints(dir);
	if (!list) {
		std::fprintf(stderr, "loom ckpt verify: %s\n", list.error().str().c_str());
		return tool::exit_problems;
	}
	int bad = 0;
	const ckpt::Entry *restore = nullptr;
	for (const auto &e : *list) {
		status st = e.manifest ? ckpt::verify_checkpoint(e.path, *e.manifest,
								 quick ? ckpt::Verify::quick : ckpt::Verify::full)
				       : status(unexpected(e.path, e.problem));
		if (!st) {
			bad++;
			std::printf("%s: BROKEN: %s\n", e.name.c_str(), st.error().str().c_str());
			continue;
		}
		std::string how = contents_text(*e.manifest);
		// A job of another size cannot take it; it is not broken for that.
		status fits = ranks > 0 ? ckpt::check_job(e.path, *e.manifest, ckpt::Job{ranks, 0}) : ok();
		if (!fits)
			how += "; not for this job: " + fits.error().message;
		std::printf("%s: ok (step %lld, %s)\n", e.name.c_str(), static_cast<long long>(e.step), how.c_str());
		if (!restore && fits)
			restore = &e;
	}
	std::string job = ranks < 1 ? "" : "a job of " + std::to_string(ranks) + (ranks == 1 ? " process" : " ranks");
	if (restore)
		std::printf("restore%s would take %s (step %lld)\n", job.empty() ? "" : (" by " + job).c_str(),
			    restore->path.c_str(), static_cast<long long>(restore->step));
	else
		std::printf("no complete checkpoint%s in %s\n", job.empty() ? "" : (" for " + job).c_str(),
			    dir.c_str());
	return bad ? tool::exit_problems : tool::exit_ok;
}

int cmd_prune(const std::string &dir, int keep, bool dry_run)
{
	auto r = ckpt::prune(dir, keep, 86400, dry_run);
	if (!r) {
		std::fprintf(stderr, "loom ckpt prune: %s\n", r.error().str().c_str());
		return tool::exit_problems;
	}
	const char *verb = dry_run ? "would remove" : "removed";
	for (const auto &n : r->removed)
		std::printf("%s %s\n", verb, n.c_str());
	for (const auto &p : r->staging_removed)
		std::printf("%s %s (staging debris)\n", verb, p.c_str());
	std::printf("kept %zu checkpoint(s)\n", r->kept.size());
	return tool::exit_ok;
}

// The directory: DIR, the job's, or $LOOM_CKPT_DIR. -1 when found, else the exit code.
int resolve_dir(const std::string &sub, CkptArgs &a)
{
	if (!a.dir.empty() && !a.job.empty()) {
		std::fprintf(stderr, "loom ckpt %s: a directory or --job, not both\n", sub.c_str());
		return tool::exit_usage;
	}
	if (!a.job.empty()) {
		auto d = job_dir(a.job);
		if (!d) {
			std::fprintf(stderr, "loom ckpt %s: %s\n", sub.c_str(), d.error().str().c_str());
			return tool::exit_problems;
		}
		a.dir = *d;
	} else if (const char *env = std::getenv("LOOM_CKPT_DIR"); a.dir.empty() && env && *env) {
		a.dir = env;
	}
	if (a.dir.empty()) {
		std::fprintf(stderr, "loom ckpt %s: a checkpoint directory or --job ID is required\n", sub.c_str());
		return tool::exit_usage;
	}
	return -1;
}

int ckpt_main(int argc, char **argv)
{
	std::string sub = argc > 1 ? argv[1] : "";
	if (sub == "--help" || sub == "-h" || sub == "help" || sub.empty()) {
		ckpt_usage(sub.empty() ? stderr : stdout);
		return sub.empty() ? tool::exit_usage : tool::exit_ok;
	}
	if (sub != "ls" && sub != "verify" && sub != "prune") {
		std::fprintf(stderr, "loom ckpt: unknown subcommand '%s'\n", sub.c_str());
		ckpt_usage(stderr);
		return tool::exit_usage;
	}
	CkptArgs a;
	tool::OptionTable t = ckpt_options(sub, a);
	if (int rc = t.parse(argc - 1, argv + 1); rc >= 0)
		return rc;
	if (int rc = resolve_dir(sub, a); rc >= 0)
		return rc;
	if (sub == "ls")
		return cmd_ls(a.dir, a.json);
	if (sub == "verify")
		return cmd_verify(a.dir, a.quick, a.ranks);
	if (a.keep == 0) {
		std::fprintf(stderr, "loom ckpt prune: --keep N is required\n");
		return tool::exit_usage;
	}
	return cmd_prune(a.dir, static_cast<int>(a.keep), a.dry_run);
}

loom::tool::Command ckpt_command{"ckpt", "checkpoints: ls, verify, prune", ckpt_main};

} // namespace
