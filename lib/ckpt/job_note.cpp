#include "lib/ckpt/job_note.hpp"

#include "lib/util/admin_comment.hpp"
#include "lib/util/log.hpp"

#include <ctime>
#include <vector>

namespace loom::ckpt {
namespace {

constexpr std::string_view none_text = ": no checkpoint yet";
constexpr std::string_view step_text = ": step ";

std::string local_time(double t)
{
	time_t s = static_cast<time_t>(t);
	struct tm tm = {};
	char buf[32];
	if (!::localtime_r(&s, &tm) || !std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm))
		return "?";
	return buf;
}

} // namespace

std::string human_bytes(uint64_t bytes)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
	if (bytes < 1024)
		return std::to_string(bytes) + " B";
	double v = static_cast<double>(bytes) / 1024;
	size_t u = 0;
	for (; v >= 1024 && u + 1 < std::size(units); u++)
		v /= 1024;
	return strprintf(v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
}

expected<std::string> format_job_note(const JobNote &n)
{
	if (n.dir.empty() || n.dir.find('\n') != std::string::npos ||
	    n.dir.find(job_note_separator) != std::string::npos)
		return unexpected(n.dir, "cannot be named in the job's AdminComment (a newline or \" | \")");
	std::string s = std::string(job_note_prefix) + n.dir;
	if (n.step < 0)
		return s + std::string(none_text);
	return s + strprintf("%.*s%lld, %s, committed %s", static_cast<int>(step_text.size()), step_text.data(),
			     static_cast<long long>(n.step), human_bytes(n.bytes).c_str(),
			     local_time(n.created).c_str());
}

expected<JobNote> parse_job_note(std::string_view admin_comment, const std::string &source)
{
	for (auto seg : admin_comment_segments(admin_comment)) {
		if (seg.substr(0, job_note_prefix.size()) != job_note_prefix)
			continue;
		seg.remove_prefix(job_note_prefix.size());
		JobNote n;
		if (seg.size() > none_text.size() && seg.substr(seg.size() - none_text.size()) == none_text) {
			n.dir = std::string(seg.substr(0, seg.size() - none_text.size()));
			return n;
		}
		size_t at = seg.rfind(step_text);
		if (at == std::string_view::npos || at == 0)
			return unexpected(source, "AdminComment: unreadable loom ckpt note '" + std::string(seg) + "'");
		n.dir = std::string(seg.substr(0, at));
		auto rest = seg.substr(at + step_text.size());
		int64_t step = 0;
		size_t i = 0;
		for (; i < rest.size() && rest[i] >= '0' && rest[i] <= '9' && step < (INT64_MAX - 9) / 10; i++)
			step = step * 10 + (rest[i] - '0');
		if (i == 0 || (i < rest.size() && rest[i] != ','))
			return unexpected(source,
					  "AdminComment: unreadable step in loom ckpt note '" + std::string(seg) + "'");
		n.step = step;
		return n;
	}
	return unexpected(source, "no loom ckpt note in its AdminComment (not a --ckpt job, or it has not started)");
}

std::string merge_job_note(std::string_view existing, std::string_view note)
{
	return admin_comment_replace(existing, job_note_prefix, note);
}

} // namespace loom::ckpt
