#include "lib/ckpt/agree.hpp"

#include "lib/ckpt/layout.hpp"
#include "lib/ckpt/request.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"
#include "lib/util/log.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <json-c/json.h>
#include <sys/stat.h>
#include <unistd.h>

namespace loom::ckpt {
namespace {

std::string dir_of(const std::string &path)
{
	size_t slash = path.find_last_of('/');
	return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

} // namespace

expected<Stamp> parse_stamp(std::string_view text, const std::string &source)
{
	auto doc = json_parse(text, source, 4);
	if (!doc)
		return unexpected(doc.error());
	ObjectReader r(doc->get(), "$");
	if (!r.ok())
		return unexpected(r.error().within(source));
	auto step = r.integer("step", 0, max_step);
	if (!step)
		return unexpected(step.error().within(source));
	auto seq = r.integer("seq", 1, stamp_max_seq);
	if (!seq)
		return unexpected(seq.error().within(source));
	if (auto st = r.finish(); !st)
		return unexpected(st.error().within(source));
	return Stamp{*step, *seq};
}

std::string format_stamp(const Stamp &s)
{
	return strprintf("{\"step\": %lld, \"seq\": %lld}\n", static_cast<long long>(s.step),
			 static_cast<long long>(s.seq));
}

std::string stamp_path(const std::string &dir, const std::string &run)
{
	return path_join(dir, std::string(stamp_prefix) + run);
}

expected<std::optional<Stamp>> read_stamp(const std::string &path)
{
	int e = 0;
	auto text = read_small_file(path, stamp_max_bytes, &e);
	if (!text && e == ENOENT) // absent, or replaced between lstat and open: read it next time
		return std::optional<Stamp>();
	if (!text)
		return unexpected(text.error());
	auto s = parse_stamp(*text, path);
	if (!s)
		return unexpected(s.error());
	return std::optional<Stamp>(*s);
}

status write_stamp(const std::string &path, const Stamp &s)
{
	if (s.step < 0 || s.step > max_step || s.seq < 1 || s.seq > stamp_max_seq)
		return unexpected(path, strprintf("step %lld, seq %lld: not a stamp", static_cast<long long>(s.step),
						  static_cast<long long>(s.seq)));
	if (auto st = make_dirs(dir_of(path), 0700); !st)
		return st;
	return write_file_atomic(path, format_stamp(s), 0644);
}

Clock monotonic_clock()
{
	return [] {
		return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
	};
}

Say stderr_say()
{
	return [](const std::string &line) { std::fprintf(stderr, "loom_ckpt: %s\n", line.c_str()); };
}

double StepTimer::tick()
{
	double now = clock_();
	if (last_) {
		double dt = now - *last_;
		seconds_ = seconds_ == 0 ? dt : 0.8 * seconds_ + 0.2 * dt;
	}
	last_ = now;
	return seconds_;
}

RequestWatch::RequestWatch(std::string dir, double period_s, Clock clock, Say say)
	: dir_(std::move(dir)), period_(period_s), clock_(std::move(clock)), say_(std::move(say))
{
	latest_ = seen_ = read_seq();
	next_ = clock_() + period_;
}

int64_t RequestWatch::read_seq()
{
	int errnum = 0;
	auto r = read_request(dir_, &errnum);
	if (r)
		return r->seq;
	if (errnum == ENOENT)
		return 0;
	if (!warned_) {
		warned_ = true;
		say_("ignoring the checkpoint request file: " + r.error().str());
	}
	return latest_;
}

bool RequestWatch::pending()
{
	double now = clock_();
	if (now >= next_) {
		next_ = now + period_;
		latest_ = std::max(latest_, read_seq());
	}
	return latest_ > seen_;
}

void RequestWatch::served()
{
	latest_ = std::max(latest_, read_seq());
	seen_ = latest_;
	next_ = clock_() + period_;
}

StampAgreement::StampAgreement(const std::string &dir, const std::string &run, int64_t rank, double lead_seconds,
			       Clock clock, Say say)
	: path_(stamp_path(dir, run)), rank_(rank), lead_seconds_(lead_seconds), timer_(std::move(clock)),
	  say_(std::move(say))
{
	auto s = read_stamp(path_);
	if (!s)
		say_once("ignoring the stamped step: " + s.error().str());
	else if (*s)
		stamp_ = **s;
	done_ = stamp_.seq; // stamps of this launch made before this process do not count
}

void StampAgreement::say_once(const std::string &line)
{
	if (!said_)
		say_(line);
	said_ = true;
}

bool StampAgreement::changed()
{
	struct stat st;
	if (::stat(path_.c_str(), &st) != 0)
		return false;
	FileSig now{st.st_ino, static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec, st.st_size};
	if (sig_ && *sig_ == now)
		return false;
	sig_ = now;
	return true;
}

// Rank 0 wishes and has no stamp pending: stamp a step a few steps (and a
// few seconds of steps) ahead.
bool StampAgreement::stamp_own(int64_t step)
{
	double secs = timer_.seconds();
	double lead = static_cast<double>(lead_steps_);
	if (secs > 0)
		lead = std::max(lead, std::ceil(lead_seconds_ / secs));
	Stamp next{step + static_cast<int64_t>(std::min(lead, static_cast<double>(max_step))), done_ + 1};
	if (auto st = write_stamp(path_, next); !st) {
		say_once("cannot stamp the step to save: " + st.error().str());
		return false;
	}
	stamp_ = next;
	return true;
}

bool StampAgreement::decide(bool wish, int64_t step)
{
	timer_.tick();
	if (step < 0 || step > max_step) {
		say_once(strprintf("should_checkpoint(step): step %lld is not a checkpoint step (0 to %lld)",
				   static_cast<long long>(step), static_cast<long long>(max_step)));
		return false;
	}
	if (rank_ == 0 && wish && stamp_.seq <= done_) {
		if (!stamp_own(step))
			return false;
	} else if (changed()) {
		auto s = read_stamp(path_);
		if (!s)
			say_once("ignoring the stamped step: " + s.error().str());
		else if (*s)
			stamp_ = **s;
	}
	if (stamp_.seq <= done_ || step < stamp_.step)
		return false;
	done_ = stamp_.seq;
	if (step > stamp_.step) {
		say_(strprintf("rank %lld is at step %lld, past the stamped step %lld: it does not save it, "
			       "and that checkpoint will not commit",
			       static_cast<long long>(rank_), static_cast<long long>(step),
			       static_cast<long long>(stamp_.step)));
		return false;
	}
	return true;
}

GroupAgreement::GroupAgreement(AllMax all_max, double period_s, Clock clock)
	: all_max_(std::move(all_max)), period_(period_s), timer_(std::move(clock))
{
}

bool GroupAgreement::decide(bool wish)
{
	double secs = timer_.tick();
	if (++calls_ < next_call_)
		return false;
	// Two collective calls, the same on every rank: the wish, then the step
	// time in whole microseconds (at least 1 once there is one).
	int64_t agreed = all_max_(wish ? 1 : 0);
	double us = secs > 0 ? std::clamp(std::ceil(secs * 1e6), 1.0, 1e15) : 0.0;
	double slowest = static_cast<double>(all_max_(static_cast<int64_t>(us))) / 1e6;
	int64_t every = 1;
	if (slowest > 0)
		every = std::max<int64_t>(1, static_cast<int64_t>(std::min(period_ / slowest, 1e12)));
	next_call_ = calls_ + every;
	return agreed > 0;
}

} // namespace loom::ckpt
