// loom unit tests: shared main() for Check suites.
//
// A test file defines `static Suite *make_suite()` and then writes
// LOOM_CHECK_MAIN(make_suite). Data files are found through LOOM_SRCDIR, which
// `make check` exports; a test that cannot find its data fails, it never skips.
#pragma once

// The standard streams before check.h, whose deprecated 'fail' macro would
// otherwise rewrite std::basic_ios::fail() in any header included later.
#include <cstdlib>
#include <ios>
#include <memory>
#include <ostream>
#include <string>

#include <check.h>

namespace loom::test {

inline std::string srcdir()
{
	const char *d = std::getenv("LOOM_SRCDIR");
	return d && *d ? d : ".";
}

inline std::string data(const std::string &rel) { return srcdir() + "/tests/data/" + rel; }

} // namespace loom::test

#define LOOM_CHECK_MAIN(make_suite_fn)                                                                                 \
	int main()                                                                                                     \
	{                                                                                                              \
		SRunner *sr = srunner_create(make_suite_fn());                                                         \
		srunner_run_all(sr, CK_NORMAL);                                                                        \
		int failed = srunner_ntests_failed(sr);                                                                \
		srunner_free(sr);                                                                                      \
		return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;                                                      \
	}

// Check's ck_assert_str_eq with std::string operands.
#define ck_assert_sstr_eq(a, b)                                                                                        \
	do {                                                                                                           \
		const std::string loom_ck_a_(a), loom_ck_b_(b);                                                        \
		ck_assert_str_eq(loom_ck_a_.c_str(), loom_ck_b_.c_str());                                              \
	} while (0)
