# The loom command. Each subcommand lives in its own file and registers itself
# (tools/command.hpp); a part of loom adds its file to tools_loom_SOURCES in
# its own local.mk.
bin_PROGRAMS += tools/loom
tools_loom_SOURCES = tools/loom.cpp tools/command.hpp tools/command.cpp tools/options.hpp tools/options.cpp
tools_loom_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS) $(HWLOC_CFLAGS)
tools_loom_LDADD = $(LOOM_LIBS)

# net_probe_netns.sh: the network probe on namespaces joined by veth pairs, so root (it fails without).
TESTS += tests/tools/net_probe_netns.sh
EXTRA_DIST += tests/tools/net_probe_netns.sh
# scripts/slurm.sh fetch: a release missing from shared/vendor, downloaded (file:// URLs) and checked.
TESTS += tests/tools/slurm_fetch.sh
EXTRA_DIST += tests/tools/slurm_fetch.sh
# Every command and subcommand: --help exits 0 with its usage, a bad option 2.
TESTS += tests/tools/cli_walk.sh tests/tools/shell_pipes.sh tests/tools/health_exit_codes.sh tests/tools/completion.sh \
	tests/tools/man_pages.sh tests/tools/man_keys.sh tests/tools/module_graph.sh tests/tools/shellcheck.sh \
	tests/tools/clang_format.sh
# man_keys.sh compares each documented default with the reader's own, through this.
check_PROGRAMS += tests/tools/schema_values
tests_tools_schema_values_SOURCES = tests/tools/schema_values.cpp
tests_tools_schema_values_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS)
tests_tools_schema_values_LDADD = lib/libloom_health.la lib/libloom_ckpt.la $(LOOM_PLACE_LIBS)
# Built before man_keys.sh runs, also where only some tests' logs are made.
tests/tools/man_keys.log: tests/tools/schema_values$(EXEEXT)
EXTRA_DIST += tests/tools/cli_walk.sh tests/tools/shell_pipes.sh tests/tools/health_exit_codes.sh tests/tools/completion.sh \
	tests/tools/man_pages.sh tests/tools/man_keys.sh tests/tools/man_keys.py tests/tools/man_options.py tests/tools/module_graph.sh \
	tests/tools/module_graph.py tests/tools/shellcheck.sh .shellcheckrc tests/tools/clang_format.sh .clang-format
