#!/usr/bin/env bash
# run.sh - the CPU at its limit (docs/Performance.md, "Products at the machine's limit"):
# this machine's peaks (f32 multiply-adds on every thread, triad bandwidth), then the runtime's
# products (the exact contraction a compiled HPVM-C sgemm calls, and the tensor nodes' matmul)
# against OpenBLAS on every ISA the CPU has (HPVM_TENSOR_ISA): each version in a process of its
# own, the versions alternated, ROUNDS rounds.
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
peaks=$("$OUT/gemm_bench" peak)
echo "$peaks"
"$OUT/gemm_bench" bandwidth
isas=(avx2)
grep -qw avx512f /proc/cpuinfo && isas=(avx512 avx2)
grep -qw avx2 /proc/cpuinfo || isas=(generic)
log="$OUT/products.txt"
: >"$log"
for isa in "${isas[@]}"; do
  # OpenBLAS at the same ISA as the runtime's kernels, for the ratio at each.
  core=${OPENBLAS_CORETYPE:-}
  [[ $isa == avx2 && -n "$core" ]] && core=Haswell
  for round in $(seq "$ROUNDS"); do
    for version in contract matmul openblas; do
      # OpenBLAS starts its threads when it is loaded, and they spin a while: in the processes
      # of the runtime's versions it gets one thread (none started), or they slow the first call.
      threads=$(nproc)
      [[ $version == openblas ]] || threads=1
      HPVM_TENSOR_ISA=$isa OPENBLAS_CORETYPE=$core OPENBLAS_NUM_THREADS=$threads \
        "$OUT/gemm_bench" product $version "$SIZE" "$SIZE" "$SIZE" "$RUNS" |
        sed "s/^/[$isa] round $round: /" | tee -a "$log"
    done
  done
done
# Per ISA and version: the range over rounds of each round's median, and the ratio of the
# median of medians to OpenBLAS's (the goal: >= 0.90).
awk -v peaks="$peaks" 'BEGIN {
  # "peak f32 multiply-add avx512: 290.0 GFLOP/s ..." lines: the roofline of each ISA.
  np = split(peaks, pl, "\n")
  for (i = 1; i <= np; ++i) if (split(pl[i], w, " ") >= 5) { isa = w[4]; sub(":", "", isa); peak["[" isa "]"] = w[5] }
}
{
  isa = $1; v = $4; for (i = 1; i <= NF; ++i) if ($i == "median") md = $(i + 1)
  key = isa " " v; n[key]++; m[key, n[key]] = md; isas[isa] = 1
} END {
  for (isa in isas) {
    for (vi = 1; vi <= 3; ++vi) {
      v = vi == 1 ? "contract" : vi == 2 ? "matmul" : "openblas"; key = isa " " v
      if (!n[key]) continue
      cnt = n[key]; for (i = 1; i <= cnt; ++i) a[i] = m[key, i]
      for (i = 1; i <= cnt; ++i) for (j = i + 1; j <= cnt; ++j) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      med[key] = a[int((cnt + 1) / 2)]
      gf = 2 * size * size * size / med[key] * 1e-6
      printf "%s %s: medians %.2f / %.2f / %.2f ms (min / median / max of %d rounds), %.1f GFLOP/s = %.0f%% of the measured peak (%.1f)\n", isa, v, a[1], med[key], a[cnt], cnt, gf, (peak[isa] > 0 ? 100 * gf / peak[isa] : 0), peak[isa]
    }
    ob = med[isa " openblas"]
    for (vi = 1; vi <= 2; ++vi) {
      v = vi == 1 ? "contract" : "matmul"
      if (ob > 0 && med[isa " " v] > 0)
        printf "%s %s: %.2f of OpenBLAS (time ratio %.2f)\n", isa, v, ob / med[isa " " v], med[isa " " v] / ob
    }
  }
}' size="$SIZE" "$log"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
