#!/usr/bin/env bash
# run.sh - HPVM-C programs compiled by hpvm-cc --target=opencl (leaves hinted GPU_TARGET run
# as OpenCL kernels) against hand-written OpenCL C kernels of the same algorithms (host in C
# calling OpenCL directly, kernel built with clCreateProgramWithSource), on the same OpenCL
# device (the first one the ICD loader lists: PoCL's CPU device here), with the same data,
# grid and work-group sizes (256; 16x16; 8x8x4; clamped to the grid, as HPVM's runtime).
# What is timed, in both: RUNS repetitions of one launch + wait with the data resident on
# the device, after one untimed warm-up launch (for HPVM the first launch loads the module:
# SPIR-V -> SPIR 1.2 through llvm-spirv, then PoCL's build; for the hand-written version the
# program is built before it). Copies in and out are outside the timing in both. Each binary
# prints min / median / max and a checksum of the result; the checksums must agree. The two
# versions run in turn ROUNDS times (default 3) and the table takes each one's lowest median:
# on a small shared machine, other load can halve the cores PoCL gets for a whole run.
# Usage: bash benchmarks/opencl/run.sh [--quick]   (RUNS=N, default 11; ROUNDS=N, default 3)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/benchmarks/opencl"
OUT="${HPVM_BENCH_OUT:-$ROOT/build/benchmarks/opencl}"
BIN="${HPVM_BIN:-$ROOT/build/bin}"
RUNS="${RUNS:-11}"
ROUNDS_ENV="${ROUNDS:-}"
ROUNDS="${ROUNDS:-3}"
CC="${CC_OPENCL_HOST:-clang-22}"
FLAGS=(-O3 -ffp-contract=off -I "$HERE")
mkdir -p "$OUT"

skip() { echo "# OpenCL (PoCL) vs hand-written OpenCL: skipped: $*"; exit 0; }

# The hand-written versions first: without OpenCL headers, loader or a device, skip.
for p in vadd stencil sgemm sgemm_tiled; do
  "$CC" "${FLAGS[@]}" "$HERE/${p}_cl.c" -lOpenCL -o "$OUT/${p}_cl" 2>"$OUT/${p}_cl.log" ||
    skip "no OpenCL development files (CL/cl.h, -lOpenCL): see $OUT/${p}_cl.log"
done
DEVICE=$("$OUT/vadd_cl" --probe 2>/dev/null) || skip "no OpenCL device"
for p in vadd stencil sgemm sgemm_tiled; do
  # sgemm_tiled's tile has no CPU version (barriers in a loop): hpvm-cc says so.
  "$BIN/hpvm-cc" --target=opencl "${FLAGS[@]}" "$HERE/$p.c" -o "$OUT/${p}_hpvm" 2>"$OUT/${p}_hpvm.log" ||
    { cat "$OUT/${p}_hpvm.log" >&2; exit 1; }
done

if [[ "${1:-}" == "--quick" ]]; then
  RUNS=3
  ROUNDS="${ROUNDS_ENV:-1}"
  VADD=(1000000)
  STENCIL=(66 34 10)
  SGEMM=(64 32 16)
else
  VADD=(16777216)
  STENCIL=(258 258 66)
  SGEMM=(1024 1024 512)
fi

# Each HPVM program's leaf must have run on the OpenCL device, not on the CPU fallback.
check_device() {
  local trace
  trace=$(HPVM_TRACE=1 "$OUT/${1}_hpvm" "${@:2}" 2>&1 >/dev/null | grep 'hpvm-trace:' | sort -u)
  if ! grep -q ' on opencl:' <<<"$trace" || grep -qv ' on opencl:' <<<"$trace"; then
    echo "$1: the HPVM leaf did not run on the OpenCL device:" >&2
    echo "$trace" >&2
    exit 1
  fi
}
check_device vadd 1000 1
check_device stencil 18 10 6 1
check_device sgemm 40 24 8 1
check_device sgemm_tiled 40 24 8 1

echo "# OpenCL (PoCL) vs hand-written OpenCL: $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) CPUs:" \
     "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# device: $DEVICE; timed: median of $RUNS x (launch + wait), data resident, after a warm-up launch;" \
     "$ROUNDS alternating rounds"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
TABLE=()
median() { sed 's/.*median \([0-9.]*\) ms.*/\1/' <<<"$1"; }
# compare NAME SIZE ARGS...: runs both versions in turn, ROUNDS times (alternating, so that
# other load on the machine hits both alike), checks every checksum against the first, and
# adds a table row with the lowest median of each version.
compare() {
  local name="$1" size="$2"
  shift 2
  local hpvm cl sum="" h="" c="" round
  for ((round = 0; round < ROUNDS; ++round)); do
    hpvm=$("$OUT/${name}_hpvm" "$@" "$RUNS")
    cl=$("$OUT/${name}_cl" "$@" "$RUNS")
    printf '%s\n%s\n' "$hpvm" "$cl"
    for line in "$hpvm" "$cl"; do
      [[ -z "$sum" ]] && sum=$(sed 's/.*checksum //' <<<"$line")
      [[ "$(sed 's/.*checksum //' <<<"$line")" == "$sum" ]] ||
        { echo "$name: checksums disagree: $line (expected $sum)" >&2; exit 1; }
    done
    h=$(awk -v a="$h" -v b="$(median "$hpvm")" 'BEGIN { print (a == "" || b < a) ? b : a }')
    c=$(awk -v a="$c" -v b="$(median "$cl")" 'BEGIN { print (a == "" || b < a) ? b : a }')
  done
  TABLE+=("$(awk -v n="$name" -v s="$size" -v h="$h" -v c="$c" \
    'BEGIN { printf "%-11s %-14s %12.3f %16.3f %7.2f", n, s, h, c, h / c }')")
}
compare vadd "n=${VADD[0]}" "${VADD[@]}"
compare stencil "$(IFS=x; echo "${STENCIL[*]}")" "${STENCIL[@]}"
compare sgemm "$(IFS=x; echo "${SGEMM[*]}")" "${SGEMM[@]}"
compare sgemm_tiled "$(IFS=x; echo "${SGEMM[*]}")" "${SGEMM[@]}"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
printf '%-11s %-14s %12s %16s %7s\n' program size "HPVM ms" "hand-written ms" ratio
printf '%s\n' "${TABLE[@]}"
echo "(lowest of $ROUNDS alternating rounds of each version's median of $RUNS; ratio = HPVM / hand-written; checksums equal)"
