#!/usr/bin/env bash
# gpu-sanitize.sh - on a machine with an NVIDIA GPU, runs the device bundle's programs
# (scripts/gpu-device-bundle.sh) under compute-sanitizer: racecheck and synccheck on the kernels
# with work-group memory and barriers, memcheck on every program; and times one launch of a
# tiny kernel through HPVM against hand-written CUDA (the fixed cost per launch).
# Usage: bash scripts/gpu-sanitize.sh [BUNDLE]   (default build/device-bundle)
# Prints one line per run ("ok" or the sanitizer's summary) and a final count; exit 1 on errors.
set -uo pipefail
B="${1:-build/device-bundle}"
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer \
  /opt/nvidia/*/compute-sanitizer/compute-sanitizer 2>/dev/null | head -1)
fails=0 runs=0
# run TOOL NAME COMMAND...: one program under one tool (errors make it exit non-zero).
run() {
  local tool="$1" name="$2" out
  shift 2
  runs=$((runs + 1))
  if out=$(timeout 120 "$SAN" --tool "$tool" --error-exitcode 99 "$@" 2>&1); then
    echo "$tool $name: ok ($(grep -m1 -E '(ERROR|RACECHECK) SUMMARY' <<<"$out" | sed 's/^========= //'))"
  elif grep -q 'terminated before first instrumented API call' <<<"$out"; then
    echo "$tool $name: no CUDA call (its nodes run on the CPU)" # the tensor programs
  else
    fails=$((fails + 1))
    echo "$tool $name: FAILED"
    grep -m12 -E '=========' <<<"$out" | sed 's/^/    /'
  fi
}

echo "# launch cost: vadd of 256 elements, 2001 launches, HPVM / CUDA alternated"
for round in 1 2 3; do
  "$B/bench/vadd_hpvm" 256 2001
  "$B/bench/vadd_cuda" 256 2001
done
[[ -x "$SAN" ]] || { echo "no compute-sanitizer found"; exit 1; }
echo "# $("$SAN" --version | tail -1)"
for tool in racecheck synccheck; do
  for p in tile_reduction transpose_2d coarsened contraction extent_select; do
    run "$tool" "$p" "$B/programs/$p.c.gpu"
  done
  run "$tool" sgemm_tiled "$B/bench/sgemm_tiled_hpvm" 40 24 8 1
  run "$tool" sgemm_blocked "$B/bench/sgemm_blocked_hpvm" 140 130 9 1
  run "$tool" examples/sgemm "$B/examples/sgemm" 100 70 33
done
for exe in "$B"/programs/*.gpu; do
  run memcheck "$(basename "$exe" .gpu)" "$exe"
done
run memcheck edge "$B/bench/edge_hpvm" 64 48 3 2 1
echo "sanitizer: $((runs - fails)) of $runs ok"
exit $((fails > 0))
