#!/usr/bin/env bash
# run.sh - compile time against graph size: generated programs of N distinct leaves under one
# internal node (wide), N nodes in a chain of one-to-one edges (chain) and N internal nodes
# nested in each other (nested), each parsed and verified only (verify), through hpvm-opt's
# CPU pipeline (hpvm-lower-to-cpu-pipeline) and through the full pipeline to the llvm
# dialect; the time per node must not grow with N (linear compile time).
# Usage: bash benchmarks/scaling/run.sh [--quick]      (RUNS=N, default 3: min / median / max)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="$ROOT/build/benchmarks/scaling"
OPT="$ROOT/build/bin/hpvm-opt"
RUNS="${RUNS:-3}"
SIZES=(1000 3000 10000)
[[ "${1:-}" == "--quick" ]] && SIZES=(100 300) && RUNS=1
mkdir -p "$OUT"
echo "# compile-time scaling: $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for shape in wide chain nested; do
  for n in "${SIZES[@]}"; do
    python3 "$ROOT/benchmarks/scaling/gen_graph.py" "$shape" "$n" > "$OUT/$shape$n.mlir"
    for pipeline in verify hpvm-lower-to-cpu-pipeline hpvm-lower-to-llvm-pipeline; do
      times=()
      pass=("--$pipeline")
      [[ "$pipeline" == verify ]] && pass=()
      for ((r = 0; r < RUNS; ++r)); do
        start=$EPOCHREALTIME
        "$OPT" "${pass[@]}" "$OUT/$shape$n.mlir" -o /dev/null
        times+=("$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')")
      done
      sorted=$(printf '%s\n' "${times[@]}" | sort -g)
      min=$(head -1 <<<"$sorted"); max=$(tail -1 <<<"$sorted")
      median=$(sed -n "$(( (RUNS + 1) / 2 ))p" <<<"$sorted")
      awk -v s="$shape" -v n="$n" -v p="$pipeline" -v a="$min" -v m="$median" -v b="$max" -v r="$RUNS" \
        'BEGIN { printf "%-6s %6d nodes %-28s min %6.2f s median %6.2f s max %6.2f s (%d runs) %.1f us/node\n", s, n, p, a, m, b, r, m / n * 1e6 }'
    done
  done
done
