// loom ckpt: list, verify and prune checkpoint directories (users and admins).
//
//   loom ckpt ls DIR [--json]
//   loom ckpt verify DIR [--quick]
//   loom ckpt prune DIR --keep N [--dry-run]
#include "tools/command.hpp"

#include "lib/ckpt/catalog.hpp"
#include "lib/ckpt/commit.hpp"
#include "lib/util/config.hpp"
#include "lib/util/json.hpp"
#include "lib/util/log.hpp"

#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

using namespace loom;

void usage(FILE *out)
{
	std::fprintf(out,
		     "usage: loom ckpt ls DIR [--json]\n"
		     "       loom ckpt verify DIR [--quick]\n"
		     "       loom ckpt prune DIR --keep N [--dry-run]\n\n"
		     "ls      committed checkpoints, newest first, with a quick check of each\n"
		     "verify  check every checkpoint's files against its manifest (SHA-256; --quick: sizes)\n"
		     "        and name the one a restore would take; exit 1 when any is broken\n"
		     "prune   keep the newest N complete checkpoints, remove older ones and staging debris\n");
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
		std::printf("%-18s %12s %6s %14s %-19s %9s  %s\n", "CHECKPOINT", "STEP", "FILES", "BYTES", "CREATED",
			    "WRITE_S", "STATE");
	for (const auto &e : *list) {
		std::string state = "ok";
		if (!e.manifest)
			state = "broken: " + e.problem;
		else if (auto st = ckpt::verify_checkpoint(e.path, *e.manifest, ckpt::Verify::quick); !st)
			state = "broken: " + st.error().str();
		if (latest && *latest == e.name)
			state += " (latest)";
		if (json) {
			Json o = Json::object();
			o.set("name", Json::string(e.name)).set("step", Json::integer(e.step));
			o.set("path", Json::string(e.path)).set("state", Json::string(state));
			if (e.manifest) {
				o.set("files", Json::integer(static_cast<int64_t>(e.manifest->files.size())));
				o.set("bytes", Json::integer(static_cast<int64_t>(e.manifest->total_bytes())));
				o.set("created", Json::number(e.manifest->created));
				o.set("write_seconds", Json::number(e.manifest->write_seconds));
			}
			arr.push(std::move(o));
		} else if (e.manifest) {
			std::printf("%-18s %12lld %6zu %14llu %-19s %9.2f  %s\n", e.name.c_str(),
				    static_cast<long long>(e.step), e.manifest->files.size(),
				    static_cast<unsigned long long>(e.manifest->total_bytes()),
				    when(e.manifest->created).c_str(), e.manifest->write_seconds, state.c_str());
		} else {
			std::printf("%-18s %12lld %6s %14s %-19s %9s  %s\n", e.name.c_str(), static_cast<long long>(e.step),
				    "-", "-", "-", "-", state.c_str());
		}
	}
	if (json)
		std::fputs(arr.dump(true).c_str(), stdout);
	return tool::exit_ok;
}

int cmd_verify(const std::string &dir, bool quick)
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
		if (st) {
			std::printf("%s: ok (step %lld, %zu files)\n", e.name.c_str(), static_cast<long long>(e.step),
				    e.manifest->files.size());
			if (!restore)
				restore = &e;
		} else {
			bad++;
			std::printf("%s: BROKEN: %s\n", e.name.c_str(), st.error().str().c_str());
		}
	}
	if (restore)
		std::printf("restore would take %s (step %lld)\n", restore->path.c_str(),
			    static_cast<long long>(restore->step));
	else
		std::printf("no complete checkpoint in %s\n", dir.c_str());
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

int ckpt_main(int argc, char **argv)
{
	if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? tool::exit_usage : tool::exit_ok;
	}
	std::string sub = argv[1];
	if ((sub == "ls" || sub == "verify" || sub == "prune") && tool::asks_help(argc - 1, argv + 1)) {
		usage(stdout);
		return tool::exit_ok;
	}
	std::string dir;
	bool json = false, quick = false, dry_run = false;
	int keep = 0;
	for (int i = 2; i < argc; i++) {
		std::string a = argv[i];
		if (a == "--json" && sub == "ls")
			json = true;
		else if (a == "--quick" && sub == "verify")
			quick = true;
		else if (a == "--dry-run" && sub == "prune")
			dry_run = true;
		else if ((a == "--keep" || a.rfind("--keep=", 0) == 0) && sub == "prune") {
			std::string v = a == "--keep" ? (i + 1 < argc ? argv[++i] : "") : a.substr(7);
			auto k = parse_int(v, 1, 100000);
			if (!k)
				return tool::bad_value("loom ckpt prune", "--keep", v, k.error().message);
			keep = static_cast<int>(*k);
		} else if (!a.empty() && a[0] != '-' && dir.empty())
			dir = a;
		else {
			std::fprintf(stderr, "loom ckpt %s: unexpected argument '%s'\n", sub.c_str(), a.c_str());
			usage(stderr);
			return tool::exit_usage;
		}
	}
	if (dir.empty()) {
		std::fprintf(stderr, "loom ckpt %s: a checkpoint directory is required\n", sub.c_str());
		return tool::exit_usage;
	}
	if (sub == "ls")
		return cmd_ls(dir, json);
	if (sub == "verify")
		return cmd_verify(dir, quick);
	if (sub == "prune") {
		if (keep == 0) {
			std::fprintf(stderr, "loom ckpt prune: --keep N is required\n");
			return tool::exit_usage;
		}
		return cmd_prune(dir, keep, dry_run);
	}
	std::fprintf(stderr, "loom ckpt: unknown subcommand '%s'\n", sub.c_str());
	usage(stderr);
	return tool::exit_usage;
}

loom::tool::Command ckpt_command{"ckpt", "checkpoints: ls, verify, prune", ckpt_main};

} // namespace
