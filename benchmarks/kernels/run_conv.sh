#!/usr/bin/env bash
# run_conv.sh - the convolutions of whole models, layer by layer: the runtime's kernels against
# oneDNN's (conv_layers.c), each side in a process of its own, the sides alternated, ROUNDS
# rounds; per layer the median over the rounds of each side's median, and oneDNN's time over
# hpvm's (above 1: hpvm faster) with oneDNN's own layouts and with the reorders from and to
# NCHW that a graph of NCHW tensors would add around it.
# Usage: bash benchmarks/kernels/run_conv.sh [SET...]    (ROUNDS=R RUNS=N THREADS=T;
#        sets: resnet18 resnet50 mobilenet_v2, default all; defaults 3 rounds, 10 runs, 1 thread)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${HPVM_BENCH_OUT:-$ROOT/build/benchmarks/kernels}"
ROUNDS="${ROUNDS:-3}" RUNS="${RUNS:-10}" THREADS="${THREADS:-1}"
SETS=("$@")
[[ ${#SETS[@]} -eq 0 ]] && SETS=(resnet18 resnet50 mobilenet_v2)
bash "$ROOT/scripts/bootstrap-bench.sh"
mkdir -p "$OUT"
ninja -C "$ROOT/build" hpvm_rt >/dev/null
gcc -O2 -pthread -DHAVE_DNNL -I "$ROOT/runtime/include" "$ROOT/benchmarks/kernels/conv_layers.c" \
  "$ROOT/build/runtime/libhpvm_rt.a" -ldnnl -lm -ldl -o "$OUT/conv_layers"
echo "# convolutions layer by layer: $(date -u '+%Y-%m-%d %H:%M UTC'), $THREADS thread(s)," \
     "$ROUNDS rounds of $RUNS calls; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for set in "${SETS[@]}"; do
  log="$OUT/conv_$set.txt"
  : >"$log"
  for round in $(seq "$ROUNDS"); do
    HPVM_NUM_THREADS=$THREADS "$OUT/conv_layers" hpvm "$set" "$RUNS" >>"$log"
    OMP_NUM_THREADS=$THREADS "$OUT/conv_layers" onednn "$set" "$RUNS" >>"$log"
  done
  echo "## $set: ms per call (medians over rounds), onednn / hpvm"
  # Lines: "hpvm   NAME... MS ms GF GFLOP/s" and "onednn NAME... MS ms GF GFLOP/s   with NCHW
  # reorders MS ms GF GFLOP/s"; the layer's name is the text between the side and the first
  # number followed by "ms".
  awk '
    function median(list,   n, a, i, j, t) {
      n = split(list, a, " ")
      for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    {
      side = $1; name = ""; for (i = 2; i <= NF; ++i) { if ($(i + 1) == "ms") break; name = name (name == "" ? "" : " ") $i }
      if (!(name in seen)) { seen[name] = 1; order[++layers] = name }
      if (side == "hpvm") h[name] = h[name] " " $(i)
      else { o[name] = o[name] " " $(i); for (k = i + 1; k <= NF; ++k) if ($k == "reorders") { r[name] = r[name] " " $(k + 1); break } }
    }
    END {
      printf "| layer | hpvm | onednn | onednn / hpvm | onednn + NCHW reorders | / hpvm |\n|---|---|---|---|---|---|\n"
      for (l = 1; l <= layers; ++l) {
        n = order[l]; hm = median(h[n]); om = median(o[n]); rm = median(r[n])
        printf "| %s | %.3f | %.3f | %.2f | %.3f | %.2f |\n", n, hm, om, om / hm, rm, rm / hm
      }
    }' "$log"
done
