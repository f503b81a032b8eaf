// The checkpoint helper tests' scratch directory, the helper this build
// made, the test's own credentials and an error's text; and the test case
// test_ckpt_helper's other source gives its suite. It includes
// check_main.hpp after the standard headers, as check.h must come.
#pragma once

#include "lib/ckpt/safe_dir.hpp"
#include "lib/util/expected.hpp"

#include <climits>
#include <cstdlib>
#include <string>
#include <unistd.h>

#include "tests/unit/check_main.hpp"

namespace loom::ckpt::testing {

inline std::string temp_dir()
{
	char tmpl[] = "/tmp/loom-test-helper-XXXXXX";
	char *d = ::mkdtemp(tmpl);
	ck_assert_ptr_nonnull(d);
	return d;
}

// The helper this build made (make check exports LOOM_BUILDDIR).
inline std::string helper()
{
	const char *b = std::getenv("LOOM_BUILDDIR");
	std::string dir = b && *b ? b : ".";
	if (dir[0] != '/') {
		char cwd[PATH_MAX];
		ck_assert_ptr_nonnull(::getcwd(cwd, sizeof cwd));
		dir = std::string(cwd) + "/" + dir;
	}
	std::string p = dir + "/plugins/spank_ckpt/loom-ckpt-helper";
	ck_assert_msg(::access(p.c_str(), X_OK) == 0, "%s is not built", p.c_str());
	return p;
}

inline Credentials me()
{
	Credentials c{::getuid(), ::getgid(), {}};
	if (::getuid() == 0)
		c.groups = {0};
	return c;
}

// An error whose text holds 'text'.
template <typename T>
void ck_assert_error_has(const expected<T> &r, const std::string &text)
{
	ck_assert_msg(!r.has_value(), "succeeded where an error with '%s' was expected", text.c_str());
	ck_assert_msg(r.error().str().find(text) != std::string::npos, "'%s' lacks '%s'", r.error().str().c_str(),
		      text.c_str());
}

} // namespace loom::ckpt::testing

// Whom the helper acts as, and how it is called: credentials, its
// arguments, run_as (test_ckpt_helper_credentials.cpp).
TCase *ckpt_helper_credential_tests();
