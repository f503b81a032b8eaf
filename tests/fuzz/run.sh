#!/bin/bash
# Build every tests/fuzz/fuzz_*.cpp with clang's libFuzzer (+ASan/UBSan) and run
# each for a bounded time on its seed corpus (tests/fuzz/corpus/<name>/).
# A crash, leak, timeout or sanitizer report fails the run.
#
#   tests/fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]     (default 20 s, all targets)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
secs=${1:-20}
shift || true
out=${LOOM_FUZZ_OUT:-/tmp/loom-fuzz}
mkdir -p "$out"
CXX=${CLANGXX:-$(command -v clang++ || command -v clang++-14 || true)}
[ -n "$CXX" ] || { echo "fuzz: clang++ not found (apt-get install clang libclang-rt-14-dev)" >&2; exit 1; }

# The lib/ modules the fuzz targets include, and those these include in
# turn: their sources are compiled once with fuzzer instrumentation (the
# others, lib/place and lib/sim today, about a quarter of lib/, no target
# reaches).
# modules_of FILE...: the lib/ modules FILEs include, one per line.
modules_of() { sed -n 's|^#include "lib/\([a-z_]*\)/.*|\1|p' "$@" | sort -u; }
mods=$(modules_of "$here"/fuzz_*.cpp)
while :; do
    more=$(cd "$top" && { echo "$mods"; for m in $mods; do modules_of lib/"$m"/*.[ch]pp; done; } | sort -u)
    [ "$more" != "$mods" ] || break
    mods=$more
done
libsrcs=$(cd "$top" && for m in $mods; do ls lib/"$m"/*.cpp; done)
echo "fuzz: lib/ modules: ${mods//$'\n'/ }"
# Line tables only: a report's frames keep file:line, the compile is 1/6 faster.
flags="-std=c++20 -gline-tables-only -O1 -fsanitize=fuzzer-no-link,address,undefined -I$top -I$out"
flags="$flags $(pkg-config --cflags json-c libcrypto hwloc yaml-0.1)"
libs="$(pkg-config --libs json-c libcrypto hwloc yaml-0.1) -ldl -pthread"
pkg-config --exists libibverbs && libs="$libs $(pkg-config --libs libibverbs)"
# The build's feature macros: a minimal loom_config.h for the fuzz build.
cat > "$out/loom_config.h" <<CFG
#define PACKAGE_VERSION "fuzz"
#define LOOM_SLURM_VERSION_STRING "fuzz"
CFG
objs=()
stale=()
# Objects of other flags are stale too.
[ "$(cat "$out/obj/flags" 2>/dev/null)" = "$flags" ] || rm -rf "$out/obj"
mkdir -p "$out/obj"
echo "$flags" >"$out/obj/flags"
# An object is stale when its source or any header of lib/ is newer (a
# header's change alters layouts every object must agree on).
newest_hdr=$(cd "$top" && ls -t lib/*/*.hpp | head -1)
for s in $libsrcs; do
    o="$out/obj/${s//\//_}.o"
    if [ ! -f "$o" ] || [ "$top/$s" -nt "$o" ] || [ "$top/$newest_hdr" -nt "$o" ]; then
        stale+=("$s")
    fi
    objs+=("$o")
done
# Stale objects compile on every core (LOOM_JOBS to limit).
# shellcheck disable=SC2086 # flags: a list of compiler words
compile_one() { s=$1; o="$out/obj/${s//\//_}.o"; $CXX $flags -include "$out/loom_config.h" -c "$top/$s" -o "$o.tmp" && mv "$o.tmp" "$o"; }
export -f compile_one
export CXX flags out top
if [ ${#stale[@]} -gt 0 ]; then
    printf '%s\n' "${stale[@]}" | xargs -P "${LOOM_JOBS:-$(nproc)}" -I{} bash -c 'compile_one "$1"' _ {} ||
        { echo "fuzz: compiling libloom for fuzzing failed" >&2; exit 1; }
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    for f in "$here"/fuzz_*.cpp; do targets+=("$(basename "$f" .cpp)"); done
fi
[ ${#targets[@]} -gt 0 ] || { echo "fuzz: no targets" >&2; exit 1; }
fail=0
for t in "${targets[@]}"; do
    bin="$out/$t"
    # shellcheck disable=SC2086 # flags and libs: lists of compiler words
    $CXX $flags -fsanitize=fuzzer -include "$out/loom_config.h" "$here/$t.cpp" "${objs[@]}" $libs -o "$bin"
    corpus="$here/corpus/${t#fuzz_}"
    work="$out/corpus-$t"
    mkdir -p "$work"
    [ -d "$corpus" ] || { echo "fuzz: $t has no seed corpus at $corpus" >&2; fail=1; continue; }
    echo "fuzz: $t for ${secs}s"
    if ! (cd "$out" && "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
            -print_final_stats=1 "$work" "$corpus" > "$out/$t.log" 2>&1); then
        echo "fuzz: $t FAILED (log: $out/$t.log)" >&2
        tail -40 "$out/$t.log" >&2
        fail=1
    else
        grep -E "stat::number_of_executed_units|Done" "$out/$t.log" | tail -1 | sed "s/^/fuzz: $t: /"
    fi
done
exit $fail
