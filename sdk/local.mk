# sdk: the application side of the checkpoint protocol. A C++ library
# (libloom_ckpt, header <loom/ckpt.hpp>) and a Python module (standard
# library only), both writing the formats of lib/ckpt (doc/loom-ckpt-protocol.md).
lib_LTLIBRARIES = sdk/libloom_ckpt.la
sdk_libloom_ckpt_la_SOURCES = sdk/cpp/loom/ckpt.hpp sdk/cpp/ckpt.cpp sdk/cpp/progress.hpp sdk/cpp/progress.cpp
sdk_libloom_ckpt_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS)
sdk_libloom_ckpt_la_CXXFLAGS = $(AM_CXXFLAGS) $(LOOM_VISIBILITY_FLAGS)
# 2:0:0: Config and Restored gained members (ranks of a distributed job): an
# incompatible change, .so.2. (1:0:1 added Checkpointer::reserve().)
sdk_libloom_ckpt_la_LDFLAGS = -version-info 2:0:0 -no-undefined
sdk_libloom_ckpt_la_LIBADD = $(LOOM_CKPT_LIBS)
loom_sdk_includedir = $(includedir)/loom
loom_sdk_include_HEADERS = sdk/cpp/loom/ckpt.hpp

# The `loom ckpt` subcommand (here: tools/local.mk is included before lib/).
tools_loom_SOURCES += tools/loom_ckpt.cpp

# The Python package loom_ckpt (sdk/python: pyproject.toml, setuptools). `make`
# builds its wheel, sdk/python/dist/loom_ckpt-VERSION-py3-none-any.whl, from a
# copy of sdk/python in the build tree (the source tree may be read-only), and
# `make install` unpacks that wheel into PYTHON_SITEDIR (configure
# --with-python-sitedir), where python3 finds it. The wheel holds every module
# setuptools finds in loom_ckpt/; this list is what `make dist` carries (and
# what the wheel is rebuilt after): name each new module here too.
python_sdk_pkg_files = sdk/python/loom_ckpt/__init__.py sdk/python/loom_ckpt/__main__.py \
	sdk/python/loom_ckpt/_version.py sdk/python/loom_ckpt/hashio.py sdk/python/loom_ckpt/dcp_io.py \
	sdk/python/loom_ckpt/datafile.py sdk/python/loom_ckpt/agree.py sdk/python/loom_ckpt/catalog.py sdk/python/loom_ckpt/checkpointer.py \
	sdk/python/loom_ckpt/restorer.py sdk/python/loom_ckpt/progress.py \
	sdk/python/loom_ckpt/cli.py sdk/python/loom_ckpt/launch.py sdk/python/loom_ckpt/protocol.py \
	sdk/python/loom_ckpt/snapshot.py sdk/python/loom_ckpt/store.py sdk/python/loom_ckpt/torch_io.py \
	sdk/python/loom_ckpt/lightning.py sdk/python/loom_ckpt/hf.py sdk/python/loom_ckpt/frameworks.py
EXTRA_DIST += $(python_sdk_pkg_files) sdk/python/pyproject.toml

python_wheel_name = loom_ckpt-$(PACKAGE_VERSION)-py3-none-any.whl
python_wheel = sdk/python/dist/$(python_wheel_name)
python_wheel_tree = sdk/python/wheel-src
if BUILD_PYTHON_WHEEL
noinst_DATA = $(python_wheel)
endif
# setuptools' PEP 517 backend called directly: no pip, no network, no
# isolated environment; it writes build/ and loom_ckpt.egg-info into the copy.
$(python_wheel): $(python_sdk_pkg_files) sdk/python/pyproject.toml
	$(AM_V_GEN)rm -rf $(python_wheel_tree) sdk/python/dist && \
	$(MKDIR_P) $(python_wheel_tree) sdk/python/dist && \
	cp $(srcdir)/sdk/python/pyproject.toml $(python_wheel_tree)/ && \
	cp -R $(srcdir)/sdk/python/loom_ckpt $(python_wheel_tree)/ && \
	chmod -R u+w $(python_wheel_tree) && \
	find $(python_wheel_tree) -name __pycache__ -prune -exec rm -rf {} + && \
	dist=`cd sdk/python/dist && pwd` && \
	if ! (cd $(python_wheel_tree) && PYTHONDONTWRITEBYTECODE=1 $(PYTHON3) -c \
		'import sys, setuptools.build_meta as b; print(b.build_wheel(sys.argv[1]))' "$$dist") \
		>sdk/python/wheel.log 2>&1; then \
		cat sdk/python/wheel.log >&2; \
		echo "sdk: building the Python SDK's wheel failed (log above: sdk/python/wheel.log)" >&2; exit 1; \
	fi && \
	test -f $@ || { echo "sdk: the wheel is not $@: `ls sdk/python/dist`" >&2; exit 1; }

# The wheel unpacked (its package and dist-info, no console script: that is
# `python3 -m loom_ckpt`); the packages byte-compile (dh_python3, rpm).
if BUILD_PYTHON_WHEEL
install-data-local: $(python_wheel)
	$(MKDIR_P) '$(DESTDIR)$(PYTHON_SITEDIR)'
	rm -rf '$(DESTDIR)$(PYTHON_SITEDIR)/loom_ckpt' '$(DESTDIR)$(PYTHON_SITEDIR)/loom_ckpt-$(PACKAGE_VERSION).dist-info'
	$(PYTHON3) -m zipfile -e $(python_wheel) '$(DESTDIR)$(PYTHON_SITEDIR)'
uninstall-local:
	rm -rf '$(DESTDIR)$(PYTHON_SITEDIR)/loom_ckpt' '$(DESTDIR)$(PYTHON_SITEDIR)/loom_ckpt-$(PACKAGE_VERSION).dist-info'
endif
clean-local:
	rm -rf $(python_wheel_tree) sdk/python/dist sdk/python/wheel.log

# The wheel make built, installed into a fresh venv (import, version, the
# loom-ckpt command), and `pip install` of a copy of sdk/python.
TESTS += tests/ckpt/sdk_wheel.sh
EXTRA_DIST += tests/ckpt/sdk_wheel.sh

# Crash safety (hundreds of kill -9 of a writer), the Python SDK's tests and
# the deterministic training program the cluster scenarios run.
check_PROGRAMS += tests/ckpt/crash_writer tests/ckpt/crash_check
tests_ckpt_crash_writer_SOURCES = tests/ckpt/crash_writer.cpp tests/ckpt/crash_pattern.hpp
tests_ckpt_crash_writer_LDADD = sdk/libloom_ckpt.la
tests_ckpt_crash_check_SOURCES = tests/ckpt/crash_check.cpp tests/ckpt/crash_pattern.hpp
tests_ckpt_crash_check_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS)
tests_ckpt_crash_check_LDADD = $(LOOM_CKPT_LIBS)
TESTS += tests/ckpt/crash_safety.sh tests/ckpt/sdk_python.sh tests/ckpt/sdk_torch.sh tests/ckpt/ranks_python.sh
EXTRA_DIST += tests/ckpt/crash_safety.sh tests/ckpt/sdk_python.sh tests/ckpt/test_sdk_python.py tests/ckpt/test_datafile.py \
	tests/ckpt/train.py tests/ckpt/scenario_lib.sh tests/ckpt/sdk_torch.sh tests/ckpt/train_torch.py \
	tests/ckpt/ranks_python.sh tests/ckpt/train_ranks.py tests/ckpt/train_fsdp.py tests/ckpt/ranks_check.py scripts/torch-venv.sh

# The protocol's conformance corpus (doc/loom-ckpt-protocol.md), run by both
# readers: lib/ckpt through the C++ SDK, and the Python SDK.
check_PROGRAMS += tests/ckpt/conformance_cpp
tests_ckpt_conformance_cpp_SOURCES = tests/ckpt/conformance_cpp.cpp
tests_ckpt_conformance_cpp_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS)
tests_ckpt_conformance_cpp_LDADD = sdk/libloom_ckpt.la $(LOOM_CKPT_LIBS) $(JSONC_LIBS)
TESTS += tests/ckpt/conformance_cpp tests/ckpt/conformance_py.sh
EXTRA_DIST += tests/ckpt/conformance tests/ckpt/conformance.py tests/ckpt/conformance_py.sh \
	doc/loom-ckpt-protocol.md

# Crash safety of several ranks: rounds of 2 or 3 ranks of
# tests/ckpt/ranks_writer, one of them killed (kill -9) at a random moment of
# its saves, or rank 0 between the parts and the commit; every committed
# step whole, with every rank's part, and each rank restores its own bytes.
check_PROGRAMS += tests/ckpt/crash_ranks_check
tests_ckpt_crash_ranks_check_SOURCES = tests/ckpt/crash_ranks_check.cpp
tests_ckpt_crash_ranks_check_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS)
tests_ckpt_crash_ranks_check_LDADD = sdk/libloom_ckpt.la $(LOOM_CKPT_LIBS)
TESTS += tests/ckpt/crash_ranks.sh
EXTRA_DIST += tests/ckpt/crash_ranks.sh
