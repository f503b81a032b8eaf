# lib/topo: the fabric topology model, its formats and node discovery.
lib_libloom_la_SOURCES += \
	lib/topo/model.hpp lib/topo/model.cpp \
	lib/topo/build.hpp lib/topo/build.cpp lib/topo/spec.cpp

if HAVE_CHECK
check_PROGRAMS += tests/unit/test_topo_model
TESTS += tests/unit/test_topo_model
tests_unit_test_topo_model_SOURCES = tests/unit/test_topo_model.cpp tests/unit/check_main.hpp
tests_unit_test_topo_model_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
tests_unit_test_topo_model_LDADD = lib/libloom.la $(CHECK_LIBS)
endif
