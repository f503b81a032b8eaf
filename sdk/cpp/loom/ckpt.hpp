// loom checkpoint SDK for C++ applications (link with -lloom_ckpt).
//
//   loom::sdk::Checkpointer ck;                      // reads LOOM_CKPT_* from the job
//   if (auto r = ck.restore(); r.found) load(r);     // newest verified checkpoint, if any
//   for (step = r.step; step < steps; step++) {
//       train(step);
//       if (ck.should_checkpoint(step + 1))           // signal, interval or request
//           ck.save_async(step + 1, {{"model.bin", w.data(), w.size() * sizeof w[0]}});
//   }
//   ck.wait();
//
// save_async() copies the buffers and returns; a background thread writes,
// checksums and commits the checkpoint atomically. Only committed, verified
// checkpoints are ever restored; a corrupt newest one falls back to the one
// before it. Nothing here throws.
//
// The copy goes to snapshot memory the checkpointer keeps and reuses, so
// later saves hold the caller for a memory copy only. The first save would
// also wait for that memory to be faulted in (on a VM, seconds for a few GiB):
// call reserve() once the buffers' sizes are known, e.g. after restore(),
//
//   ck.reserve({{"model.bin", w.data(), w.size() * sizeof w[0]}});
//
// and the background thread does it while training runs. Snapshots of 64 MiB
// or more are copied by up to 4 threads. LOOM_CKPT_HUGE_PAGES=1 asks for
// transparent huge pages for the snapshot memory: fewer page faults on bare
// metal, but on a VM that returns free memory to its host (virtio-balloon
// free page reporting) each huge page is new host memory and faulting it in
// is many times slower, so it is off by default.
//
// A job of several ranks (a world size above 1, from the launcher: RANK and
// WORLD_SIZE of torchrun, SLURM_PROCID and SLURM_NTASKS of srun, Open MPI's or
// PMIx's; doc/loom-ckpt-protocol.md section 7) writes one "loom-ckpt/2"
// checkpoint per step: every rank saves the same steps, each its own
// buffers, and rank 0 commits once every rank's part is written (waiting at
// most commit_timeout_s, LOOM_CKPT_COMMIT_TIMEOUT; past it the step is not
// committed and rank 0's save fails naming the ranks that did not finish).
// restore() takes, on every rank, the newest checkpoint of the same world
// size that verifies, and gives the rank its own files by the names it saved:
//
//   auto r = ck.restore();
//   for (const auto &name : r.files) r.read(name, &bytes);
//
// should_checkpoint() wishes to save when the checkpoint signal arrived,
// the interval is due since the last save, or spank_ckpt's request file
// <dir>/.loom-request (lib/ckpt/request.hpp) has a seq larger than the one
// seen when the Checkpointer was made or served by the last save (read at
// most once a second; a bad file is told once on stderr and ignored). Every
// rank of a job must answer alike (section 7.5), so with several ranks:
//
// - Without allreduce_max (below) pass the step you would save,
//   should_checkpoint(step), on every rank at every step: rank 0, when it
//   wishes, stamps a step a few steps ahead (at least 2, and at least
//   LOOM_CKPT_STAMP_LEAD seconds of steps, default 2) in
//   <dir>/.loom-save-at.<run>; every rank says yes exactly at that step. A
//   rank already past it says so on stderr and does not save (that step
//   then does not commit). Stamps of this launch made before this
//   Checkpointer do not count. should_checkpoint() without a step says once
//   on stderr that the step is needed, and answers false.
// - An MPI program may give the checkpointer a way to agree, so that every
//   rank takes the same decision and restores the same step even when their
//   views differ (a file changed between two ranks' reads, a signal seen by
//   one rank):
//
//   auto cfg = loom::sdk::Config::from_env();
//   cfg.allreduce_max = [](int64_t v) {
//       int64_t o;
//       MPI_Allreduce(&v, &o, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
//       return o;
//   };
//   cfg.allreduce_min = ... the same with MPI_MIN ...;
//   loom::sdk::Checkpointer ck(cfg);
//
// Each is then called collectively. allreduce_max by should_checkpoint(),
// which every rank must call once per step (the step argument is not
// needed): on the first call and then about once per
// LOOM_CKPT_AGREE_SECONDS (default 1; the same on every rank) of the slowest
// rank's steps, on calls every rank counts alike (the next is
// calls + max(1, period / slowest step seconds), from the reduced values);
// each time it is called twice, first with the rank's wish (0 or 1), then
// with its average step time in microseconds; the answer is the maximum
// wish. allreduce_min by restore() (a few times, the same number on every
// rank). With allreduce_min set, a rank hashes only its own part and checks
// the others' sizes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace loom::sdk {

struct __attribute__((visibility("default"))) Buffer {
	std::string name; // relative file name inside the checkpoint
	const void *data = nullptr;
	size_t size = 0;
};

struct __attribute__((visibility("default"))) Config {
	std::string dir;               // LOOM_CKPT_DIR
	int signal = 0;                // LOOM_CKPT_SIGNAL (0: none)
	int64_t interval_s = 0;        // LOOM_CKPT_INTERVAL (0: only on signal)
	int keep = 3;                  // LOOM_CKPT_KEEP
	int64_t restart_count = 0;     // LOOM_RESTART_COUNT
	int64_t world_size = 1;        // the launcher's (see above); 1: a checkpoint of one process
	std::string job_id;            // SLURM_JOB_ID
	int64_t rank = 0;              // the launcher's
	std::string run;               // the launch's id (several ranks: names their shared staging)
	double commit_timeout_s = 600; // LOOM_CKPT_COMMIT_TIMEOUT: rank 0's wait for every part
	double stamp_lead_s = 2.0;     // LOOM_CKPT_STAMP_LEAD: seconds of steps between a stamp and its step
	double agree_period_s = 1.0;   // LOOM_CKPT_AGREE_SECONDS: between two calls of allreduce_max
	std::string error;             // from_env(): variables that do not read; saves and restore fail with it
	// Optional all-reduce (maximum, minimum) over the job's ranks; see above.
	std::function<int64_t(int64_t)> allreduce_max, allreduce_min;
	static Config from_env();
};

struct __attribute__((visibility("default"))) Restored {
	bool found = false;
	int64_t step = 0;
	std::string path;                 // the checkpoint directory
	std::string error;                // set when the directory could not be read at all
	std::vector<std::string> skipped; // newer checkpoints that failed verification, with why
	// This rank's files, by the names it saved them by, and the directory
	// holding them (path itself, or path/rank-<r> in a checkpoint of
	// several ranks): read them with read() or read_file(files_dir, name).
	std::vector<std::string> files;
	std::string files_dir;
	int64_t world_size = 1; // the checkpoint's writers (1: one process)
	bool read(const std::string &name, std::vector<char> *out, std::string *error = nullptr) const;
};

class __attribute__((visibility("default"))) Checkpointer {
public:
	Checkpointer(); // Config::from_env()
	explicit Checkpointer(Config c, bool install_signal_handler = true);
	~Checkpointer(); // waits for a save in flight
	Checkpointer(const Checkpointer &) = delete;
	Checkpointer &operator=(const Checkpointer &) = delete;

	const Config &config() const;
	bool enabled() const; // a directory is configured

	// Whether to save now: the checkpoint signal arrived, the interval is
	// due since the last save, or a request came (see above). Cheap: call
	// it every step. With several ranks the answer is the same on every
	// rank: allreduce_max's, else rank 0's stamped step, which needs 'step'
	// (the step you would save; without it, with several ranks and no
	// allreduce_max: false).
	bool should_checkpoint();
	// Ask for a checkpoint from this rank (the program's own reason): the next
	// should_checkpoint() the ranks agree on says yes on every rank.
	void request();
	bool should_checkpoint(int64_t step);
	// Prepare snapshot memory for buffers like these (only their sizes
	// count; the data is not read) in the background, and return at once.
	// A save_async() that comes before it is done stops it and faults the
	// rest in with its copy: it is not held longer than without reserve().
	// Memory already large enough is kept; a larger save later maps more.
	// False (with error) when checkpointing is off (no directory) or no
	// background thread could start.
	bool reserve(const std::vector<Buffer> &buffers, std::string *error = nullptr);
	bool reserve(const std::vector<size_t> &sizes, std::string *error = nullptr);
	bool save_async(int64_t step, const std::vector<Buffer> &buffers, std::string *error = nullptr);
	bool save(int64_t step, const std::vector<Buffer> &buffers, std::string *error = nullptr);
	// Wait for the save (or reserve) in flight; false (with error) when the
	// last save failed.
	bool wait(std::string *error = nullptr);
	double last_stall_seconds() const;
	double last_write_seconds() const;

	Restored restore() const;
	static bool read_file(const std::string &checkpoint_path, const std::string &name, std::vector<char> *out,
			      std::string *error = nullptr);

private:
	bool usable(std::string *error) const; // a directory, and launcher variables that read
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

} // namespace loom::sdk
