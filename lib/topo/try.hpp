// loom topology: early return on error, for readers that check many fields.
//
//   LOOM_TRY(x, r.integer("index", 0, 1023));   // declares x, or returns the Error
//   LOOM_CHECK(parse_domains(...));             // returns the Error of a status
#pragma once

#include "lib/util/expected.hpp"

#define LOOM_TRY_CAT2(a, b) a##b
#define LOOM_TRY_CAT(a, b) LOOM_TRY_CAT2(a, b)
#define LOOM_TRY(var, expr)                                                                                            \
	auto LOOM_TRY_CAT(loom_try_, __LINE__) = (expr);                                                               \
	if (!LOOM_TRY_CAT(loom_try_, __LINE__))                                                                        \
		return ::loom::unexpected(LOOM_TRY_CAT(loom_try_, __LINE__).error());                                  \
	auto var = std::move(*LOOM_TRY_CAT(loom_try_, __LINE__))
#define LOOM_CHECK(expr)                                                                                               \
	do {                                                                                                           \
		auto LOOM_TRY_CAT(loom_check_, __LINE__) = (expr);                                                     \
		if (!LOOM_TRY_CAT(loom_check_, __LINE__))                                                              \
			return ::loom::unexpected(LOOM_TRY_CAT(loom_check_, __LINE__).error());                        \
	} while (0)
