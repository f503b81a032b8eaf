// loom ckpt: a rank's share of a checkpoint of several ranks, format
// "loom-ckpt/2", layout "ranks" (doc/loom-ckpt-protocol.md 7.4).
//
//   auto s = RankSave::begin(dir, step, {rank, world, run}, seq);
//   s->write_file("model.bin", data, size);  // <staging>/rank-<r>/model.bin
//   s->finish_part(write_s);                 // .parts/rank-<r>.json: this rank is done
//   if (rank == 0)
//       s->commit(manifest, timeout_s);       // waits for every part, then MANIFEST.json,
//                                             // step-N and latest as a checkpoint of one process
//
// Every rank of a launch derives the same staging directory,
// <dir>/.staging/step-N.run-<run>.<seq>. A checkpoint is committed only by
// rank 0 and only once every rank's part is there: a rank killed anywhere
// leaves staging debris (removed by prune once old), never a checkpoint. Past
// the deadline rank 0 fails naming the ranks that did not finish and commits
// nothing.
#pragma once

#include "lib/ckpt/commit.hpp"
#include "lib/ckpt/manifest.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::ckpt {

struct RankJob {
	int64_t rank = 0;
	int64_t world_size = 1;
	std::string run; // the launch's run id (ranks.hpp): the same on every rank
};

class RankSave {
public:
	// Joins (or creates) the shared staging directory of save number 'seq'.
	static expected<RankSave> begin(const std::string &dir, int64_t step, const RankJob &job, uint64_t seq);

	const std::string &path() const { return staging_.path(); }
	// One file of this rank, by the name it restores it by (below rank-<r>/ on disk).
	expected<FileEntry> write_file(const std::string &name, const void *data, size_t size);
	// Write this rank's part (the files written so far) atomically: its share is done.
	status finish_part(double write_seconds);
	// Rank 0, after its own finish_part(): wait up to timeout_s for every
	// rank's part (polling with backoff up to 50 ms), check each, write
	// MANIFEST.json (m's job fields; parts in rank order), remove .parts
	// and publish. Returns the committed checkpoint's path.
	expected<std::string> commit(Manifest m, double timeout_s);

private:
	RankSave(Staging s, RankJob job, int64_t step) : staging_(std::move(s)), job_(std::move(job)), step_(step) {}
	Staging staging_;
	RankJob job_;
	int64_t step_;
	bool finished_ = false;
};

// The parts in <staging>/.parts, in rank order, once all of a world's are
// there; past timeout_s an error naming the ranks still missing. Each part
// must name its own rank, 'step' and 'world_size'.
expected<std::vector<RankPart>> wait_for_parts(const std::string &staging, int64_t step, int64_t world_size,
					       double timeout_s);

} // namespace loom::ckpt
