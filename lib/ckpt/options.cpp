#include "lib/ckpt/options.hpp"

#include "lib/exchange/ckpt_task_env.hpp"

#include "lib/util/log.hpp"

#include <csignal>
#include <cstring>

namespace loom::ckpt {
namespace {

Error option_error(std::string_view name, const char *value, const std::string &why)
{
	return Error("--" + std::string(name) + ": '" + (value ? value : "") + "'", why);
}

// Fixed leading part of a pattern: the components before the first '%'.
std::string fixed_prefix(const std::string &pattern)
{
	size_t pct = pattern.find('%');
	if (pct == std::string::npos)
		return pattern;
	size_t slash = pattern.rfind('/', pct);
	return slash == 0 || slash == std::string::npos ? "/" : pattern.substr(0, slash);
}

} // namespace

expected<std::string> expand_pattern(std::string_view pattern, const PatternVars &v)
{
	std::string out;
	for (size_t i = 0; i < pattern.size(); i++) {
		if (pattern[i] != '%') {
			out += pattern[i];
			continue;
		}
		char c = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
		const std::string *val = nullptr;
		switch (c) {
		case 'u':
			val = &v.user;
			break;
		case 'U':
			val = &v.uid;
			break;
		case 'j':
			val = &v.job_id;
			break;
		case 'n':
			val = &v.node;
			break;
		case '%':
			out += '%';
			i++;
			continue;
		default:
			return unexpected(std::string(pattern), "unknown escape '%" + std::string(c ? 1 : 0, c) +
									"' (known: %u %U %j %n %%)");
		}
		if (val->empty() || val->find('/') != std::string::npos || *val == "." || *val == "..")
			return unexpected(std::string(pattern), std::string("no usable value for %") + c);
		out += *val;
		i++;
	}
	return out;
}

status check_clean_path(std::string_view path)
{
	if (path.empty() || path.front() != '/')
		return unexpected("must be an absolute path");
	if (path.size() > 1024)
		return unexpected("longer than 1024 characters");
	for (unsigned char c : path)
		if (c < 0x20 || c == 0x7f)
			return unexpected("contains a control character");
	if (path == "/")
		return ok();
	size_t start = 1;
	while (start <= path.size()) {
		size_t slash = path.find('/', start);
		if (slash == std::string_view::npos)
			slash = path.size();
		std::string_view comp = path.substr(start, slash - start);
		if (comp == "..")
			return unexpected("'..' is not allowed in the path");
		if (comp.empty() || comp == ".")
			return unexpected("empty or '.' path component (write the path plainly)");
		start = slash + 1;
	}
	return ok();
}

expected<std::string> root_for(std::string_view path, const std::vector<std::string> &roots)
{
	for (const auto &r : roots) {
		if (r == "/" || path == r)
			return r;
		if (path.size() > r.size() && path.substr(0, r.size()) == r && path[r.size()] == '/')
			return r;
	}
	std::string list;
	for (const auto &r : roots)
		list += (list.empty() ? "" : ", ") + r;
	return unexpected("is outside the allowed checkpoint roots (" + list + ")");
}

ConfigSchema SiteConfig::schema()
{
	ConfigSchema s;
	s.string("dir", &dir, "default checkpoint directory pattern (%u user, %U uid, %j job id)")
		.list("roots", &roots, "directories users may put checkpoints under (default: dir's fixed prefix)")
		.string("interval", &interval, "default interval: auto or a duration")
		.duration("interval_min", &bounds.min_s, 1, 30 * 86400, "shortest interval allowed")
		.duration("interval_max", &bounds.max_s, 1, 365 * 86400, "longest interval allowed")
		.duration("margin_min", &margin_min_s, 0, 86400, "least time before the time limit to checkpoint")
		.string("signal", &signal, "default checkpoint signal")
		.integer("keep", &keep, 1, 1000, "checkpoints kept by default")
		.integer("keep_max", &keep_max, 1, 1000, "most checkpoints a job may keep")
		.integer("max_restarts", &max_restarts, 0, 100000, "default restart budget")
		.integer("max_restarts_limit", &max_restarts_limit, 0, 100000, "largest restart budget allowed")
		.duration("node_mtbf", &node_mtbf_s, 60, 100LL * 365 * 86400, "per-node MTBF for auto intervals")
		.string("failure_stats", &failure_stats, "failure statistics JSON (jobcomp/health)")
		.duration("ckpt_cost", &ckpt_cost_s, 1, 86400, "assumed checkpoint time before one is measured")
		.string("suspect_flag", &suspect_flag,
			"per-node flag file pattern (%n node) that asks for a checkpoint")
		.duration("poll", &poll_s, 1, 600, "coordinator poll period")
		.boolean("requeue_on_time_limit", &requeue_on_time_limit,
			 "requeue a job that checkpointed before its time limit")
		.boolean("migrate", &migrate,
			 "move a job off a suspect node once the checkpoint it asked for is committed")
		.duration("migrate_window", &migrate_window_s, 0, 30 * 86400,
			  "at most one move off a suspect node per job in this time")
		.string("helper", &helper, "the program that works in checkpoint directories as the job's user")
		.integer("standby_max", &standby_max, 0, 64, "most standby nodes a job may hold (0: none)")
		.string("standby_dir", &standby_dir, "where a standby job's srun and its coordinator meet (batch host)")
		.string("scontrol", &scontrol, "scontrol command the coordinator uses to replace a node")
		.string("loom", &loom, "the loom program (loom health classify judges a failed step)")
		.integer("hang_factor", &hang_factor, 2, 1000, "a hang: no step for this many recent step times")
		.duration("hang_floor", &hang_floor_s, 5, 86400, "... and never sooner than this");
	return s;
}

expected<SiteConfig> SiteConfig::from_args(int argc, char *const argv[], const std::string &where)
{
	SiteConfig c;
	if (auto st = c.schema().parse_args(argc, argv, where); !st)
		return unexpected(st.error());
	auto bad = [&](const std::string &key, const std::string &value, const std::string &why) {
		return unexpected(where + ": " + key + "=" + value, why);
	};
	PatternVars probe{"user", "1000", "1", "node"};
	auto expanded = expand_pattern(c.dir, probe);
	if (!expanded)
		return bad("dir", c.dir, expanded.error().message);
	if (auto st = check_clean_path(*expanded); !st)
		return bad("dir", c.dir, st.error().message);
	if (c.roots.empty())
		c.roots.push_back(fixed_prefix(c.dir));
	for (const auto &r : c.roots)
		if (auto st = check_clean_path(r); !st)
			return bad("roots", r, st.error().message);
	if (auto st = root_for(*expanded, c.roots); !st)
		return bad("dir", c.dir, st.error().message);
	if (c.bounds.min_s > c.bounds.max_s)
		return bad("interval_min", format_duration(c.bounds.min_s), "is above interval_max");
	if (c.interval != "auto") {
		auto d = parse_duration(c.interval);
		if (!d)
			return bad("interval", c.interval, d.error().message);
		if (*d < c.bounds.min_s || *d > c.bounds.max_s)
			return bad("interval", c.interval, "is outside interval_min..interval_max");
	}
	if (auto s = exchange::parse_signal(c.signal); !s)
		return bad("signal", c.signal, s.error().message);
	if (c.keep > c.keep_max)
		return bad("keep", std::to_string(c.keep), "is above keep_max");
	if (c.max_restarts > c.max_restarts_limit)
		return bad("max_restarts", std::to_string(c.max_restarts), "is above max_restarts_limit");
	if (!c.failure_stats.empty())
		if (auto st = check_clean_path(c.failure_stats); !st)
			return bad("failure_stats", c.failure_stats, st.error().message);
	if (!c.helper.empty())
		if (auto st = check_clean_path(c.helper); !st)
			return bad("helper", c.helper, st.error().message);
	if (auto st = check_clean_path(c.standby_dir); !st)
		return bad("standby_dir", c.standby_dir, st.error().message);
	if (!c.loom.empty())
		if (auto st = check_clean_path(c.loom); !st)
			return bad("loom", c.loom, st.error().message);
	if (!c.suspect_flag.empty()) {
		auto f = expand_pattern(c.suspect_flag, probe);
		if (!f)
			return bad("suspect_flag", c.suspect_flag, f.error().message);
		if (auto st = check_clean_path(*f); !st)
			return bad("suspect_flag", c.suspect_flag, st.error().message);
	}
	return c;
}

status apply_option(JobOptions &o, const SiteConfig &site, std::string_view name, const char *value)
{
	std::string_view v = value ? value : "";
	if (name == "ckpt") {
		if (!value || v == "signal" || v == "on" || v.empty()) {
			o.enabled = true;
			o.off = false;
		} else if (v == "off") {
			o.enabled = false;
			o.off = true;
		} else {
			return unexpected(option_error(name, value, "expected signal or off"));
		}
		return ok();
	}
	if (!value)
		return unexpected(option_error(name, value, "needs a value"));
	if (name == "ckpt-dir") {
		PatternVars probe{"user", "1000", "1", "node"};
		auto e = expand_pattern(v, probe);
		if (!e)
			return unexpected(option_error(name, value, e.error().message));
		if (auto st = check_clean_path(*e); !st)
			return unexpected(option_error(name, value, st.error().message));
		if (auto r = root_for(*e, site.roots); !r)
			return unexpected(option_error(name, value, r.error().message));
		o.dir = std::string(v);
	} else if (name == "ckpt-interval") {
		o.interval_given = true;
		if (v == "auto") {
			o.interval_auto = true;
		} else {
			auto d = parse_duration(v);
			if (!d)
				return unexpected(option_error(name, value, d.error().message + " or auto"));
			if (*d < site.bounds.min_s || *d > site.bounds.max_s)
				return unexpected(option_error(name, value,
							       "must be between " + format_duration(site.bounds.min_s) +
								       " and " + format_duration(site.bounds.max_s) +
								       " on this cluster"));
			o.interval_auto = false;
			o.interval_s = *d;
		}
	} else if (name == "ckpt-signal") {
		auto s = exchange::parse_signal(v);
		if (!s)
			return unexpected(option_error(name, value, s.error().message));
		o.signal = *s;
		o.signal_name = exchange::signal_name(*s);
	} else if (name == "ckpt-keep") {
		auto k = parse_int(v, 1, site.keep_max);
		if (!k)
			return unexpected(option_error(name, value, k.error().message));
		o.keep = *k;
	} else if (name == "ckpt-max-restarts") {
		auto k = parse_int(v, 0, site.max_restarts_limit);
		if (!k)
			return unexpected(option_error(name, value, k.error().message));
		o.max_restarts = *k;
	} else if (name == "ckpt-standby") {
		if (v != "auto")
			if (auto k = parse_int(v, 0, site.standby_max); !k)
				return unexpected(option_error(name, value, k.error().message + " or auto"));
		o.standby = std::string(v);
	} else {
		return unexpected(option_error(name, value, "unknown option"));
	}
	if (!o.off)
		o.enabled = true;
	return ok();
}

exchange::CkptRequest job_request(const JobOptions &o) { return {o.enabled && !o.off, o.max_restarts}; }

status finalize(JobOptions &o, const SiteConfig &site)
{
	if (o.dir.empty())
		o.dir = site.dir;
	if (o.signal == 0) {
		auto s = exchange::parse_signal(site.signal);
		if (!s)
			return unexpected(s.error());
		o.signal = *s;
		o.signal_name = exchange::signal_name(*s);
	}
	if (o.keep == 0)
		o.keep = site.keep;
	if (o.max_restarts < 0)
		o.max_restarts = site.max_restarts;
	if (!o.interval_given && site.interval != "auto") {
		auto d = parse_duration(site.interval);
		if (!d)
			return unexpected(d.error());
		o.interval_auto = false;
		o.interval_s = *d;
	}
	return ok();
}

} // namespace loom::ckpt
