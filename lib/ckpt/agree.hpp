// loom ckpt: one decision to checkpoint for every rank of a job
// (doc/loom-ckpt-protocol.md 7.5), the C++ side of what
// sdk/python/loom_ckpt/agree.py (StampAgreement, GroupAgreement) and
// launch.py (RequestWatch) do.
//
// - RequestWatch: spank_ckpt's request file <dir>/.loom-request
//   (request.hpp), read at most once per period; a seq larger than the one
//   seen at the start, or than the one the last save served, is a wish.
// - StampAgreement (no collective): rank 0, when it wishes and no stamp of
//   its own is pending, writes {"step": S, "seq": k} to
//   <dir>/.loom-save-at.<run>, S = step + max(2, ceil(lead_seconds /
//   step_seconds)); every rank stats the file on each call, re-reads it only
//   when its inode, mtime or size changed, and says yes exactly at step S,
//   once per seq. A rank already past S says so on one stderr line and does
//   not save (rank 0's commit of S then runs into its deadline). Stamps there
//   when the agreement is made are taken as done.
// - GroupAgreement (an all-reduce maximum hook, MPI_Allreduce): the hook
//   runs only on calls every rank counts alike: the first, then
//   calls + max(1, floor(period / slowest step seconds)), from the reduced
//   values. Each such call is two collective calls of the hook, in this
//   order: the wish (0 or 1), then the rank's step time in whole
//   microseconds; the answer is the maximum wish. Every rank must call
//   decide() once per step and have the same period.
//
// Step seconds are an average of the time between calls (0.8 of the old,
// 0.2 of the new; the first interval taken as is) on an injectable
// monotonic clock. Messages go to an injectable sink (default: one line on
// stderr, "loom_ckpt: ...").
#pragma once

#include "lib/util/expected.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace loom::ckpt {

inline constexpr const char *stamp_prefix = ".loom-save-at.";
inline constexpr size_t stamp_max_bytes = 4096;
inline constexpr int64_t stamp_max_seq = 9007199254740991; // 2^53 - 1, as request.hpp

struct Stamp {
	int64_t step = -1;
	int64_t seq = 0; // 0: none
};

// Strict: one object with exactly "step" (0 to max_step) and "seq" (1 to
// 2^53 - 1), integers; errors name 'source' and the field.
expected<Stamp> parse_stamp(std::string_view text, const std::string &source);
// {"step": S, "seq": k} and a newline: the bytes Python's json.dumps writes.
std::string format_stamp(const Stamp &s);
std::string stamp_path(const std::string &dir, const std::string &run);
// nullopt when there is no file. Opened with O_NOFOLLOW | O_NONBLOCK: a
// symlink, a FIFO, a directory or a device is refused unread, and so is a
// file over stamp_max_bytes.
expected<std::optional<Stamp>> read_stamp(const std::string &path);
// Atomically (a .tmp beside it, fsync, rename, fsync of the directory),
// 0644; the directory is made (0700) when it is not there.
status write_stamp(const std::string &path, const Stamp &s);

using Clock = std::function<double()>;                // seconds, monotonic
using Say = std::function<void(const std::string &)>; // one line, without "\n"
Clock monotonic_clock();
Say stderr_say(); // "loom_ckpt: <line>\n" on stderr

// The average time between calls of tick().
class StepTimer {
public:
	explicit StepTimer(Clock clock) : clock_(std::move(clock)) {}
	double tick();
	double seconds() const { return seconds_; }

private:
	Clock clock_;
	std::optional<double> last_;
	double seconds_ = 0;
};

class RequestWatch {
public:
	RequestWatch(std::string dir, double period_s = 1.0, Clock clock = monotonic_clock(), Say say = stderr_say());
	// A request newer than the one served; the file is read at most once per period.
	bool pending();
	// A save starts: every request written so far is served. The file is
	// read again here: a request written with the signal that started this
	// save (spank_ckpt writes the file, then signals) must not ask for a
	// second save once the period lets pending() read it.
	void served();
	int64_t latest() const { return latest_; }

private:
	int64_t read_seq();

	std::string dir_;
	double period_;
	Clock clock_;
	Say say_;
	bool warned_ = false;
	int64_t latest_ = 0, seen_ = 0;
	double next_ = 0;
};

class StampAgreement {
public:
	StampAgreement(const std::string &dir, const std::string &run, int64_t rank, double lead_seconds = 2.0,
		       Clock clock = monotonic_clock(), Say say = stderr_say());
	// Call once per step on every rank with the step the program would save.
	bool decide(bool wish, int64_t step);
	const Stamp &stamp() const { return stamp_; }
	int64_t done() const { return done_; }
	double step_seconds() const { return timer_.seconds(); }
	const std::string &path() const { return path_; }

private:
	bool stamp_own(int64_t step);
	bool changed();
	void say_once(const std::string &line);

	struct FileSig {
		ino_t ino = 0;
		int64_t mtime_ns = 0;
		off_t size = -1;
		bool operator==(const FileSig &o) const
		{
			return ino == o.ino && mtime_ns == o.mtime_ns && size == o.size;
		}
	};
	std::string path_;
	int64_t rank_;
	double lead_seconds_;
	int64_t lead_steps_ = 2;
	StepTimer timer_;
	Say say_;
	std::optional<FileSig> sig_;
	Stamp stamp_;
	int64_t done_ = 0;
	bool said_ = false;
};

class GroupAgreement {
public:
	using AllMax = std::function<int64_t(int64_t)>;
	GroupAgreement(AllMax all_max, double period_s = 1.0, Clock clock = monotonic_clock());
	bool decide(bool wish);
	int64_t calls() const { return calls_; }
	int64_t next_call() const { return next_call_; }

private:
	AllMax all_max_;
	double period_;
	StepTimer timer_;
	int64_t calls_ = 0, next_call_ = 1;
};

} // namespace loom::ckpt
