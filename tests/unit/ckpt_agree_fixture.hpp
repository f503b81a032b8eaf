// The agreement tests' scratch directories, files put in them, and a clock
// the test moves with the lines said; and the test case test_ckpt_agree's
// other source gives its suite. It includes check_main.hpp after the
// standard headers, as check.h must come.
#pragma once

#include "lib/ckpt/agree.hpp"
#include "lib/ckpt/commit.hpp" // remove_tree
#include "lib/util/fs.hpp"

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tests/unit/check_main.hpp"

namespace loom::ckpt::testing {

// A new directory, removed when the test's process exits.
inline std::string temp_dir()
{
	static std::vector<std::string> made;
	char tmpl[] = "/tmp/loom-test-agree-XXXXXX";
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

inline void put(const std::string &path, const std::string &text)
{
	auto st = write_file_atomic(path, text, 0644);
	ck_assert_msg(st.has_value(), "%s", st ? "" : st.error().str().c_str());
}

// A clock the test moves, and the lines said.
struct Fake {
	std::shared_ptr<double> now = std::make_shared<double>(100.0);
	std::shared_ptr<std::vector<std::string>> said = std::make_shared<std::vector<std::string>>();
	Clock clock() const
	{
		auto t = now;
		return [t] { return *t; };
	}
	Say say() const
	{
		auto s = said;
		return [s](const std::string &line) { s->push_back(line); };
	}
};

} // namespace loom::ckpt::testing

// The step timer, the all-reduce group and the request watch
// (test_ckpt_agree_group.cpp).
TCase *ckpt_agree_group_tests();
