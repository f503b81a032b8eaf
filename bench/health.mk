# health benchmarks (bench_health*).
# Also `loom health`: tools/local.mk defines tools_loom_SOURCES after
# lib/health/local.mk is read, so the subcommand's files are added here.
tools_loom_SOURCES += tools/loom_health.cpp tools/loom_health_check.cpp tools/loom_health_classify.cpp
