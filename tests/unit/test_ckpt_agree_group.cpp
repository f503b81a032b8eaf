// Unit tests for the agreement's timing and requests (lib/ckpt/agree.hpp,
// lib/ckpt/request.hpp): the step time is an average of the intervals; the
// all-reduce hook runs on calls counted alike, twice each time; the request
// file is read at most once per period, a bad one told once.
#include "lib/ckpt/agree.hpp"
#include "lib/ckpt/request.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

// Check defines a fail() macro: include it after the C++ library headers.
#include "tests/unit/ckpt_agree_fixture.hpp"

using namespace loom;
using namespace loom::ckpt;
using namespace loom::ckpt::testing;

START_TEST(step_time_is_an_average_of_the_intervals)
{
	Fake f;
	StepTimer t(f.clock());
	ck_assert(t.tick() == 0); // no interval yet
	*f.now += 1;
	ck_assert(t.tick() == 1); // the first as it is
	*f.now += 2;
	ck_assert_msg(std::abs(t.tick() - 1.2) < 1e-9, "%g", t.seconds()); // 0.8 * 1 + 0.2 * 2
	*f.now += 0.2;
	ck_assert_msg(std::abs(t.tick() - 1.0) < 1e-9, "%g", t.seconds());
}
END_TEST

START_TEST(group_calls_the_hook_on_calls_counted_alike)
{
	Fake f;
	std::vector<int64_t> got;
	int64_t peer_wish = 0, peer_us = 0; // another rank's values
	bool wish_next = true;
	GroupAgreement g(
		[&](int64_t v) {
			got.push_back(v);
			bool is_wish = wish_next;
			wish_next = !wish_next;
			return std::max(v, is_wish ? peer_wish : peer_us);
		},
		1.0, f.clock());
	// Call 1 agrees (no step time yet): the next is call 2.
	ck_assert(!g.decide(false));
	ck_assert(got == (std::vector<int64_t>{0, 0}));
	ck_assert_int_eq(g.next_call(), 2);
	// Call 2: this rank's steps take 0.125 s, the slowest 0.25 s: every 4 calls.
	peer_us = 250000;
	*f.now += 0.125;
	ck_assert(g.decide(true));
	ck_assert(got == (std::vector<int64_t>{0, 0, 1, 125000}));
	ck_assert_int_eq(g.next_call(), 6);
	for (int i = 3; i < 6; i++) {
		*f.now += 0.125;
		ck_assert(!g.decide(true));
	}
	ck_assert_int_eq(static_cast<long>(got.size()), 4);
	// Call 6: another rank's wish is the answer.
	peer_wish = 1;
	*f.now += 0.125;
	ck_assert(g.decide(false));
	ck_assert_int_eq(static_cast<long>(got.size()), 6);
	ck_assert_int_eq(got[4], 0);
	ck_assert_int_ge(got[5], 125000); // the average of 0.125 s steps, in whole microseconds
	ck_assert_int_le(got[5], 125001);
	ck_assert_int_eq(g.next_call(), 10);
}
END_TEST

START_TEST(requests_are_read_at_most_once_per_period)
{
	Fake f;
	std::string dir = temp_dir();
	ck_assert_int_eq(*write_request(dir, "interval", 1700000000), 1);
	RequestWatch w(dir, 1.0, f.clock(), f.say()); // seq 1 is older than this program
	ck_assert(!w.pending());
	ck_assert_int_eq(*write_request(dir, "time_limit", 1700000001), 2);
	*f.now += 0.5;
	ck_assert(!w.pending()); // not read yet
	*f.now += 0.5;
	ck_assert(w.pending());
	ck_assert(w.pending());
	// A request once read stays until a save serves it, file or not.
	ck_assert_int_eq(::rename((dir + "/.loom-request").c_str(), (dir + "/kept").c_str()), 0);
	*f.now += 1;
	ck_assert(w.pending());
	ck_assert_int_eq(::rename((dir + "/kept").c_str(), (dir + "/.loom-request").c_str()), 0);
	w.served();
	ck_assert(!w.pending());
	*f.now += 5;
	ck_assert(!w.pending());
	put(dir + "/.loom-request", "{\"seq\": 3}");
	*f.now += 1;
	ck_assert(!w.pending());
	*f.now += 1;
	ck_assert(!w.pending());
	ck_assert_int_eq(static_cast<long>(f.said->size()), 1);
	ck_assert_msg(f.said->at(0).find("ignoring the checkpoint request file: " + dir + "/.loom-request: ") == 0,
		      "%s", f.said->at(0).c_str());
	put(dir + "/.loom-request", format_request({3, "suspect", 1700000002}));
	*f.now += 1;
	ck_assert(w.pending());
	ck_assert_int_eq(w.latest(), 3);
	ck_assert_int_eq(static_cast<long>(f.said->size()), 1);
	RequestWatch none(temp_dir() + "/absent", 1.0, f.clock(), f.say());
	*f.now += 1;
	ck_assert(!none.pending());
	ck_assert_int_eq(static_cast<long>(f.said->size()), 1);
}
END_TEST

TCase *ckpt_agree_group_tests()
{
	TCase *tc = tcase_create("group");
	tcase_add_test(tc, step_time_is_an_average_of_the_intervals);
	tcase_add_test(tc, group_calls_the_hook_on_calls_counted_alike);
	tcase_add_test(tc, requests_are_read_at_most_once_per_period);
	return tc;
}
