// Unit tests for spank_ckpt's site configuration and job options: every bad
// value is refused with the option (or key) and the value named.
#include "lib/ckpt/options.hpp"

#include "lib/util/fs.hpp"
#include "lib/util/log.hpp"

#include <csignal>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

// Check defines a fail() macro: include it after the C++ library headers.
#include "tests/unit/check_main.hpp"

using namespace loom;
using namespace loom::ckpt;

namespace {

expected<SiteConfig> site(std::vector<const char *> args)
{
	return SiteConfig::from_args(static_cast<int>(args.size()), const_cast<char *const *>(args.data()),
				     "plugstack.conf:1");
}

SiteConfig default_site()
{
	auto s = site({"dir=/scratch/ckpt/%u/%j", "roots=/scratch/ckpt,/home", "interval_min=5min", "interval_max=6h",
		       "keep_max=10", "max_restarts_limit=20"});
	ck_assert_msg(s.has_value(), "%s", s ? "" : s.error().str().c_str());
	return *s;
}

void expect_refused(const char *name, const char *value, const char *needle)
{
	SiteConfig s = default_site();
	JobOptions o;
	auto st = apply_option(o, s, name, value);
	ck_assert_msg(!st.has_value(), "--%s=%s accepted", name, value ? value : "");
	std::string msg = st.error().str();
	std::string head = std::string("--") + name + ": '" + (value ? value : "") + "'";
	ck_assert_msg(msg.find(head) == 0, "'%s' does not start with %s", msg.c_str(), head.c_str());
	ck_assert_msg(msg.find(needle) != std::string::npos, "'%s' lacks '%s'", msg.c_str(), needle);
}

} // namespace

START_TEST(site_config_defaults_and_errors)
{
	auto s = site({});
	ck_assert(s.has_value());
	ck_assert_int_eq(s->roots.size(), 1);
	ck_assert_sstr_eq(s->roots[0], "/var/tmp/loom-ckpt");
	struct Bad {
		std::vector<const char *> args;
		const char *needle;
	} bad[] = {
		{{"dir=relative/%j"}, "dir=relative/%j"},
		{{"dir=/a/%q"}, "unknown escape"},
		{{"dir=/a/../b/%j"}, "'..'"},
		{{"dir=/srv/%u", "roots=/scratch"}, "outside the allowed"},
		{{"interval_min=2h", "interval_max=1h"}, "interval_min"},
		{{"interval=soon"}, "interval=soon"},
		{{"signal=KILL"}, "signal=KILL"},
		{{"keep=50", "keep_max=10"}, "keep=50"},
		{{"kep=3"}, "kep"},
		{{"suspect_flag=run/%n"}, "suspect_flag"},
	};
	for (const auto &b : bad) {
		auto r = site(b.args);
		ck_assert_msg(!r.has_value(), "accepted %s", b.args[0]);
		ck_assert_msg(r.error().str().find(b.needle) != std::string::npos, "'%s' lacks '%s'",
			      r.error().str().c_str(), b.needle);
		ck_assert_msg(r.error().str().find("plugstack.conf:1") != std::string::npos, "%s",
			      r.error().str().c_str());
	}
}
END_TEST

START_TEST(job_options_good)
{
	SiteConfig s = default_site();
	JobOptions o;
	ck_assert(apply_option(o, s, "ckpt-interval", "30min").has_value());
	ck_assert(apply_option(o, s, "ckpt-signal", "SIGUSR1").has_value());
	ck_assert(apply_option(o, s, "ckpt-keep", "4").has_value());
	ck_assert(apply_option(o, s, "ckpt-dir", "/home/%u/ckpt/%j").has_value());
	ck_assert(o.enabled); // any --ckpt-* option turns it on
	ck_assert(finalize(o, s).has_value());
	ck_assert(!o.interval_auto);
	ck_assert_int_eq(o.interval_s, 1800);
	ck_assert_int_eq(o.signal, SIGUSR1);
	ck_assert_sstr_eq(o.signal_name, "USR1");
	ck_assert_int_eq(o.keep, 4);
	ck_assert_int_eq(o.max_restarts, s.max_restarts);

	JobOptions d;
	ck_assert(apply_option(d, s, "ckpt", nullptr).has_value());
	ck_assert(finalize(d, s).has_value());
	ck_assert(d.enabled && d.interval_auto);
	ck_assert_sstr_eq(d.dir, "/scratch/ckpt/%u/%j");
	ck_assert_sstr_eq(d.signal_name, "USR2"); // not USR1: NCCL catches that one

	JobOptions off;
	ck_assert(apply_option(off, s, "ckpt", "off").has_value());
	ck_assert(apply_option(off, s, "ckpt-keep", "2").has_value());
	ck_assert(!off.enabled);
}
END_TEST

START_TEST(job_options_refused_with_name_and_value)
{
	expect_refused("ckpt", "maybe", "expected signal or off");
	expect_refused("ckpt-dir", "relative/path", "absolute");
	expect_refused("ckpt-dir", "/scratch/ckpt/../../etc", "'..'");
	expect_refused("ckpt-dir", "/etc/cron.d", "outside the allowed checkpoint roots (/scratch/ckpt, /home)");
	expect_refused("ckpt-dir", "/scratchy/x", "outside the allowed");
	expect_refused("ckpt-dir", "/scratch/ckpt/%z", "unknown escape");
	expect_refused("ckpt-interval", "10s", "between 5m and 6h");
	expect_refused("ckpt-interval", "often", "expected a duration");
	expect_refused("ckpt-signal", "KILL", "cannot be caught");
	expect_refused("ckpt-signal", "USR3", "signal name");
	expect_refused("ckpt-keep", "0", "between 1 and 10");
	expect_refused("ckpt-keep", "many", "whole number");
	expect_refused("ckpt-max-restarts", "21", "between 0 and 20");
	expect_refused("ckpt-max-restarts", nullptr, "needs a value");
}
END_TEST

START_TEST(patterns_and_roots)
{
	PatternVars v{"alice", "1001", "77", "n3"};
	ck_assert_sstr_eq(*expand_pattern("/s/%u/%U/%j/%n/100%%", v), "/s/alice/1001/77/n3/100%");
	PatternVars evil{"..", "1", "2", "n"};
	ck_assert(!expand_pattern("/s/%u", evil).has_value());
	PatternVars slash{"a/b", "1", "2", "n"};
	ck_assert(!expand_pattern("/s/%u", slash).has_value());
	ck_assert(root_for("/home/alice", {"/scratch", "/home"}).has_value());
	ck_assert(!root_for("/homework", {"/home"}).has_value());
	ck_assert(!check_clean_path("/a//b").has_value());
	ck_assert(!check_clean_path("/a/./b").has_value());
	ck_assert(check_clean_path("/a/b.c/..d").has_value());
}
END_TEST

// Every key spank_ckpt registers is in spank_ckpt(8)'s CONFIGURATION, and
// every key listed there is registered; a default the page writes as
// key=value, given as that argument, yields the configuration no argument does.
std::string values(const SiteConfig &c)
{
	return strprintf("dir=%s interval=%s min=%lld max=%lld margin=%lld signal=%s keep=%lld/%lld "
			 "restarts=%lld/%lld mtbf=%lld cost=%lld poll=%lld requeue=%d migrate=%d window=%lld",
			 c.dir.c_str(), c.interval.c_str(), (long long)c.bounds.min_s, (long long)c.bounds.max_s,
			 (long long)c.margin_min_s, c.signal.c_str(), (long long)c.keep, (long long)c.keep_max,
			 (long long)c.max_restarts, (long long)c.max_restarts_limit, (long long)c.node_mtbf_s,
			 (long long)c.ckpt_cost_s, (long long)c.poll_s, c.requeue_on_time_limit, c.migrate,
			 (long long)c.migrate_window_s);
}

START_TEST(man_page_lists_every_key_with_its_default)
{
	const char *src = std::getenv("LOOM_SRCDIR");
	ck_assert_msg(src && *src, "LOOM_SRCDIR is not set (make check sets it)");
	auto page = read_file(std::string(src) + "/doc/spank_ckpt.8", 1 << 20);
	ck_assert_msg(page.has_value(), "%s", page ? "" : page.error().str().c_str());
	size_t from = page->find(".SH CONFIGURATION"), to = page->find("\n.SH ", from + 1);
	ck_assert_msg(from != std::string::npos, "spank_ckpt(8) has no CONFIGURATION section");
	std::set<std::string> listed;
	std::vector<std::string> args;
	for (const auto &line : split_lines(page->substr(from, to - from))) {
		if (line.rfind(".B ", 0) != 0)
			continue;
		std::string word = line.substr(3);
		size_t eq = word.find('=');
		listed.insert(word.substr(0, eq));
		if (eq != std::string::npos) {
			std::string arg;
			for (size_t i = 0; i < word.size(); i++) // roff's \- is a '-'
				if (!(word[i] == '\\' && i + 1 < word.size() && word[i + 1] == '-'))
					arg += word[i];
			args.push_back(arg);
		}
	}
	std::set<std::string> keys;
	for (const auto &line : split_lines(SiteConfig().schema().describe()))
		keys.insert(std::string(trim(line)).substr(0, std::string(trim(line)).find(' ')));
	for (const auto &k : keys)
		ck_assert_msg(listed.count(k), "spank_ckpt(8) CONFIGURATION does not list the key %s", k.c_str());
	for (const auto &k : listed)
		ck_assert_msg(keys.count(k), "spank_ckpt(8) CONFIGURATION lists %s, which spank_ckpt does not know",
			      k.c_str());
	std::vector<const char *> argv;
	for (const auto &a : args)
		argv.push_back(a.c_str());
	auto documented = site(argv), none = site({});
	ck_assert_msg(documented.has_value(), "the defaults spank_ckpt(8) gives are refused: %s",
		      documented ? "" : documented.error().str().c_str());
	ck_assert_int_ge(static_cast<long>(args.size()), 15);
	std::string a = values(*documented), b = values(*none);
	ck_assert_msg(a == b, "spank_ckpt(8)'s defaults give %s; no argument gives %s", a.c_str(), b.c_str());
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("ckpt_options");
	TCase *tc = tcase_create("options");
	tcase_add_test(tc, site_config_defaults_and_errors);
	tcase_add_test(tc, job_options_good);
	tcase_add_test(tc, job_options_refused_with_name_and_value);
	tcase_add_test(tc, patterns_and_roots);
	tcase_add_test(tc, man_page_lists_every_key_with_its_default);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
