// The bounded-read tests' scratch trees: a directory, files and FIFOs put in
// it, the problem that names a path, the time since a start; and the test
// case test_health_bounded_reads's other source gives its suite. It
// includes check_main.hpp after the standard headers, as check.h must come.
#pragma once

#include "lib/util/expected.hpp"
#include "lib/util/fs.hpp"

#include <chrono>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "tests/unit/check_main.hpp"

namespace loom::health::testing {

inline std::string temp_dir()
{
	char tmpl[] = "/tmp/loom-bounded-test.XXXXXX";
	char *d = ::mkdtemp(tmpl);
	ck_assert(d != nullptr);
	return d;
}

inline void mkdirs(const std::string &path)
{
	std::string cmd = "mkdir -p '" + path + "'";
	ck_assert_int_eq(std::system(cmd.c_str()), 0);
}

inline void put(const std::string &root, const std::string &rel, const std::string &text)
{
	std::string path = root + "/" + rel;
	mkdirs(path.substr(0, path.rfind('/')));
	ck_assert(write_file_atomic(path, text).has_value());
}

inline void fifo(const std::string &root, const std::string &rel)
{
	std::string path = root + "/" + rel;
	mkdirs(path.substr(0, path.rfind('/')));
	ck_assert_int_eq(::mkfifo(path.c_str(), 0644), 0);
}

inline void remove_tree(const std::string &dir)
{
	std::string cmd = "rm -rf '" + dir + "'";
	ck_assert_int_eq(std::system(cmd.c_str()), 0);
}

inline bool has(const std::string &text, const std::string &what) { return text.find(what) != std::string::npos; }

// The problem that names 'path', or "".
inline std::string problem_for(const std::vector<Error> &problems, const std::string &path)
{
	for (const auto &e : problems)
		if (e.where == path)
			return e.str();
	return "";
}

inline double seconds_since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace loom::health::testing

// Garbage in sysfs: an error naming the file and the value
// (test_health_sysfs_garbage.cpp).
TCase *health_sysfs_garbage_tests();
