// The checker of tests/ckpt/crash_ranks.sh, after a round of ranks of which
// one was killed (kill -9):
//
//   crash_ranks_check DIR WORLD LAST
//
// - every committed checkpoint in DIR (step-N) is "loom-ckpt/2" with a part
//   for every rank of its world (2 or 3 ranks) in rank order, each part the
//   files a.bin and b.bin of its own step, verifying in full; and on disk,
//   whatever the manifest says, rank-<r>/a.bin and b.bin hold rank r's bytes
//   of step N, whole (ranks_writer.cpp's crash_bytes(): a header naming the
//   file, rank, step and body size, then "<rank>/<step>/<file>|" repeated);
// - LAST (the last step rank 0 of this round said it committed, -1 for
//   none) is committed, by WORLD ranks;
// - restore() through the SDK as every rank of a job of 2 and of 3 ranks
//   takes the newest committed checkpoint of that world, at least LAST for
//   WORLD, and gives each rank its own two files, whole.
//
// Prints "restored STEP" (or "restored none") for WORLD; exit 1 saying what
// was wrong on stderr.
#include "lib/ckpt/catalog.hpp"
#include "lib/ckpt/layout.hpp"
#include "lib/ckpt/manifest.hpp"
#include "lib/util/fs.hpp"
#include "sdk/cpp/loom/ckpt.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

const std::vector<std::string> files{"a.bin", "b.bin"};

int fail(const std::string &why)
{
	std::fprintf(stderr, "crash_ranks_check: %s\n", why.c_str());
	return 1;
}

// "" when 'data' is the whole 'file' of rank 'rank' at step 'step'; else what it is.
std::string judge_bytes(const std::string &data, const std::string &file, int64_t rank, int64_t step)
{
	size_t nl = data.find('\n');
	if (nl == std::string::npos)
		return "has no header line (" + std::to_string(data.size()) + " bytes)";
	std::string head = data.substr(0, nl);
	char f[64] = "";
	long long r = -1, s = -1;
	unsigned long long body = 0;
	int used = 0;
	if (std::sscanf(head.c_str(), "loom crash-ranks file=%63s rank=%lld step=%lld body=%llu%n", f, &r, &s, &body,
			&used) != 4 ||
	    static_cast<size_t>(used) != head.size())
		return "has a header that does not read: '" + head.substr(0, 80) + "'";
	if (f != file || r != rank || s != step)
		return "holds " + std::string(f) + " of rank " + std::to_string(r) + " at step " + std::to_string(s);
	if (data.size() != nl + 1 + body)
		return "is torn: " + std::to_string(data.size() - nl - 1) + " bytes after its header, which says " +
		       std::to_string(body);
	std::string unit = std::to_string(rank) + "/" + std::to_string(step) + "/" + file + "|";
	for (size_t i = 0; i < body; i++)
		if (data[nl + 1 + i] != unit[i % unit.size()])
			return "differs from its pattern at byte " + std::to_string(nl + 1 + i);
	return "";
}

std::string judge_file(const std::string &path, const std::string &file, int64_t rank, int64_t step)
{
	auto data = loom::read_file(path);
	if (!data)
		return data.error().str();
	std::string why = judge_bytes(*data, file, rank, step);
	return why.empty() ? ""
			   : path + " (rank " + std::to_string(rank) + "'s " + file + " of step " +
				     std::to_string(step) + ") " + why;
}

// One committed checkpoint; its world size, or an error.
loom::expected<int64_t> check_committed(const std::string &path, int64_t step)
{
	using namespace loom::ckpt;
	auto m = manifest_read(path);
	if (!m)
		return loom::unexpected(m.error());
	int64_t w = m->world_size;
	if (m->version != 2 || m->layout != layout_ranks || m->step != step || (w != 2 && w != 3))
		return loom::unexpected(path, "not a loom-ckpt/2 checkpoint of step " + std::to_string(step) +
						      " by 2 or 3 ranks");
	if (m->ranks.size() != static_cast<size_t>(w))
		return loom::unexpected(path, "committed with " + std::to_string(m->ranks.size()) + " parts of " +
						      std::to_string(w));
	for (int64_t r = 0; r < w; r++) {
		std::vector<std::string> names;
		for (const auto &f : rank_files(*m, r))
			names.push_back(f.path);
		std::sort(names.begin(), names.end());
		if (m->ranks[r].rank != r || m->ranks[r].step != step || names != files)
			return loom::unexpected(path, "part " + std::to_string(r) + " is not rank " +
							      std::to_string(r) + "'s a.bin and b.bin of step " +
							      std::to_string(step));
		for (const auto &f : files)
			if (auto why = judge_file(path + "/" + rank_dir_name(r) + "/" + f, f, r, step); !why.empty())
				return loom::unexpected(why);
	}
	if (auto st = verify_checkpoint(path, *m, Verify::full); !st)
		return loom::unexpected(st.error());
	return w;
}

// Restore as every rank of a job of 'world' ranks; 'newest' is what each must get.
std::string check_restore(const std::string &dir, int64_t world, std::optional<int64_t> newest)
{
	for (int64_t r = 0; r < world; r++) {
		loom::sdk::Config c;
		c.dir = dir;
		c.world_size = world;
		c.rank = r;
		c.run = "crash-check";
		loom::sdk::Checkpointer ck(c, false);
		auto res = ck.restore();
		std::string who = "restore as rank " + std::to_string(r) + " of " + std::to_string(world) + ": ";
		if (!res.error.empty())
			return who + res.error;
		std::string got = res.found ? std::to_string(res.step) : "none";
		std::string want = newest ? std::to_string(*newest) : "none";
		if (got != want)
			return who + "step " + got + ", the newest committed by " + std::to_string(world) +
			       " ranks is " + want;
		if (!res.found)
			continue;
		std::vector<std::string> names = res.files;
		std::sort(names.begin(), names.end());
		if (names != files)
			return who + std::to_string(names.size()) + " files, not a.bin and b.bin";
		for (const auto &f : files) {
			std::vector<char> data;
			std::string err;
			if (!res.read(f, &data, &err))
				return who + err;
			if (auto why = judge_bytes(std::string(data.begin(), data.end()), f, r, res.step); !why.empty())
				return who + f + " of step " + got + " " + why;
		}
	}
	return "";
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 4) {
		std::fprintf(stderr, "usage: crash_ranks_check DIR WORLD LAST\n");
		return 2;
	}
	std::string dir = argv[1];
	int64_t world = std::stoll(argv[2]), last = std::stoll(argv[3]);
	std::map<int64_t, int64_t> committed; // step -> world size
	for (const auto &name : loom::list_dir(dir)) {
		auto step = loom::ckpt::parse_checkpoint_name(name);
		if (!step)
			continue;
		auto w = check_committed(dir + "/" + name, *step);
		if (!w)
			return fail(w.error().str());
		committed[*step] = *w;
	}
	if (last >= 0 && !(committed.count(last) && committed[last] == world))
		return fail("rank 0 committed step " + std::to_string(last) + " by " + std::to_string(world) +
			    " ranks, and it is not there");
	for (int64_t w : {2, 3}) {
		std::optional<int64_t> newest;
		for (const auto &[step, sw] : committed)
			if (sw == w)
				newest = step;
		if (auto why = check_restore(dir, w, newest); !why.empty())
			return fail(why);
		if (w == world)
			std::printf("restored %s\n", newest ? std::to_string(*newest).c_str() : "none");
	}
	return 0;
}
