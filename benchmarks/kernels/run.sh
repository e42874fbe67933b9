#!/usr/bin/env bash
# run.sh - the CPU at its limit (issue-tracked in docs/Performance.md, "At the machine's limit"):
# this machine's peaks (f32 multiply-adds on every thread, triad bandwidth), then the runtime's
# products (the exact contraction a compiled HPVM-C sgemm calls, and the tensor nodes' matmul)
# against OpenBLAS on every ISA the CPU has (HPVM_TENSOR_ISA), rounds alternated in one process.
# Usage: bash benchmarks/kernels/run.sh [--quick]     (ROUNDS=R RUNS=N SIZE=S; defaults 3 5 1024)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${HPVM_BENCH_OUT:-$ROOT/build/benchmarks/kernels}"
ROUNDS="${ROUNDS:-3}" RUNS="${RUNS:-5}" SIZE="${SIZE:-1024}"
[[ "${1:-}" == "--quick" ]] && ROUNDS=1 RUNS=1 SIZE=256
bash "$ROOT/scripts/bootstrap-bench.sh"
source "$ROOT/scripts/openblas-coretype.sh"
mkdir -p "$OUT"
ninja -C "$ROOT/build" hpvm_rt >/dev/null
lib="$ROOT/build/runtime/libhpvm_rt.a"
[[ -f "$lib" ]] || { echo "run.sh: $lib missing (make build first)" >&2; exit 1; }
gcc -O3 -pthread -I "$ROOT/benchmarks/common" -I "$ROOT/runtime/include" \
  "$ROOT/benchmarks/kernels/gemm_bench.c" "$lib" -lopenblas -lm -o "$OUT/gemm_bench"

echo "# CPU limits: $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) CPUs:" \
     "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //');" \
     "OpenBLAS core ${OPENBLAS_CORETYPE:-as detected}"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$OUT/gemm_bench" peak
"$OUT/gemm_bench" bandwidth
isas=(avx2)
grep -qw avx512f /proc/cpuinfo && isas=(avx512 avx2)
grep -qw avx2 /proc/cpuinfo || isas=(generic)
for isa in "${isas[@]}"; do
  # OpenBLAS at the same ISA as the runtime's kernels, for the ratio at each.
  core=$OPENBLAS_CORETYPE
  [[ $isa == avx2 && -n "$core" ]] && core=Haswell
  HPVM_TENSOR_ISA=$isa OPENBLAS_CORETYPE=$core "$OUT/gemm_bench" products "$SIZE" "$SIZE" "$SIZE" \
    "$ROUNDS" "$RUNS" | sed "s/^/[$isa] /"
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
