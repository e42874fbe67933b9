#!/usr/bin/env bash
# run.sh - SIMD across instances (hpvm-vectorize): the naive HPVM-C sgemm of
# examples/hpvm-c (one instance per element of C, 16x8 tiles), compiled by hpvm-cc -O3 with its
# instances run as vector lanes (the default) and one by one (-fno-hpvm-lanes), against
# OpenBLAS's cblas_sgemm and the same naive loop nest written by hand with OpenMP threads and
# `#pragma omp simd` (gcc -O3 -march=native -fopenmp), on the same inputs, in one run. Then the
# sgemm and stencil of benchmarks/opencl (HPVM-C) compiled for the CPU by hpvm-cc against the
# hand-written OpenCL C of the same kernels on PoCL's CPU device (skipped without OpenCL).
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
source "$ROOT/scripts/openblas-coretype.sh"
mkdir -p "$OUT"

"$BIN/hpvm-cc" -O3 "$ROOT/examples/hpvm-c/sgemm.c" -o "$OUT/sgemm_lanes"
"$BIN/hpvm-cc" -O3 -fno-hpvm-lanes "$ROOT/examples/hpvm-c/sgemm.c" -o "$OUT/sgemm_scalar"
gcc -O3 -march=native -fopenmp -I "$ROOT/benchmarks/common" "$HERE/sgemm_peers.c" \
  -o "$OUT/sgemm_peers" -lopenblas

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

# The same kernels as hand-written OpenCL C on PoCL (a vectorizing OpenCL CPU compiler).
OCL="$ROOT/benchmarks/opencl"
if clang-22 -O3 -ffp-contract=off -I "$OCL" "$OCL/sgemm_cl.c" -lOpenCL -o "$OUT/sgemm_cl" 2>/dev/null &&
   clang-22 -O3 -ffp-contract=off -I "$OCL" "$OCL/stencil_cl.c" -lOpenCL -o "$OUT/stencil_cl" 2>/dev/null &&
   "$OUT/sgemm_cl" 16 16 16 1 >/dev/null 2>&1; then
  median() { sed 's/.*median \([0-9.]*\) ms.*/\1/' <<<"$1"; }
  for p in sgemm stencil; do
    "$BIN/hpvm-cc" -O3 -ffp-contract=off -I "$OCL" "$OCL/$p.c" -o "$OUT/${p}_cpu"
  done
  if [[ "$SIZE" == 128 ]]; then SG=(64 32 16); ST=(66 34 10); else SG=(1024 1024 512); ST=(258 258 66); fi
  for round in 1 2 3; do
    for p in sgemm stencil; do
      if [[ $p == sgemm ]]; then args=("${SG[@]}" 5); else args=("${ST[@]}" 11); fi
      hpvm=$("$OUT/${p}_cpu" "${args[@]}")
      cl=$("$OUT/${p}_cl" "${args[@]}")
      [[ "${hpvm##*checksum }" == "${cl##*checksum }" ]] ||
        { echo "$p: HPVM on the CPU and OpenCL disagree" >&2; exit 1; }
      printf '%s (cpu, lanes)\n%s (PoCL)\n' "$hpvm" "$cl"
      awk -v p="$p" -v r="$round" -v h="$(median "$hpvm")" -v c="$(median "$cl")" \
        'BEGIN { printf "%s round %d: hpvm on the cpu / hand-written OpenCL on PoCL = %.2f (medians; results equal)\n", p, r, h / c }'
    done
  done
else
  echo "# hand-written OpenCL on PoCL: skipped (no OpenCL development files or device)"
fi
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
