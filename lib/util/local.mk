lib_libloom_la_SOURCES += \
	lib/util/expected.hpp \
	lib/util/log.hpp lib/util/log.cpp \
	lib/util/config.hpp lib/util/config.cpp \
	lib/util/json.hpp lib/util/json.cpp \
	lib/util/fs.hpp lib/util/fs.cpp

# Unit tests (Check).
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_util
TESTS += tests/unit/test_util
tests_unit_test_util_SOURCES = tests/unit/test_util.cpp tests/unit/check_main.hpp
tests_unit_test_util_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_util_LDADD = lib/libloom.la $(CHECK_LIBS)
endif
