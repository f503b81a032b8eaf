// loom's note in a job's SystemComment (job_note.hpp).
#include "lib/exchange/job_note.hpp"

#include "lib/util/config.hpp"
#include "lib/util/log.hpp"

#include <sstream>

namespace loom::exchange {

namespace {

constexpr std::string_view tag = "loom:";

// The note's segment of the comment: [begin, end) with end at the ';' or the end.
bool segment(std::string_view c, size_t &begin, size_t &end)
{
	for (size_t at = c.find(tag); at != std::string_view::npos; at = c.find(tag, at + 1)) {
		if (at != 0 && c[at - 1] != ' ' && c[at - 1] != ';')
			continue; // "xloom:" is not ours
		begin = at;
		end = c.find(';', at);
		if (end == std::string_view::npos)
			end = c.size();
		return true;
	}
	return false;
}

std::string_view trim_ends(std::string_view s)
{
	while (!s.empty() && (s.front() == ' ' || s.front() == ';'))
		s.remove_prefix(1);
	while (!s.empty() && (s.back() == ' ' || s.back() == ';'))
		s.remove_suffix(1);
	return s;
}

} // namespace

std::string format_job_note(const JobNote &n)
{
	std::string s(tag);
	if (!n.gpu_class.empty())
		s += " class=" + n.gpu_class;
	if (!n.tier.empty())
		s += " tier=" + n.tier;
	if (n.price_per_h >= 0)
		s += strprintf(" price_per_h=%.2f", n.price_per_h);
	return s;
}

std::string put_job_note(std::string_view comment, const JobNote &n)
{
	std::string rest(comment);
	size_t b = 0, e = 0;
	if (segment(comment, b, e))
		rest = std::string(trim_ends(comment.substr(0, b))) + (b > 0 && e < comment.size() ? "; " : "") +
		       std::string(trim_ends(comment.substr(std::min(e + 1, comment.size()))));
	std::string_view r = trim_ends(rest);
	return r.empty() ? format_job_note(n) : std::string(r) + "; " + format_job_note(n);
}

std::optional<JobNote> find_job_note(std::string_view comment)
{
	size_t b = 0, e = 0;
	if (!segment(comment, b, e))
		return std::nullopt;
	JobNote n;
	std::istringstream in(std::string(comment.substr(b + tag.size(), e - b - tag.size())));
	std::string w;
	while (in >> w) {
		size_t eq = w.find('=');
		if (eq == std::string::npos)
			return std::nullopt;
		std::string k = w.substr(0, eq), v = w.substr(eq + 1);
		if (k == "class") {
			n.gpu_class = v;
		} else if (k == "tier") {
			n.tier = v;
		} else if (k == "price_per_h") {
			auto p = parse_real(v, 0, 1e12);
			if (!p)
				return std::nullopt;
			n.price_per_h = *p;
		} else {
			return std::nullopt;
		}
	}
	return n;
}

} // namespace loom::exchange
