# lib/place: the gang-placement engine: free-capacity index, request model,
# candidate search and scoring, the Slurm tree baseline, state files.
lib_libloom_place_la_SOURCES += \
	lib/place/engine.hpp lib/place/engine.cpp lib/place/class_plan.cpp \
	lib/place/state.hpp lib/place/state.cpp \
	lib/place/hints.hpp lib/place/hints.cpp \
	lib/place/request.hpp lib/place/request.cpp \
	lib/place/gpu_class.hpp lib/place/gpu_class.cpp \
	lib/place/tiers.hpp lib/place/tiers.cpp \
	lib/place/admit.hpp lib/place/admit.cpp \
	lib/place/weights.hpp lib/place/weights.cpp \
	lib/place/search.hpp lib/place/filter.cpp lib/place/gather.cpp lib/place/score.cpp \
	lib/place/state_file.hpp lib/place/state_file.cpp \
	lib/place/synthetic.hpp lib/place/synthetic.cpp \
	lib/place/explain.hpp lib/place/explain.cpp \
	lib/place/slurm_policy.hpp lib/place/slurm_policy.cpp \
	lib/place/spare_spec.hpp lib/place/spare_spec.cpp lib/place/spares.hpp lib/place/spares.cpp \
	lib/place/topo_conf.hpp lib/place/topo_conf.cpp lib/place/fabric.hpp lib/place/fabric.cpp \
	lib/place/ranks.hpp lib/place/ranks.cpp lib/place/site_args.hpp lib/place/site_args.cpp \
	lib/place/baseline.cpp

if HAVE_CHECK
check_PROGRAMS += tests/unit/test_place tests/unit/test_place_io tests/unit/test_place_hints tests/unit/test_tiers
TESTS += tests/unit/test_place tests/unit/test_place_io tests/unit/test_place_hints tests/unit/test_tiers
tests_unit_test_tiers_SOURCES = tests/unit/test_tiers.cpp tests/unit/check_main.hpp tests/unit/place_fixture.hpp \
	tests/unit/tiers_fixture.hpp tests/unit/test_tiers_engine.cpp \
	plugins/common/place_hints.hpp plugins/common/place_hints.cpp
tests_unit_test_tiers_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
tests_unit_test_tiers_LDADD = $(LOOM_PLACE_LIBS) $(CHECK_LIBS)
tests_unit_test_place_SOURCES = tests/unit/test_place.cpp tests/unit/check_main.hpp tests/unit/place_fixture.hpp \
	tests/unit/place_engine_fixture.hpp tests/unit/test_place_fabrics.cpp tests/unit/test_place_slurm.cpp
tests_unit_test_place_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
tests_unit_test_place_LDADD = $(LOOM_PLACE_LIBS) $(CHECK_LIBS)
tests_unit_test_place_io_SOURCES = tests/unit/test_place_io.cpp tests/unit/check_main.hpp tests/unit/place_fixture.hpp
tests_unit_test_place_io_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
tests_unit_test_place_io_LDADD = $(LOOM_PLACE_LIBS) $(CHECK_LIBS)
tests_unit_test_place_hints_SOURCES = tests/unit/test_place_hints.cpp tests/unit/check_main.hpp tests/unit/place_fixture.hpp
tests_unit_test_place_hints_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
tests_unit_test_place_hints_LDADD = $(LOOM_PLACE_LIBS) $(CHECK_LIBS)
endif
EXTRA_DIST += tests/data/place

# The fabric as select/topo and loom_fabric.so load it, and loom-topo.conf.
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_select_topo_fabric
TESTS += tests/unit/test_select_topo_fabric
tests_unit_test_select_topo_fabric_SOURCES = tests/unit/test_select_topo_fabric.cpp tests/unit/tree16.hpp
tests_unit_test_select_topo_fabric_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
tests_unit_test_select_topo_fabric_LDADD = $(LOOM_PLACE_LIBS) $(CHECK_LIBS)
endif

# Every reader of loom-topo.conf fed the same bad files: select/topo's, the
# tiers of spank_place, `loom place` and `loom sim` (the loom binary itself),
# loom_fabric.so's (through dlopen).
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_topo_conf_readers
TESTS += tests/unit/test_topo_conf_readers
tests_unit_test_topo_conf_readers_SOURCES = tests/unit/test_topo_conf_readers.cpp tests/unit/check_main.hpp \
	plugins/spank_place/fabric_module.hpp
tests_unit_test_topo_conf_readers_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
tests_unit_test_topo_conf_readers_LDADD = $(LOOM_PLACE_LIBS) $(CHECK_LIBS)
EXTRA_tests_unit_test_topo_conf_readers_DEPENDENCIES = tools/loom$(EXEEXT) plugins/spank_place/loom_fabric.la
endif

# `loom place --explain`.
tools_loom_SOURCES += tools/loom_place.cpp

# The spare pool (lib/place/spares), its file (lib/exchange/spare_file) and the
# replacement plan (lib/health/spares).
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_spares
TESTS += tests/unit/test_spares
tests_unit_test_spares_SOURCES = tests/unit/test_spares.cpp tests/unit/check_main.hpp tests/unit/tree16.hpp
tests_unit_test_spares_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
tests_unit_test_spares_LDADD = lib/libloom_health.la $(LOOM_PLACE_LIBS) $(CHECK_LIBS)
endif
