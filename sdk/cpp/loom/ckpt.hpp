// loom checkpoint SDK for C++ applications (link with -lloom_ckpt).
//
//   loom::sdk::Checkpointer ck;                      // reads LOOM_CKPT_* from the job
//   if (auto r = ck.restore(); r.found) load(r);     // newest verified checkpoint, if any
//   for (step = r.step; step < steps; step++) {
//       train(step);
//       if (ck.should_checkpoint())                   // signal seen, or interval due
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
#pragma once

#include <cstddef>
#include <cstdint>
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
	std::string dir;          // LOOM_CKPT_DIR
	int signal = 0;           // LOOM_CKPT_SIGNAL (0: none)
	int64_t interval_s = 0;   // LOOM_CKPT_INTERVAL (0: only on signal)
	int keep = 3;             // LOOM_CKPT_KEEP
	int64_t restart_count = 0; // LOOM_RESTART_COUNT
	int64_t world_size = 1;
	std::string job_id;       // SLURM_JOB_ID
	static Config from_env();
};

struct __attribute__((visibility("default"))) Restored {
	bool found = false;
	int64_t step = 0;
	std::string path;  // the checkpoint directory; read files with read_file()
	std::string error; // set when the directory could not be read at all
	std::vector<std::string> skipped; // newer checkpoints that failed verification, with why
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

	// True when the checkpoint signal arrived or the interval is due since
	// the last save. Cheap: call it every step.
	bool should_checkpoint();
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
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

} // namespace loom::sdk
