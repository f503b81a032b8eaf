#include "lib/ckpt/restart.hpp"

#include "lib/ckpt/layout.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"
#include "lib/util/log.hpp"

#include <algorithm>
#include <cerrno>
#include <json-c/json.h>
#include <sys/stat.h>

namespace loom::ckpt {

expected<std::vector<StartRecord>> parse_starts(std::string_view text, const std::string &source)
{
	auto doc = json_parse(text, source, 8);
	if (!doc)
		return unexpected(doc.error());
	auto fail = [&](const Error &e) { return unexpected(e.within(source)); };
	ObjectReader r(doc->get(), "$");
	auto format = r.str("format");
	if (!format)
		return fail(format.error());
	if (*format != "loom-starts/1")
		return fail(Error(r.field_path("format"), "unsupported format '" + *format + "'"));
	auto arr = r.array("starts");
	if (!arr)
		return fail(arr.error());
	std::vector<StartRecord> out;
	size_t n = json_object_array_length(*arr);
	if (n > 100000)
		return fail(Error(r.field_path("starts"), "too many records"));
	for (size_t i = 0; i < n; i++) {
		ObjectReader e(json_object_array_get_idx(*arr, i), ObjectReader::index_path(r.field_path("starts"), i));
		StartRecord s;
		auto rc = e.integer("restart_count", 0, 1000000);
		auto step = e.integer("newest_step", -1, max_step);
		auto t = e.number("time");
		auto job = e.str_or("job_id", "");
		auto held = e.boolean_or("held", false);
		for (const Error *err :
		     {rc ? nullptr : &rc.error(), step ? nullptr : &step.error(), t ? nullptr : &t.error(),
		      job ? nullptr : &job.error(), held ? nullptr : &held.error()})
			if (err)
				return fail(*err);
		if (auto st = e.finish(); !st)
			return fail(st.error());
		s.restart_count = *rc;
		s.newest_step = *step;
		s.time = *t;
		s.job_id = *job;
		s.held = *held;
		out.push_back(s);
	}
	if (auto st = r.finish(); !st)
		return fail(st.error());
	return out;
}

std::string starts_to_json(const std::vector<StartRecord> &starts)
{
	Json arr = Json::array();
	for (const auto &s : starts) {
		Json o = Json::object();
		o.set("restart_count", Json::integer(s.restart_count));
		o.set("newest_step", Json::integer(s.newest_step));
		o.set("time", Json::number(s.time));
		if (!s.job_id.empty())
			o.set("job_id", Json::string(s.job_id));
		if (s.held)
			o.set("held", Json::boolean(true));
		arr.push(std::move(o));
	}
	Json doc = Json::object();
	doc.set("format", Json::string("loom-starts/1"));
	doc.set("starts", std::move(arr));
	return doc.dump(true);
}

expected<std::vector<StartRecord>> record_start(const std::string &dir, const StartRecord &r)
{
	std::string path = path_join(dir, starts_name);
	std::vector<StartRecord> starts;
	struct stat st;
	if (::lstat(path.c_str(), &st) == 0) {
		if (!S_ISREG(st.st_mode))
			return unexpected(path, "is not a regular file");
		auto text = read_file(path, 16u << 20);
		if (!text)
			return unexpected(text.error());
		auto parsed = parse_starts(*text, path);
		if (!parsed)
			return unexpected(parsed.error());
		starts = std::move(*parsed);
	} else if (errno != ENOENT) {
		return unexpected(path, "cannot stat");
	}
	// A job id differs after the directory was reused by another job: start over.
	if (!starts.empty() && !r.job_id.empty() && !starts.back().job_id.empty() && starts.back().job_id != r.job_id)
		starts.clear();
	std::erase_if(starts, [&](const StartRecord &s) { return s.restart_count >= r.restart_count; });
	starts.push_back(r);
	if (auto w = write_file_atomic(path, starts_to_json(starts), 0600); !w)
		return unexpected(w.error());
	return starts;
}

StartDecision decide_start(int64_t restart_count, int64_t max_restarts, int64_t newest_step_now,
			   const std::vector<StartRecord> &starts, bool foreign_files)
{
	// The start before this one; the same restart count too, for a job
	// released without Slurm counting a restart.
	const StartRecord *last = nullptr;
	for (const auto &s : starts)
		if (s.restart_count <= restart_count && (!last || s.restart_count > last->restart_count))
			last = &s;
	if (last && last->held) // released after a hold: a person decided it runs
		return {};
	if (restart_count > max_restarts)
		return {StartVerdict::hold_budget,
			strprintf("loom: restart budget used up (%lld restarts, --ckpt-max-restarts=%lld)",
				  static_cast<long long>(restart_count), static_cast<long long>(max_restarts))};
	// The first failure is always retried; "again" needs a restart before it.
	if (restart_count < 2)
		return {};
	const StartRecord *prev = nullptr;
	for (const auto &s : starts)
		if (s.restart_count < restart_count && (!prev || s.restart_count > prev->restart_count))
			prev = &s;
	if (!prev || prev->restart_count < 1 || newest_step_now > prev->newest_step)
		return {};
	bool loom_saw_one = newest_step_now >= 0 || std::any_of(starts.begin(), starts.end(), [](const StartRecord &s) {
				    return s.newest_step >= 0;
			    });
	if (foreign_files && !loom_saw_one)
		return {}; // progress loom cannot see: not a judgement it can make
	std::string step = prev->newest_step < 0 ? std::string("none") : std::to_string(prev->newest_step);
	return {StartVerdict::hold_no_progress,
		strprintf("loom: failed again without a new checkpoint since restart %lld (newest step %s)",
			  static_cast<long long>(prev->restart_count), step.c_str())};
}

} // namespace loom::ckpt
