lib_libloom_util_la_SOURCES += \
	lib/util/expected.hpp \
	lib/util/log.hpp lib/util/log.cpp \
	lib/util/config.hpp lib/util/config.cpp lib/util/config_values.cpp \
	lib/util/json.hpp lib/util/json.cpp \
	lib/util/fs.hpp lib/util/fs.cpp \
	lib/util/hostlist.hpp lib/util/hostlist.cpp \
	lib/util/subprocess.hpp lib/util/subprocess.cpp \
	lib/util/gres.hpp lib/util/gres.cpp \
	lib/util/nvml_api.hpp lib/util/nvml_api.cpp \
	lib/util/admin_comment.hpp lib/util/admin_comment.cpp

# Unit tests (Check).
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_util
TESTS += tests/unit/test_util
tests_unit_test_util_SOURCES = tests/unit/test_util.cpp tests/unit/check_main.hpp tests/unit/test_util_files.cpp \
	tests/unit/test_util_slurm_text.cpp
tests_unit_test_util_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_util_LDADD = $(LOOM_UTIL_LIBS) $(CHECK_LIBS)
endif
