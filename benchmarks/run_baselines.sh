#!/usr/bin/env bash
# run_baselines.sh - builds the sequential/OpenMP C baselines and prints their median times and checks.
#
# Usage: bash benchmarks/run_baselines.sh [--quick]
#   RUNS=N  timed runs per measurement after one warm-up (default 5)
#   CC=...  compiler (default gcc); OMP_NUM_THREADS is honoured by the OpenMP versions.
#   --quick only builds and runs the small correctness cases (a few seconds).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/benchmarks"
OUT="$ROOT/build/benchmarks"
CC="${CC:-gcc}"
RUNS="${RUNS:-5}"
# -ffp-contract=off: no FMA fusion, so each a*b is rounded before the add, as the contract says
# (GCC would otherwise fuse under -march=native in GNU mode).
CFLAGS=(-std=c11 -O3 -march=native -fopenmp -ffp-contract=off -Wall -Wextra)
QUICK=0
[[ "${1:-}" == "--quick" ]] && QUICK=1

mkdir -p "$OUT"
build() { # build NAME SOURCES...
  local name="$1"; shift
  "$CC" "${CFLAGS[@]}" -o "$OUT/$name" "$@" -lm
}
build sgemm "$SRC/sgemm/sgemm_ref.c" "$SRC/sgemm/sgemm_main.c"
build stencil "$SRC/stencil/stencil_ref.c" "$SRC/stencil/stencil_main.c"
build edge "$SRC/edge/edge_ref.c" "$SRC/edge/edge_main.c"
build small_ref_selftest "$SRC/common/small_ref.c" "$SRC/common/small_ref_selftest.c"

status=0
run() { "$@" || status=1; }

echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg); compiler: $("$CC" --version | head -1); flags: ${CFLAGS[*]}"

# Odd, non-tile-multiple sizes: catch boundary bugs in the baselines before timing them.
run "$OUT/small_ref_selftest"
run "$OUT/sgemm" 100 77 130 --runs 1
run "$OUT/stencil" 33 17 9 5 --runs 1
run "$OUT/edge" 257 131 3 --runs 1

if [[ $QUICK == 0 ]]; then
  echo "# benchmarks: median of $RUNS runs after 1 warm-up"
  run "$OUT/sgemm" 1024 1024 1024 --runs "$RUNS"
  run "$OUT/stencil" 128 128 128 100 --runs "$RUNS"
  run "$OUT/edge" 1280 1280 4 --runs "$RUNS"
fi
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
[[ $status == 0 ]] && echo "# all checks ok" || echo "# SOME CHECKS FAILED"
exit $status
