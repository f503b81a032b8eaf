# Test tiers: unit (Check, under each part's local.mk), plugin-load and cluster
# scenarios (tests/cluster, run by scripts/test.sh against a real Slurm), fuzz.
include tests/fuzz/local.mk

# Configured --without-check: make check fails and says why (the unit tests
# are not there), never a pass of the shell tests alone.
if !HAVE_CHECK
TESTS += tests/no_check.sh
endif
EXTRA_DIST += tests/no_check.sh

# The checkpoint conformance runner's tree builder (the runner itself is in
# sdk/local.mk).
tests_ckpt_conformance_cpp_SOURCES += tests/ckpt/conformance_tree.hpp tests/ckpt/conformance_tree.cpp

# Checkpoints of several ranks (lib/ckpt/ranks, commit_ranks, catalog_ranks,
# manifest_ranks).
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_ckpt_ranks
TESTS += tests/unit/test_ckpt_ranks
tests_unit_test_ckpt_ranks_SOURCES = tests/unit/test_ckpt_ranks.cpp tests/unit/check_main.hpp
tests_unit_test_ckpt_ranks_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_ckpt_ranks_LDADD = $(LOOM_CKPT_LIBS) $(CHECK_LIBS)
endif

# The C++ SDK in a job of 4 ranks: a checkpoint per step with 4 parts, each
# rank restores its own bytes, a rank killed before its part commits nothing.
check_PROGRAMS += tests/ckpt/ranks_writer
tests_ckpt_ranks_writer_SOURCES = tests/ckpt/ranks_writer.cpp
tests_ckpt_ranks_writer_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS)
tests_ckpt_ranks_writer_LDADD = sdk/libloom_ckpt.la $(LOOM_CKPT_LIBS)
TESTS += tests/ckpt/ranks_sdk.sh
EXTRA_DIST += tests/ckpt/ranks_sdk.sh

# The one decision of every rank (lib/ckpt/agree: rank 0's stamped step, the
# all-reduce hook, the request file), and its stamp file between the C++ and
# the Python SDK.
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_ckpt_agree tests/unit/test_ckpt_agree_python
TESTS += tests/unit/test_ckpt_agree tests/unit/test_ckpt_agree_python
tests_unit_test_ckpt_agree_SOURCES = tests/unit/test_ckpt_agree.cpp tests/unit/check_main.hpp \
	tests/unit/ckpt_agree_fixture.hpp tests/unit/test_ckpt_agree_group.cpp
tests_unit_test_ckpt_agree_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_ckpt_agree_LDADD = $(LOOM_CKPT_LIBS) $(CHECK_LIBS)
tests_unit_test_ckpt_agree_python_SOURCES = tests/unit/test_ckpt_agree_python.cpp tests/unit/check_main.hpp
tests_unit_test_ckpt_agree_python_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_ckpt_agree_python_LDADD = $(LOOM_CKPT_LIBS) $(CHECK_LIBS)
endif

# The C++ SDK's should_checkpoint() over lib/ckpt/agree: the request file,
# allreduce_max's calls, rank 0's stamped step.
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_ckpt_sdk_agree
TESTS += tests/unit/test_ckpt_sdk_agree
tests_unit_test_ckpt_sdk_agree_SOURCES = tests/unit/test_ckpt_sdk_agree.cpp tests/unit/check_main.hpp
tests_unit_test_ckpt_sdk_agree_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_ckpt_sdk_agree_LDADD = sdk/libloom_ckpt.la $(LOOM_CKPT_LIBS) $(CHECK_LIBS)
# ... and its progress reports for spank_ckpt's keeper (lib/exchange/progress_report.hpp).
check_PROGRAMS += tests/unit/test_ckpt_sdk_progress
TESTS += tests/unit/test_ckpt_sdk_progress
tests_unit_test_ckpt_sdk_progress_SOURCES = tests/unit/test_ckpt_sdk_progress.cpp tests/unit/check_main.hpp
tests_unit_test_ckpt_sdk_progress_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_ckpt_sdk_progress_LDADD = sdk/libloom_ckpt.la $(LOOM_CKPT_LIBS) $(CHECK_LIBS)
endif

# An MPI job (Open MPI, 4 ranks) over the C++ SDK with MPI_Allreduce hooks:
# crashed and relaunched, bitwise identical (the test builds train_mpi.cpp
# with mpicxx against this build's libloom_ckpt).
TESTS += tests/ckpt/ranks_mpi.sh
EXTRA_DIST += tests/ckpt/ranks_mpi.sh tests/ckpt/train_mpi.cpp

# The Python SDK's I/O (a save hashes as it writes, a restore reads each byte
# once), the framework adapters (Lightning, transformers' Trainer) run for
# real, and what examples/ and doc/containers.md need in the tarball
# (tests/cluster/scenarios/26_ckpt_examples.sh runs them on a cluster).
TESTS += tests/ckpt/sdk_io.sh tests/ckpt/frameworks.sh
EXTRA_DIST += tests/ckpt/sdk_io.sh tests/ckpt/test_sdk_io.py tests/ckpt/frameworks.sh tests/ckpt/late_rank/sitecustomize.py tests/ckpt/free_port.py scripts/frameworks-venv.sh \
	examples/plain/train.py examples/plain/job.sbatch examples/torchrun-dcp/train.py examples/torchrun-dcp/job.sbatch \
	examples/lightning/train.py examples/lightning/job.sbatch examples/hf/train.py examples/hf/job.sbatch \
	examples/accelerate/train.py examples/accelerate/job.sbatch \
	doc/containers.md bench/ckpt_restore_io.py
