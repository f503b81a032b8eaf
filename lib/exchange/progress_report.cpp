#include "lib/exchange/progress_report.hpp"

#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace loom::exchange {

std::string progress_file_name(int rank) { return "rank." + std::to_string(rank); }

std::string format_progress(const ProgressReport &r)
{
	char buf[512];
	std::snprintf(buf, sizeof buf,
		      "loom-progress 1 rank=%d world=%d node=%s step=%lld time=%.3f step_s=%.3f beat=%.3f\n", r.rank,
		      r.world, r.node.c_str(), static_cast<long long>(r.step), r.time, r.step_s, r.beat);
	return buf;
}

namespace {

expected<double> number(const std::string &v, const std::string &where, const char *key)
{
	char *end = nullptr;
	double d = std::strtod(v.c_str(), &end);
	if (v.empty() || !end || *end || !std::isfinite(d) || d < 0)
		return unexpected(where, std::string(key) + "='" + shown(v) + "': not a non-negative number");
	return d;
}

} // namespace

expected<ProgressReport> parse_progress(std::string_view text, const std::string &where)
{
	if (text.size() > 4096)
		return unexpected(where, "longer than a progress report");
	std::string line(trim(text));
	if (line.find('\n') != std::string::npos)
		return unexpected(where, "more than one line");
	std::vector<std::string> words;
	for (size_t i = 0; i < line.size();) {
		size_t sp = std::min(line.find(' ', i), line.size());
		if (sp > i)
			words.push_back(line.substr(i, sp - i));
		i = sp + 1;
	}
	if (words.size() < 2 || words[0] != "loom-progress" || words[1] != "1")
		return unexpected(where, "not a loom-progress 1 report");
	std::map<std::string, std::string> kv;
	for (size_t i = 2; i < words.size(); i++) {
		auto eq = words[i].find('=');
		if (eq == std::string::npos || eq == 0)
			return unexpected(where, "'" + shown(words[i]) + "': not key=value");
		if (!kv.emplace(words[i].substr(0, eq), words[i].substr(eq + 1)).second)
			return unexpected(where, words[i].substr(0, eq) + " given twice");
	}
	for (const char *k : {"rank", "world", "node", "step", "time", "step_s", "beat"})
		if (!kv.count(k))
			return unexpected(where, std::string("no ") + k + "=");
	if (kv.size() != 7)
		return unexpected(where, "unknown fields");
	ProgressReport r;
	auto rank = parse_int(kv["rank"], 0, 1 << 24);
	auto world = parse_int(kv["world"], 1, 1 << 24);
	if (!world)
		return unexpected(where, "world='" + shown(kv["world"]) + "': " + world.error().message);
	auto step = parse_int(kv["step"], -1, INT64_MAX);
	if (!rank)
		return unexpected(where, "rank='" + shown(kv["rank"]) + "': " + rank.error().message);
	if (!step)
		return unexpected(where, "step='" + shown(kv["step"]) + "': " + step.error().message);
	auto t = number(kv["time"], where, "time"), s = number(kv["step_s"], where, "step_s");
	auto b = number(kv["beat"], where, "beat");
	for (auto *e : {&t, &s, &b})
		if (!*e)
			return unexpected(e->error());
	if (rank && *rank >= *world)
		return unexpected(where, "rank=" + kv["rank"] + " is not a rank of world=" + kv["world"]);
	if (kv["node"].empty())
		return unexpected(where, "node= is empty");
	r.rank = static_cast<int>(*rank), r.world = static_cast<int>(*world), r.node = kv["node"], r.step = *step;
	r.time = *t, r.step_s = *s, r.beat = *b;
	return r;
}

} // namespace loom::exchange
