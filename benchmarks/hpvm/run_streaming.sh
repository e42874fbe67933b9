#!/usr/bin/env bash
# run_streaming.sh - the per-item cost of a streaming graph: the 6-stage edge-detection pipeline
# (examples/edge_detection.mlir) on many small frames, where the runtime's per-item work (ring
# hand-offs between stage threads, a parallel-for per stage and frame) dominates, against the
# same leaves called in sequence and against OpenMP. Prints the time per frame and per item per
# stage; each version runs RUNS times (min / median / max in the binary's report is the median).
# Usage: bash benchmarks/hpvm/run_streaming.sh [--quick]     (RUNS=N, default 5)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="$ROOT/build/benchmarks/hpvm"
RUNS="${RUNS:-5}"
FRAMES=20000
[[ "${1:-}" == "--quick" ]] && FRAMES=200 && RUNS=1
mkdir -p "$OUT"
gcc -std=c11 -O3 -march=native -fopenmp -ffp-contract=off -c "$ROOT/benchmarks/edge/edge_ref.c" \
  -o "$OUT/edge_ref_streaming.o"
"$ROOT/build/bin/hpvm-cc" -O3 -ffp-contract=off "$ROOT/examples/edge_detection.mlir" \
  "$ROOT/benchmarks/hpvm/edge_bench.c" "$OUT/edge_ref_streaming.o" -I "$ROOT/benchmarks/edge" \
  -I "$ROOT/benchmarks/common" -I "$ROOT/benchmarks/hpvm" -I "$ROOT/examples" -lgomp -lm \
  -o "$OUT/edge_streaming_bench"
echo "# streaming per-item cost: $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for size in 16 64; do
  report=$("$OUT/edge_streaming_bench" "$size" "$size" "$FRAMES" 4 --runs "$RUNS")
  echo "$report"
  awk -v frames="$FRAMES" -v size="$size" '
    / hpvm / { for (i = 1; i <= NF; ++i) if ($i ~ /^median_ms=/) { split($i, a, "="); h = a[2] } }
    / seq / { for (i = 1; i <= NF; ++i) if ($i ~ /^median_ms=/) { split($i, a, "="); s = a[2] } }
    END { printf "streaming %dx%d: %.2f us per frame through the graph (%.2f us per item per stage), %.2f us sequential; throughput %.2fx sequential\n",
                 size, size, h * 1000 / frames, h * 1000 / frames / 6, s * 1000 / frames, s / h }' <<<"$report"
done
