# Fuzz targets (tests/fuzz/fuzz_*.cpp) are built with clang's libFuzzer by
# tests/fuzz/run.sh; `make check` replays each target's seed corpus through the
# same entry point built with the normal compiler (tests/fuzz/replay_main.cpp).
EXTRA_DIST += tests/fuzz
