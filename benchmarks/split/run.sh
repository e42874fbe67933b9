#!/usr/bin/env bash
# run.sh - one grid split across the CPU and a device: benchmarks/opencl's stencil and vadd
# (HPVM-C) with their leaves hinted CPU_OR_SPIR_TARGET (TARGET=opencl, the default) or
# CPU_OR_GPU_TARGET (TARGET=gpu), each run as
#   cpu       HPVM_DEVICE=cpu: the CPU version alone, on the runtime's threads
#   device    HPVM_SPLIT=0: the kernel alone, on the device
#   split     the grid split, the share following the measured rates
#   split+dev HPVM_SPLIT_SLOWDOWN=device:$DEVICE_FACTOR: the device's kernel takes that many
#             times as long
#   split+cpu HPVM_SPLIT_SLOWDOWN=cpu:$CPU_FACTOR: the CPU's part takes that many times as long
# (the slowdown sleeps (factor - 1) times what the part took: an injected cost, for machines
# where PoCL's device is the same cores as the CPU's threads). Each run: one warm-up launch,
# then RUNS timed launches (median ms); the share is the device's in the last split launch
# (HPVM_TRACE), with how many of the launches split (the others ran on one side: the split
# left the other under half a work-group); the checksums of every run of a program must agree
# (outputs are bit for bit the same whatever runs where). With an injected slowdown, the side
# alone would take about the factor times its own time: the table gives that product as
# "alone, slowed" (for the device, its whole time: an upper bound, its copies are not slowed).
# (benchmarks/opencl's sgemm does not split: its CPU version is a contraction plan.)
# Usage: bash benchmarks/split/run.sh [--quick]   (TARGET, RUNS=N (default 15),
# DEVICE_FACTOR (4), CPU_FACTOR (16))
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SRC="$ROOT/benchmarks/opencl"
OUT="${HPVM_BENCH_OUT:-$ROOT/build/benchmarks/split}"
BIN="${HPVM_BIN:-$ROOT/build/bin}"
TARGET="${TARGET:-opencl}"
RUNS="${RUNS:-15}"
DEVICE_FACTOR="${DEVICE_FACTOR:-4}"
CPU_FACTOR="${CPU_FACTOR:-16}"
STENCIL=(256 256 64)
VADD=(4194304)
if [[ "${1:-}" == "--quick" ]]; then
  RUNS=5
  STENCIL=(64 64 32)
  VADD=(65536)
fi
HINT=CPU_OR_SPIR_TARGET
[[ "$TARGET" == gpu ]] && HINT=CPU_OR_GPU_TARGET
mkdir -p "$OUT"

for p in stencil vadd; do
  sed "s/__hpvm__hint(GPU_TARGET)/__hpvm__hint($HINT)/" "$SRC/$p.c" > "$OUT/$p.c"
  "$BIN/hpvm-cc" --target="$TARGET" -O3 -ffp-contract=off -I "$SRC" "$OUT/$p.c" \
    -o "$OUT/$p" 2>"$OUT/$p.log" || { cat "$OUT/$p.log" >&2; exit 1; }
done

# run PROGRAM ARGS... -> "median share checksum": share is the device's in the last launch
# that split and how many of the 1 + RUNS launches did ("-" when none)
run() {
  local log="$OUT/run.log"
  env HPVM_TRACE=1 "$@" >"$log.out" 2>"$log.err"
  local median checksum share splits
  median=$(sed -n 's/.* median \([0-9.]*\) ms .*/\1/p' "$log.out")
  checksum=$(sed -n 's/.* checksum \(.*\)$/\1/p' "$log.out")
  share=$(grep -o '(split [0-9.]*)' "$log.err" | tail -1 | tr -dc '0-9.' || true)
  splits=$(grep -c '(split [0-9.]*)' "$log.err" || true)
  [[ -n "$share" ]] && share="$share,$splits/$((RUNS + 1))"
  echo "$median ${share:--} $checksum"
}

printf '| program | device | cpu ms | device ms | split ms (share) | '
printf 'device %sx slower: split ms (share), alone slowed | ' "$DEVICE_FACTOR"
printf 'cpu %sx slower: split ms (share), alone slowed |\n' "$CPU_FACTOR"
printf '|---|---|---|---|---|---|---|\n'
for p in stencil vadd; do
  if [[ $p == vadd ]]; then args=("${VADD[@]}"); else args=("${STENCIL[@]}"); fi
  read -r cpu _ sum_cpu < <(run HPVM_DEVICE=cpu "$OUT/$p" "${args[@]}" "$RUNS")
  read -r dev _ sum_dev < <(run HPVM_SPLIT=0 "$OUT/$p" "${args[@]}" "$RUNS")
  read -r split share sum_split < <(run "$OUT/$p" "${args[@]}" "$RUNS")
  read -r slow_dev share_dev sum_a < <(run HPVM_SPLIT_SLOWDOWN="device:$DEVICE_FACTOR" \
                                        "$OUT/$p" "${args[@]}" "$RUNS")
  read -r slow_cpu share_cpu sum_b < <(run HPVM_SPLIT_SLOWDOWN="cpu:$CPU_FACTOR" \
                                        "$OUT/$p" "${args[@]}" "$RUNS")
  for sum in "$sum_dev" "$sum_split" "$sum_a" "$sum_b"; do
    [[ "$sum" == "$sum_cpu" ]] || { echo "$p: checksum $sum differs from $sum_cpu" >&2; exit 1; }
  done
  device=$(grep -o "on [a-z]*:[^ ]*" "$OUT/run.log.err" | head -1 | cut -c4-)
  printf '| %s %s | %s | %s | %s | %s (%s) | %s (%s), %.1f | %s (%s), %.1f |\n' \
    "$p" "${args[*]}" "${device:-none}" "$cpu" "$dev" "$split" "$share" \
    "$slow_dev" "$share_dev" "$(echo "$dev * $DEVICE_FACTOR" | bc -l)" \
    "$slow_cpu" "$share_cpu" "$(echo "$cpu * $CPU_FACTOR" | bc -l)"
done
