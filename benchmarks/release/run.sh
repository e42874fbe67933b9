#!/usr/bin/env bash
# run.sh - programs written as the HPVM release writes them (HPVM-C, unchanged), compiled by
# hpvm-cc -O3, against the same computation (one shared point function) called over the same
# grids by an OpenMP loop nest (clang-22 -O3 -fopenmp), against hpvm-cc with nested grids
# not collapsed (convert-hpvm-to-cpu{collapse-grids=false}: one runtime parallel-for per tile),
# and against hpvm-cc -fno-hpvm-lanes (each instance on its own, no SIMD across instances).
# Each binary prints min / median / max of RUNS runs; the ratios printed use the medians.
# Usage: bash benchmarks/release/run.sh [--quick]     (RUNS=N, default 7; ROUNDS=N, default 3)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/benchmarks/release"
OUT="${HPVM_BENCH_OUT:-$ROOT/build/benchmarks/release}"
BIN="${HPVM_BIN:-$ROOT/build/bin}"
RUNS="${RUNS:-7}"
ROUNDS="${ROUNDS:-3}"
FLAGS=(-O3 -ffp-contract=off -I "$HERE")
mkdir -p "$OUT"

# hpvm_build NAME: the HPVM-C program as a user compiles it, and without collapsed grids.
hpvm_build() {
  "$BIN/hpvm-cc" "${FLAGS[@]}" "$HERE/$1.c" -lm -o "$OUT/$1_hpvm"
  "$BIN/hpvm-cc" "${FLAGS[@]}" --emit=hpvm "$HERE/$1.c" -o "$OUT/$1.hpvm.mlir"
  "$BIN/hpvm-opt" "--hpvm-lower-to-llvm-pipeline=collapse-grids=false" "$OUT/$1.hpvm.mlir" \
    -o "$OUT/$1_nested.mlir"
  "$BIN/hpvm-cc" -O3 "$OUT/$1_nested.mlir" -lm -o "$OUT/$1_nested"
  "$BIN/hpvm-cc" "${FLAGS[@]}" -fno-hpvm-lanes "$HERE/$1.c" -lm -o "$OUT/$1_scalar"
  clang-22 "${FLAGS[@]}" -march=native -fopenmp "$HERE/$1_omp.c" -lm -o "$OUT/$1_omp"
}
hpvm_build stencil
hpvm_build sgemm
hpvm_build spmv
hpvm_build lbm
hpvm_build cava

if [[ "${1:-}" == "--quick" ]]; then
  STENCIL=(66 34 10 2 1)
  SGEMM=(64 32 16 1)
  SPMV=(1000 2 1)
  LBM=(18 10 6 2 1)
  CAVA=(37 45 1 1)
  ROUNDS=1
else
  STENCIL=(258 258 66 20 "$RUNS")
  SGEMM=(1024 1024 512 "$RUNS")
  SPMV=(200000 20 "$RUNS")
  LBM=(120 120 64 10 "$RUNS")
  CAVA=(480 640 4 "$RUNS")
fi
echo "# release-style programs: $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) CPUs:" \
     "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
# compare NAME ARGS...: runs the four versions in turn, ROUNDS times (the versions alternate,
# so that a slow spell of this shared machine falls on all of them), and prints per round each
# version's line, then the ratios to OpenMP of the medians of the rounds' medians, with the
# range (min / max) of the per-round ratios of HPVM to OpenMP.
compare() {
  local name="$1"
  shift
  local round omp hpvm nested scalar lines=""
  for round in $(seq "$ROUNDS"); do
    omp=$("$OUT/${name}_omp" "$@")
    hpvm=$("$OUT/${name}_hpvm" "$@")
    nested=$("$OUT/${name}_nested" "$@")
    scalar=$("$OUT/${name}_scalar" "$@")
    local checksums
    checksums=$(printf '%s\n%s\n%s\n%s\n' "$omp" "$hpvm" "$nested" "$scalar" |
      sed 's/.*checksum //' | sort -u | wc -l)
    [[ "$checksums" == 1 ]] || { echo "$name: the versions disagree" >&2; exit 1; }
    local block
    block=$(printf '%s\n%s\n%s\n%s\n' "$omp" "$hpvm" "$(sed 's/ hpvm:/ hpvm-nested:/' <<<"$nested")" \
      "$(sed 's/ hpvm:/ hpvm-no-lanes:/' <<<"$scalar")" | sed "s/^/[round $round] /")
    echo "$block"
    lines+="$block"$'\n'
  done
  awk -v n="$name" '
    { for (i = 1; i <= NF; ++i) if ($i == "median") m = $(i + 1)
      v = $4; sub(":", "", v); r = $2; sub("]", "", r)
      t[v, r] = m; rounds = r > rounds ? r : rounds }
    function med(v,   i, j, k, a, x) {
      for (i = 1; i <= rounds; ++i) a[i] = t[v, i]
      for (i = 1; i <= rounds; ++i) for (j = i + 1; j <= rounds; ++j) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
      return a[int((rounds + 1) / 2)]
    }
    END {
      lo = 1e30; hi = 0
      for (i = 1; i <= rounds; ++i) { q = t["hpvm", i] / t["openmp", i]; lo = q < lo ? q : lo; hi = q > hi ? q : hi }
      o = med("openmp")
      printf "%s: hpvm / openmp = %.2f (rounds %.2f to %.2f), nested grids / openmp = %.2f, no lanes / openmp = %.2f (medians of %d alternated rounds; results equal)\n",
             n, med("hpvm") / o, lo, hi, med("hpvm-nested") / o, med("hpvm-no-lanes") / o, rounds
    }' <<<"$lines"
}
compare stencil "${STENCIL[@]}"
compare sgemm "${SGEMM[@]}"
compare spmv "${SPMV[@]}"
compare lbm "${LBM[@]}"
compare cava "${CAVA[@]}"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
