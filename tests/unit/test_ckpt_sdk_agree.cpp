// The C++ SDK's should_checkpoint() (sdk/cpp/loom/ckpt.hpp, protocol 7.5):
// a request file newer than the Checkpointer is a wish, read at most once a
// second, served by a save; with several ranks, allreduce_max is called
// twice on each agreeing call; without it, the step rank 0 stamped is the
// answer, and no step is no answer. Config::from_env() reads
// LOOM_CKPT_STAMP_LEAD and LOOM_CKPT_AGREE_SECONDS.
#include "lib/ckpt/agree.hpp"
#include "lib/ckpt/commit.hpp" // remove_tree
#include "lib/ckpt/request.hpp"
#include "sdk/cpp/loom/ckpt.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

// Check defines a fail() macro: include it after the C++ library headers.
#include "tests/unit/check_main.hpp"

using namespace loom;

namespace {

// A new directory, removed when the test's process exits.
std::string temp_dir()
{
	static std::vector<std::string> made;
	char tmpl[] = "/tmp/loom-test-sdk-agree-XXXXXX";
	char *d = ::mkdtemp(tmpl);
	ck_assert_ptr_nonnull(d);
	if (made.empty())
		std::atexit([] {
			for (const auto &m : made)
				(void)loom::ckpt::remove_tree(m);
		});
	made.push_back(d);
	return d;
}

sdk::Config config(const std::string &dir, int64_t world, int64_t rank)
{
	sdk::Config c;
	c.dir = dir;
	c.world_size = world;
	c.rank = rank;
	c.run = "j9_r0_s0";
	c.commit_timeout_s = 5;
	return c;
}

double seconds_since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

START_TEST(a_new_request_is_a_wish_until_a_save)
{
	std::string dir = temp_dir();
	ck_assert_int_eq(*ckpt::write_request(dir, "interval", 1700000000), 1);
	sdk::Checkpointer ck(config(dir, 1, 0), false);
	auto t0 = std::chrono::steady_clock::now();
	ck_assert(!ck.should_checkpoint()); // seq 1 is older than the checkpointer
	ck_assert_int_eq(*ckpt::write_request(dir, "time_limit", 1700000001), 2);
	while (!ck.should_checkpoint()) {
		ck_assert_msg(seconds_since(t0) < 10, "the request of seq 2 was not seen in 10 s");
		std::this_thread::sleep_for(std::chrono::milliseconds(20)); // the next step
	}
	ck_assert_msg(seconds_since(t0) >= 0.99, "the request file was read again after %g s", seconds_since(t0));
	std::string data = "x", err;
	ck_assert_msg(ck.save(1, {{"x.bin", data.data(), data.size()}}, &err), "%s", err.c_str());
	ck_assert(!ck.should_checkpoint()); // served
}
END_TEST

START_TEST(allreduce_max_is_called_twice_on_agreeing_calls)
{
	std::string dir = temp_dir();
	std::vector<int64_t> got;
	int64_t peer_us = 0; // rank 0's step time; it always wishes
	auto c = config(dir, 2, 1);
	c.agree_period_s = 3600;
	c.allreduce_max = [&](int64_t v) { return (got.push_back(v), got.size() % 2) ? 1 : std::max(v, peer_us); };
	sdk::Checkpointer ck(c, false);
	ck_assert(ck.should_checkpoint());              // rank 0's wish, no step needed
	ck_assert(got == (std::vector<int64_t>{0, 0})); // this rank's wish, no step time yet
	peer_us = 1000;
	ck_assert(ck.should_checkpoint(7)); // no step time anywhere: the next call agrees too
	ck_assert_int_eq(static_cast<long>(got.size()), 4);
	ck_assert_int_eq(got[2], 0);
	ck_assert_int_gt(got[3], 0);
	// Steps of 1 ms at the slowest: the next agreement is 3600 s of them away.
	for (int i = 0; i < 100; i++)
		ck_assert(!ck.should_checkpoint());
	ck_assert_int_eq(static_cast<long>(got.size()), 4);
}
END_TEST

START_TEST(without_allreduce_the_stamped_step_is_the_answer)
{
	std::string dir = temp_dir();
	sdk::Checkpointer ck(config(dir, 2, 1), false);
	ck_assert(!ck.should_checkpoint()); // no step: no answer (said once on stderr)
	ck_assert(ckpt::write_stamp(ckpt::stamp_path(dir, "j9_r0_s0"), {5, 1}).has_value());
	ck_assert(!ck.should_checkpoint());
	ck_assert(!ck.should_checkpoint(4));
	ck_assert(ck.should_checkpoint(5));
	ck_assert(!ck.should_checkpoint(6));
	// Another launch (another run id) without its own stamp never saves.
	auto c = config(dir, 2, 1);
	c.run = "j9_r1_s0";
	sdk::Checkpointer other(c, false);
	for (int64_t s = 4; s <= 7; s++)
		ck_assert(!other.should_checkpoint(s));
}
END_TEST

START_TEST(from_env_reads_the_agreement_seconds)
{
	::setenv("LOOM_CKPT_STAMP_LEAD", "0.5", 1);
	::setenv("LOOM_CKPT_AGREE_SECONDS", "3", 1);
	auto c = sdk::Config::from_env();
	ck_assert(c.stamp_lead_s == 0.5);
	ck_assert(c.agree_period_s == 3);
	ck_assert_sstr_eq(c.error, "");
	::setenv("LOOM_CKPT_STAMP_LEAD", "soon", 1);
	c = sdk::Config::from_env();
	ck_assert_sstr_eq(c.error, "LOOM_CKPT_STAMP_LEAD='soon': expected seconds (0 to 1e7)");
	::unsetenv("LOOM_CKPT_STAMP_LEAD");
	::unsetenv("LOOM_CKPT_AGREE_SECONDS");
	c = sdk::Config::from_env();
	ck_assert(c.stamp_lead_s == 2.0 && c.agree_period_s == 1.0);
}
END_TEST

// A rank past rank 0's stamped step skips that save; the next stamped save
// still commits: both ranks name it by the stamp (protocol 7.4 step 1).
START_TEST(a_skipped_stamp_does_not_poison_later_saves)
{
	std::string dir = temp_dir();
	auto c0 = config(dir, 2, 0), c1 = config(dir, 2, 1);
	c0.stamp_lead_s = c1.stamp_lead_s = 0;
	c0.commit_timeout_s = c1.commit_timeout_s = 0.3;
	sdk::Checkpointer r0(c0, false), r1(c1, false);
	std::string zero = "zero", one = "one", err;
	std::vector<sdk::Buffer> b0{{"w.bin", zero.data(), zero.size()}}, b1{{"w.bin", one.data(), one.size()}};
	r0.request();
	ck_assert(!r0.should_checkpoint(10)); // stamps 12
	ck_assert(!r1.should_checkpoint(15)); // already past 12 (said on stderr)
	ck_assert(r0.should_checkpoint(12));
	ck_assert(!r0.save(12, b0, &err)); // rank 1's part never comes
	r0.request();
	ck_assert(!r0.should_checkpoint(20)); // stamps 22
	ck_assert(!r1.should_checkpoint(21));
	ck_assert(r1.should_checkpoint(22));
	ck_assert_msg(r1.save(22, b1, &err), "%s", err.c_str());
	ck_assert(r0.should_checkpoint(22));
	ck_assert_msg(r0.save(22, b0, &err), "rank 0's save of the stamped step 22: %s", err.c_str());
	struct stat st;
	ck_assert_msg(::stat((dir + "/step-000000000022").c_str(), &st) == 0, "step 22 not committed");
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("ckpt_sdk_agree");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, a_new_request_is_a_wish_until_a_save);
	tcase_add_test(tc, allreduce_max_is_called_twice_on_agreeing_calls);
	tcase_add_test(tc, without_allreduce_the_stamped_step_is_the_answer);
	tcase_add_test(tc, a_skipped_stamp_does_not_poison_later_saves);
	tcase_add_test(tc, from_env_reads_the_agreement_seconds);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
