// loom ckpt: standby nodes inside the allocation (lib/ckpt/standby.hpp).
#include "lib/ckpt/standby.hpp"

#include <cmath>

#include "tests/unit/check_main.hpp"

using namespace loom::ckpt;

// Poisson's CDF by hand: e^-1 (1), e^-1 (1 + 1), e^-1 (1 + 1 + 1/2).
START_TEST(poisson_cdf_by_hand)
{
	ck_assert_double_eq_tol(poisson_cdf(0, 1), 0.367879, 1e-6);
	ck_assert_double_eq_tol(poisson_cdf(1, 1), 0.735759, 1e-6);
	ck_assert_double_eq_tol(poisson_cdf(2, 1), 0.919699, 1e-6);
	ck_assert_double_eq_tol(poisson_cdf(3, 0), 1, 1e-12);
	ck_assert_double_eq_tol(poisson_cdf(-1, 2), 0, 1e-12);
	// Far in the tail of a large mean: no overflow, close to 1.
	ck_assert_double_eq_tol(poisson_cdf(200, 100), 1, 1e-9);
}
END_TEST

// 100 nodes, each failing once in 100 runs: about one failure per run. With
// s standbys the mean is (100 + s) / 100; P(X <= 2) at 1.02 is
// e^-1.02 (1 + 1.02 + 1.02^2 / 2) = 0.9160, the first count over 0.9.
START_TEST(standbys_cover_the_expected_failures)
{
	const double day = 86400;
	StandbyNeed n = standby_count(100, day, 100 * day, 0.9, 16);
	ck_assert_int_eq(n.nodes, 2);
	ck_assert_double_eq_tol(n.expected_failures, 1.02, 1e-9);
	ck_assert_double_eq_tol(n.coverage, 0.915983, 1e-5);
	ck_assert(!n.capped);
	ck_assert_msg(n.why().find("2 standby nodes") == 0, "why: %s", n.why().c_str());
	// A higher probability asks for more; a longer MTBF for fewer.
	ck_assert_int_eq(standby_count(100, day, 100 * day, 0.99, 16).nodes, 4);
	ck_assert_int_eq(standby_count(100, day, 10000 * day, 0.9, 16).nodes, 0);
}
END_TEST

START_TEST(standbys_capped_and_none_to_fear)
{
	const double day = 86400;
	StandbyNeed n = standby_count(100, day, 100 * day, 0.9, 1);
	ck_assert_int_eq(n.nodes, 1);
	ck_assert(n.capped);
	ck_assert_msg(n.why().find("(capped)") != std::string::npos, "why: %s", n.why().c_str());
	ck_assert_int_eq(standby_count(0, day, day, 0.9, 8).nodes, 0);
	ck_assert_int_eq(standby_count(8, 0, day, 0.9, 8).nodes, 0);
	ck_assert_int_eq(standby_count(8, day, 0, 0.9, 8).nodes, 0);
	ck_assert_int_eq(standby_count(8, day, INFINITY, 0.9, 8).nodes, 0);
	ck_assert_int_eq(standby_count(8, day, day, 0.9, 0).nodes, 0);
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("ckpt_standby");
	TCase *tc = tcase_create("standby");
	tcase_add_test(tc, poisson_cdf_by_hand);
	tcase_add_test(tc, standbys_cover_the_expected_failures);
	tcase_add_test(tc, standbys_capped_and_none_to_fear);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
