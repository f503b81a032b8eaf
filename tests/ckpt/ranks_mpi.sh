#!/bin/bash
# Checkpoints of an MPI job through the C++ SDK: tests/ckpt/train_mpi.cpp,
# built here with mpicxx against this build's libloom_ckpt, run by mpirun
# with 4 ranks (Open MPI: the SDK takes the rank from OMPI_COMM_WORLD_RANK,
# the launch id from PMIX_NAMESPACE), agreeing through MPI_Allreduce hooks.
# An uninterrupted run; a run whose ranks all die abruptly mid-training; a
# relaunch (restart count 1): every rank resumes from one committed step and
# ends bitwise identical to the uninterrupted run, and every committed
# checkpoint holds 4 parts. Without mpicxx/mpirun (Debian: openmpi-bin,
# libopenmpi-dev; scripts/deps.sh) this fails, it does not skip.
set -u
src=${LOOM_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${LOOM_BUILDDIR:-$(pwd)}
fail() { echo "ranks_mpi: FAIL: $*" >&2; exit 1; }
command -v mpicxx >/dev/null && command -v mpirun >/dev/null || fail "mpicxx or mpirun not found (apt-get install openmpi-bin libopenmpi-dev)"
lib=$build/sdk/.libs
[ -e "$lib/libloom_ckpt.so" ] || fail "$lib/libloom_ckpt.so is not built"
work=$(mktemp -d /tmp/loom-ranks-mpi.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
mpicxx -std=c++17 -O1 -I"$src" -o "$work/train_mpi" "$src/tests/ckpt/train_mpi.cpp" -L"$lib" -lloom_ckpt \
	-Wl,-rpath,"$lib" 2>"$work/cc.err" || fail "mpicxx: $(cat "$work/cc.err")"
root=()
[ "$(id -u)" != 0 ] || root=(--allow-run-as-root)
run() { # DIR [ENV=VALUE...]: one mpirun of 4 ranks
	local dir=$1 kv xs=()
	shift
	for kv in LOOM_CKPT_DIR="$dir" LOOM_CKPT_COMMIT_TIMEOUT=20 LOOM_CKPT_AGREE_SECONDS=0.05 "$@"; do
		xs+=(-x "$kv")
	done
	timeout 120 mpirun "${root[@]}" --oversubscribe -np 4 --mca btl self,vader "${xs[@]}" "$work/train_mpi" \
		>>"$dir.out" 2>>"$dir.err"
}
finals() { grep -o 'rank [0-9]* final step=[0-9]* sha256=[0-9a-f]*' "$1" | sort; }
run "$work/ref" || fail "the uninterrupted run failed: $(tail -5 "$work/ref.err")"
run "$work/run" TRAIN_CRASH_AT=300
[ -z "$(finals "$work/run.out")" ] || fail "the crashing run was not interrupted"
run "$work/run" LOOM_RESTART_COUNT=1 || fail "the relaunch failed: $(tail -5 "$work/run.err")"
[ "$(finals "$work/ref.out" | wc -l)" = 4 ] || fail "the uninterrupted run did not end on 4 ranks: $(cat "$work/ref.out" "$work/ref.err")"
[ "$(finals "$work/ref.out" | awk '{print $5}' | sort -u | wc -l)" = 4 ] || fail "the 4 ranks do not hold 4 different states"
from=$(grep -o 'resumed_from=[0-9]*' "$work/run.out" | sort -u)
[ "$(echo "$from" | wc -l)" = 1 ] && [ "$from" != resumed_from=0 ] || fail "the ranks did not resume from one committed step: ${from//$'\n'/ }"
diff <(finals "$work/ref.out") <(finals "$work/run.out") >/dev/null ||
	fail "the relaunched run differs from the uninterrupted one: $(diff <(finals "$work/ref.out") <(finals "$work/run.out") | tr '\n' ';')"
PYTHONPATH=$src/sdk/python python3 "$src/tests/ckpt/ranks_check.py" "$work/run" 4 || fail "the checkpoints are not whole"
echo "ranks_mpi: mpirun -np 4: resumed from ${from#resumed_from=} on every rank, 4 final states identical to the uninterrupted run"
