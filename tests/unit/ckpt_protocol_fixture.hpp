// The checkpoint protocol tests' scratch directory, and the test cases
// test_ckpt_protocol's other sources give its suite. It includes
// check_main.hpp after the standard headers, as check.h must come.
#pragma once

#include <cstdlib>
#include <string>

#include "tests/unit/check_main.hpp"

inline std::string temp_dir()
{
	char tmpl[] = "/tmp/loom-test-ckpt-XXXXXX";
	char *d = ::mkdtemp(tmpl);
	ck_assert_ptr_nonnull(d);
	return d;
}

// The async writer: snapshot memory, reserve, parallel copy (test_ckpt_async_writer.cpp).
TCase *ckpt_async_writer_tests();
// A job's checkpoint directory: made safely, and its restart record (test_ckpt_job_dir.cpp).
TCase *ckpt_job_dir_tests();
