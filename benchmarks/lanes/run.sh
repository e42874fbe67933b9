#!/usr/bin/env bash
# run.sh - SIMD across instances (convert-hpvm-to-vector): the naive HPVM-C sgemm of
# examples/hpvm-c (one instance per element of C, 16x8 tiles), compiled by hpvm-cc -O3 with its
# instances run as vector lanes (the default) and one by one (-fno-hpvm-lanes), against
# OpenBLAS's cblas_sgemm and the same naive loop nest written by hand with OpenMP threads and
# `#pragma omp simd` (gcc -O3 -march=native -fopenmp), on the same inputs, in one run.
# Usage: bash benchmarks/lanes/run.sh [--quick]      (RUNS=N, default 5; SIZE=N, default 1024)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/benchmarks/lanes"
OUT="${HPVM_BENCH_OUT:-$ROOT/build/benchmarks/lanes}"
BIN="${HPVM_BIN:-$ROOT/build/bin}"
RUNS="${RUNS:-5}"
SIZE="${SIZE:-1024}"
[[ "${1:-}" == "--quick" ]] && SIZE=128 RUNS=1
bash "$ROOT/scripts/bootstrap-bench.sh"
mkdir -p "$OUT"

"$BIN/hpvm-cc" -O3 "$ROOT/examples/hpvm-c/sgemm.c" -o "$OUT/sgemm_lanes"
"$BIN/hpvm-cc" -O3 -fno-hpvm-lanes "$ROOT/examples/hpvm-c/sgemm.c" -o "$OUT/sgemm_scalar"
gcc -O3 -march=native -fopenmp "$HERE/sgemm_peers.c" -o "$OUT/sgemm_peers" -lopenblas

threads=$(nproc)
echo "# SIMD across instances: $(date -u '+%Y-%m-%d %H:%M UTC') on $threads CPUs:" \
     "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
gflops() { sed 's/.*(\([0-9.]*\) GFLOP\/s).*/\1/' <<<"$1"; }
lanes=$("$OUT/sgemm_lanes" "$SIZE" "$SIZE" "$SIZE" "$RUNS")
scalar=$("$OUT/sgemm_scalar" "$SIZE" "$SIZE" "$SIZE" "$RUNS")
blas=$(OPENBLAS_NUM_THREADS=$threads "$OUT/sgemm_peers" blas "$SIZE" "$SIZE" "$SIZE" "$RUNS")
omp=$(OMP_NUM_THREADS=$threads "$OUT/sgemm_peers" omp "$SIZE" "$SIZE" "$SIZE" "$RUNS")
printf '%s (lanes)\n%s (-fno-hpvm-lanes)\n%s\n%s\n' "$lanes" "$scalar" "$blas" "$omp"
grep -q "wrong=0" <<<"$lanes" && grep -q "wrong=0" <<<"$scalar" ||
  { echo "sgemm: HPVM results differ from the reference" >&2; exit 1; }
awk -v l="$(gflops "$lanes")" -v s="$(gflops "$scalar")" -v b="$(gflops "$blas")" \
    -v o="$(gflops "$omp")" 'BEGIN {
  printf "sgemm: lanes %.2f GFLOP/s = %.2fx instance by instance, %.0f%% of OpenBLAS, %.2fx the OpenMP simd loop nest\n",
         l, l / s, 100 * l / b, l / o }'
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
