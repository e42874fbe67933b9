#!/usr/bin/env bash
# run_cpu.sh - builds the HPVM CPU benchmarks with hpvm-cc (HPVM graphs from examples/, OpenMP and
# sequential C from benchmarks/ built by gcc -O3 -march=native -fopenmp) and runs each: HPVM,
# OpenMP and sequential versions alternate in one process, RUNS times (at least 5 for figures);
# min / median / max of times and of the per-run ratios are printed, with the date and the load
# (uptime) before and after. scripts/perf-tables.py turns the output into docs/Performance.md's table.
# Usage: bash benchmarks/hpvm/run_cpu.sh [--quick|--demo]   (RUNS=N, default 5)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="$ROOT/build/benchmarks/hpvm"
CC_FLAGS=(-std=c11 -O3 -march=native -fopenmp -ffp-contract=off -Wall -Wextra)
HPVM_CC="$ROOT/build/bin/hpvm-cc"
RUNS="${RUNS:-5}"
mkdir -p "$OUT"

# build NAME EXAMPLE REFERENCE_DIR REFERENCE_C
build() {
  gcc "${CC_FLAGS[@]}" -c "$ROOT/benchmarks/$3/$4" -o "$OUT/$1_ref.o"
  "$HPVM_CC" -O3 -ffp-contract=off "$ROOT/examples/$2" "$ROOT/benchmarks/hpvm/$1_bench.c" \
    "$OUT/$1_ref.o" -I "$ROOT/benchmarks/$3" -I "$ROOT/benchmarks/common" \
    -I "$ROOT/benchmarks/hpvm" -I "$ROOT/examples" -lgomp -lm -o "$OUT/$1_bench"
}
build sgemm sgemm.mlir sgemm sgemm_ref.c
build stencil stencil.mlir stencil stencil_ref.c
build edge edge_detection.mlir edge edge_ref.c
# The same pipeline after hpvm-fuse-nodes (greedy): fused vs unfused.
"$ROOT/build/bin/hpvm-opt" --hpvm-fuse-nodes=greedy=true "$ROOT/examples/edge_detection.mlir" \
  -o "$OUT/edge_detection_fused.mlir"
"$HPVM_CC" -O3 -ffp-contract=off "$OUT/edge_detection_fused.mlir" "$ROOT/benchmarks/hpvm/edge_bench.c" \
  "$OUT/edge_ref.o" -I "$ROOT/benchmarks/edge" -I "$ROOT/benchmarks/common" \
  -I "$ROOT/benchmarks/hpvm" -I "$ROOT/examples" -lgomp -lm -o "$OUT/edge_fused_bench"

# Untiled sgemm (one leaf over the C grid) against the same program after hpvm-tile-nodes (64x4
# tiles; the CPU backend runs each tile row of 64 instances in lock-step as vector code).
sed 's/@sgemm(/@sgemm_flat(/' "$ROOT/examples/sgemm_flat.mlir" > "$OUT/sgemm_flat.mlir"
"$ROOT/build/bin/hpvm-opt" --hpvm-tile-nodes="nodes=mm_element sizes=64,4" "$ROOT/examples/sgemm_flat.mlir" \
  | sed 's/@sgemm(/@sgemm_tiled(/' > "$OUT/sgemm_tiled.mlir"
"$HPVM_CC" -O3 -ffp-contract=off "$OUT/sgemm_flat.mlir" "$OUT/sgemm_tiled.mlir" \
  "$ROOT/benchmarks/hpvm/sgemm_tiling_bench.c" "$OUT/sgemm_ref.o" -I "$ROOT/benchmarks/sgemm" \
  -I "$ROOT/benchmarks/common" -I "$ROOT/benchmarks/hpvm" -I "$ROOT/examples" -lgomp -lm \
  -o "$OUT/sgemm_tiling_bench"

# The Parboil-style sgemm written in HPVM-C, compiled unchanged by hpvm-cc.
"$HPVM_CC" -O3 -ffp-contract=off "$ROOT/examples/hpvm-c/sgemm.c" -o "$OUT/hpvmc_sgemm"

echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# runs: $RUNS; uptime before: $(uptime)"
if [[ "${1:-}" == "--quick" ]]; then
  "$OUT/sgemm_bench" 256 256 256 --runs 1
  "$OUT/stencil_bench" 32 32 32 4 --runs 1
  "$OUT/edge_bench" 128 128 4 2 --runs 1
  "$OUT/edge_fused_bench" 128 128 4 2 --runs 1
  "$OUT/sgemm_tiling_bench" 256 256 256 --runs 1
  "$OUT/hpvmc_sgemm" 256 256 256 1
elif [[ "${1:-}" == "--demo" ]]; then
  "$OUT/sgemm_bench" 512 512 512 --runs 3
  "$OUT/stencil_bench" 128 128 128 20 --runs 3
  "$OUT/edge_bench" 1280 1280 4 4 --runs 3
  "$OUT/sgemm_tiling_bench" 512 512 512 --runs 3
  "$OUT/hpvmc_sgemm" 512 512 512 3
else
  "$OUT/sgemm_bench" 1024 1024 1024 --runs "$RUNS"
  "$OUT/stencil_bench" 128 128 128 100 --runs "$RUNS"
  "$OUT/edge_bench" 1280 1280 8 4 --runs "$RUNS"
  echo "# the same pipeline after hpvm-fuse-nodes (laplacian and gradient fused):"
  "$OUT/edge_fused_bench" 1280 1280 8 4 --runs "$RUNS"
  echo "# untiled sgemm against the same program after hpvm-tile-nodes (sizes=64,4):"
  "$OUT/sgemm_tiling_bench" 1024 1024 1024 --runs "$RUNS"
  echo "# the Parboil-style HPVM-C sgemm (examples/hpvm-c/sgemm.c) against its sequential loop nest:"
  "$OUT/hpvmc_sgemm" 1024 1024 1024 "$RUNS"
fi
echo "# uptime after: $(uptime)"
