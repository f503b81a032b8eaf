// The C++ SDK's progress reports (sdk/cpp/progress.hpp): what
// should_checkpoint() writes for spank_ckpt's keeper reads back as
// lib/exchange/progress_report.hpp's format, and nothing is written
// without LOOM_CKPT_PROGRESS=1.
#include "lib/exchange/progress_report.hpp"
#include "lib/util/fs.hpp"
#include "sdk/cpp/loom/ckpt.hpp"

#include <cstdlib>
#include <ftw.h>
#include <unistd.h>

#include "tests/unit/check_main.hpp"

using namespace loom;

namespace {

std::string temp_dir()
{
	char tmpl[] = "/tmp/loom-sdk-progress.XXXXXX";
	ck_assert_ptr_nonnull(::mkdtemp(tmpl));
	return tmpl;
}

int remove_one(const char *p, const struct stat *, int, struct FTW *) { return ::remove(p); }

} // namespace

START_TEST(steps_reach_the_report)
{
	std::string dir = temp_dir();
	::setenv("LOOM_CKPT_PROGRESS", "1", 1);
	::setenv("SLURMD_NODENAME", "n7", 1);
	sdk::Config c;
	c.dir = dir;
	std::string path = dir + "/.loom-progress/rank.0";
	{
		sdk::Checkpointer ck(c, false);
		auto first = read_file(path, 4096);
		ck_assert_msg(first.has_value(), "no report at start: %s", first ? "" : first.error().str().c_str());
		ck_assert_int_eq(exchange::parse_progress(*first, path)->step, -1);
		(void)ck.should_checkpoint(int64_t{1});
		::usleep(1100 * 1000);
		(void)ck.should_checkpoint(int64_t{2});
	}
	auto r = exchange::parse_progress(read_file(path, 4096).value(), path);
	ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
	ck_assert_int_eq(r->rank, 0);
	ck_assert_sstr_eq(r->node, "n7");
	ck_assert_int_eq(r->step, 2);
	ck_assert_msg(r->step_s >= 1.0 && r->step_s < 5, "step_s %f", r->step_s);
	ck_assert(r->beat >= r->time);
	::nftw(dir.c_str(), remove_one, 8, FTW_DEPTH | FTW_PHYS);
}
END_TEST

START_TEST(no_report_unless_asked)
{
	std::string dir = temp_dir();
	::unsetenv("LOOM_CKPT_PROGRESS");
	sdk::Config c;
	c.dir = dir;
	{
		sdk::Checkpointer ck(c, false);
		(void)ck.should_checkpoint(int64_t{1});
	}
	ck_assert_int_ne(::access((dir + "/.loom-progress").c_str(), F_OK), 0);
	::nftw(dir.c_str(), remove_one, 8, FTW_DEPTH | FTW_PHYS);
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("ckpt_sdk_progress");
	TCase *tc = tcase_create("progress");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, steps_reach_the_report);
	tcase_add_test(tc, no_report_unless_asked);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
