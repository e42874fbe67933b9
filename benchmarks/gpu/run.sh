#!/usr/bin/env bash
# run.sh - HPVM programs compiled by hpvm-cc --target=gpu (nodes hinted GPU_TARGET run as CUDA
# kernels) against the same algorithms hand-written in CUDA (nvcc -O3) and against cuBLAS, on
# one NVIDIA GPU, with the same data, grids and blocks (256; 16x16; 8x8x4; clamped to the grid,
# as HPVM's runtime picks them) and the same timing: RUNS repetitions of one launch + wait with
# the data resident on the device, after one untimed warm-up launch (for HPVM the first launch
# loads the module); copies in and out outside the timing. Every binary prints min / median /
# max and a checksum; the checksums of a row must agree. The versions of a row run in turn
# ROUNDS times and the table takes each one's lowest median.
#   vadd, stencil, sgemm (naive), sgemm_tiled (16x16 shared-memory tiles), sgemm_blocked
#   (128x128 tiles, 8x8 elements per thread from registers): HPVM / hand-written CUDA, goal
#   <= 1.10; sgemm_blocked / cuBLAS (FP32, no TF32) in GFLOP/s, goal >= 50%; the edge-detection
#   pipeline (examples/edge_detection.mlir, a streaming graph of five kernels and a CPU stage)
#   in frames/s on the GPU against the same executable on the CPU (HPVM_DEVICE=cpu).
#   The HPVM programs run the kernels' 32-bit variants (every size here fits 2^31); the rows
#   "vadd 64-bit" and "sgemm 64-bit" run the 64-bit kernels (HPVM_CUDA_NARROW=0) for comparison.
#
# Two steps, so that a GPU machine lent for minutes only runs what was built before:
#   bash benchmarks/gpu/run.sh build [--quick]   here: builds everything into OUT (default
#                                                build/benchmarks/gpu), this script included
#   bash OUT/run.sh run [--quick]                where the GPU is: runs and prints the table
#   bash benchmarks/gpu/run.sh [--quick]         both (make bench-gpu)
# Without a CUDA device the run step says so and exits 0; without nvcc the build step builds
# the HPVM versions only. (RUNS=N, default 11; ROUNDS=N, default 3; HPVM_BENCH_MARCH: a
# -march= for the HPVM programs' CPU code when they run on another machine, e.g.
# -march=x86-64-v3, as scripts/gpu-device-bundle.sh builds them.)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STEP=all
QUICK=0
for arg in "$@"; do
  case "$arg" in
    build | run | all) STEP="$arg" ;;
    --quick) QUICK=1 ;;
    *) echo "usage: run.sh [build|run|all] [--quick]" >&2; exit 2 ;;
  esac
done

if [[ "$STEP" != run ]]; then
  ROOT="$(cd "$HERE/../.." && pwd)"
  OUT="${HPVM_BENCH_OUT:-$ROOT/build/benchmarks/gpu}"
  BIN="${HPVM_BIN:-$ROOT/build/bin}"
else
  OUT="$HERE"
fi
RUNS="${RUNS:-11}"
ROUNDS="${ROUNDS:-3}"
if ((QUICK)); then
  RUNS=3
  ROUNDS=1
  VADD=(1000000)
  STENCIL=(66 34 10)
  SGEMM=(300 200 70)
  EDGE=(320 240 8 3)
else
  VADD=(67108864)
  STENCIL=(514 514 66)
  SGEMM=(4096 4096 4096)
  EDGE=(1920 1080 30 4)
fi

build() {
  mkdir -p "$OUT"
  local opencl="$ROOT/benchmarks/opencl" p
  echo "# building into $OUT"
  hpvm() { # NAME SOURCES... FLAGS...: one HPVM program for the GPU (and the CPU fallback)
    local name="$1"
    shift
    "$BIN/hpvm-cc" --target=gpu -O3 ${HPVM_BENCH_MARCH:-} "$@" -o "$OUT/${name}_hpvm" \
      2>"$OUT/${name}_hpvm.log" ||
      { cat "$OUT/${name}_hpvm.log" >&2; exit 1; }
  }
  hpvm vadd "$opencl/vadd.c" -I "$opencl"
  hpvm stencil "$opencl/stencil.c" -I "$opencl" -ffp-contract=off
  hpvm sgemm "$opencl/sgemm.c" -I "$opencl"
  # The tiled sgemms' tiles have no CPU version (barriers in a loop): hpvm-cc says so.
  hpvm sgemm_tiled "$opencl/sgemm_tiled.c" -I "$opencl"
  hpvm sgemm_blocked "$HERE/sgemm_blocked.c" -I "$HERE"
  hpvm edge "$ROOT/examples/edge_detection.mlir" "$HERE/edge_gpu.c" \
    "$ROOT/benchmarks/edge/edge_ref.c" -I "$ROOT/benchmarks/edge" -I "$ROOT/benchmarks/common" \
    -I "$ROOT/examples" -ffp-contract=off -lm
  local nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
  if [[ -x "$nvcc" ]]; then
    local arch=(-gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=sm_80
                -gencode arch=compute_80,code=compute_80)
    nv() { # NAME SOURCE FLAGS...
      local name="$1" source="$2"
      shift 2
      "$nvcc" -O3 "${arch[@]}" "$@" "$HERE/$source" -o "$OUT/$name" 2>"$OUT/$name.log" ||
        { cat "$OUT/$name.log" >&2; exit 1; }
    }
    nv vadd_cuda vadd_cuda.cu
    nv stencil_cuda stencil_cuda.cu --fmad=false
    nv sgemm_cuda sgemm_cuda.cu
    nv sgemm_tiled_cuda sgemm_cuda.cu -DSGEMM_TILED
    nv sgemm_blocked_cuda sgemm_cuda.cu -DSGEMM_BLOCKED
    nv sgemm_cublas sgemm_cuda.cu -DSGEMM_CUBLAS -lcublas
  else
    echo "# no nvcc: the hand-written CUDA versions and cuBLAS are not built"
  fi
  cp "$HERE/run.sh" "$OUT/run.sh"
  echo "# built: $(cd "$OUT" && ls | grep -v '\.log$' | tr '\n' ' ')"
}

# The libraries a binary built here may need where it runs (cuBLAS from the toolkit, or from
# the nvidia-cublas Python package).
library_path() {
  local dirs=() d
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [[ -d "$d" ]] && dirs+=("$d")
  done
  for d in $(python3 -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib"))' 2>/dev/null); do
    [[ -d "$d" ]] && dirs+=("$d")
  done
  (IFS=:; echo "${dirs[*]}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
}

run() {
  export LD_LIBRARY_PATH="$(library_path)"
  local device
  if [[ -x "$OUT/vadd_cuda" ]]; then
    device=$("$OUT/vadd_cuda" --probe 2>&1) ||
      { echo "# HPVM on the GPU vs hand-written CUDA: skipped: $device"; return 0; }
  else
    # No baselines: the HPVM vector add itself says where it ran.
    HPVM_TRACE=1 "$OUT/vadd_hpvm" 1000 1 2>&1 | grep -q ' on cuda:' ||
      { echo "# HPVM on the GPU: skipped: no CUDA device"; return 0; }
    device="a CUDA device"
  fi
  # Each HPVM program's kernels must have run on the GPU, not on the CPU fallback.
  check_device() {
    local trace
    # (A kernel that hangs on the device stops the check, not the session: timeout.)
    trace=$(HPVM_TRACE=1 timeout 60 "$OUT/${1}_hpvm" "${@:2}" 2>&1 >/dev/null | grep 'hpvm-trace:' | sort -u)
    if ! grep -q ' on cuda:' <<<"$trace"; then
      echo "$1: no node ran on the GPU:" >&2
      echo "$trace" >&2
      exit 1
    fi
    echo "# $1: $(tr '\n' ';' <<<"$trace" | sed 's/hpvm-trace: //g; s/;$//')"
  }
  echo "# HPVM on the GPU vs hand-written CUDA and cuBLAS: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "# device: $device; host: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "# timed: median of $RUNS x (launch + wait), data resident, after a warm-up launch; $ROUNDS alternating rounds"
  check_device vadd 1000 1
  check_device stencil 18 10 6 1
  check_device sgemm 40 24 8 1
  check_device sgemm_tiled 40 24 8 1
  check_device sgemm_blocked 140 130 9 1
  check_device edge 64 48 3 2 1

  local TABLE=() FAILED=0
  median() { sed 's/.*median \([0-9.]*\) ms.*/\1/' <<<"$1"; }
  checksum() { sed 's/.*checksum //' <<<"$1"; }
  lower() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b < a) ? b : a }'; }
  # compare NAME SIZE BASELINE ARGS...: HPVM and BASELINE (a binary of OUT) in turn, ROUNDS
  # times; every checksum equal to the first; a row with each one's lowest median.
  # ROW_LABEL names the row instead of NAME (the 64-bit rows below).
  compare() {
    local name="$1" size="$2" baseline="$3" label="${ROW_LABEL:-$1}"
    shift 3
    [[ -x "$OUT/$baseline" ]] || { TABLE+=("$(printf '%-15s %-16s %s' "$label" "$size" "(no $baseline)")"); return; }
    local h="" c="" sum="" round line hpvm base
    for ((round = 0; round < ROUNDS; ++round)); do
      hpvm=$(timeout 300 "$OUT/${name}_hpvm" "$@" "$RUNS")
      base=$(timeout 300 "$OUT/$baseline" "$@" "$RUNS")
      printf '%s\n%s\n' "$hpvm" "$base"
      for line in "$hpvm" "$base"; do
        [[ -z "$sum" ]] && sum=$(checksum "$line")
        [[ "$(checksum "$line")" == "$sum" ]] ||
          { echo "$name: checksums disagree: $line (expected $sum)" >&2; FAILED=1; }
      done
      h=$(lower "$h" "$(median "$hpvm")")
      c=$(lower "$c" "$(median "$base")")
    done
    TABLE+=("$(awk -v n="$label" -v s="$size" -v b="$baseline" -v h="$h" -v c="$c" \
      'BEGIN { printf "%-15s %-16s %10.3f %10.3f %7.2f  %s", n, s, h, c, h / c, b }')")
  }
  compare vadd "n=${VADD[0]}" vadd_cuda "${VADD[@]}"
  compare stencil "$(IFS=x; echo "${STENCIL[*]}")" stencil_cuda "${STENCIL[@]}"
  local size
  size="$(IFS=x; echo "${SGEMM[*]}")"
  compare sgemm "$size" sgemm_cuda "${SGEMM[@]}"
  compare sgemm_tiled "$size" sgemm_tiled_cuda "${SGEMM[@]}"
  compare sgemm_blocked "$size" sgemm_blocked_cuda "${SGEMM[@]}"
  compare sgemm_blocked "$size" sgemm_cublas "${SGEMM[@]}"
  # The kernels' 64-bit versions, which the runtime launches only past 2^31 (HPVM_CUDA_NARROW=0):
  # what the 32-bit variants gain.
  ROW_LABEL="vadd 64-bit" HPVM_CUDA_NARROW=0 compare vadd "n=${VADD[0]}" vadd_cuda "${VADD[@]}"
  ROW_LABEL="sgemm 64-bit" HPVM_CUDA_NARROW=0 compare sgemm "$size" sgemm_cuda "${SGEMM[@]}"

  # The edge pipeline: the same executable on the GPU and on the CPU versions.
  local gpu="" cpu="" g c round
  for ((round = 0; round < ROUNDS; ++round)); do
    g=$("$OUT/edge_hpvm" "${EDGE[@]}" "$RUNS") || { echo "$g" >&2; FAILED=1; }
    c=$(HPVM_DEVICE=cpu "$OUT/edge_hpvm" "${EDGE[@]}" "$RUNS") || { echo "$c" >&2; FAILED=1; }
    printf 'gpu: %s\ncpu: %s\n' "$g" "$c"
    gpu=$(lower "$gpu" "$(median "$(head -1 <<<"$g")")")
    cpu=$(lower "$cpu" "$(median "$(head -1 <<<"$c")")")
  done

  echo
  printf '%-15s %-16s %10s %10s %7s  %s\n' program size "HPVM ms" "base ms" ratio baseline
  printf '%s\n' "${TABLE[@]}"
  echo "(lowest of $ROUNDS alternating rounds of each version's median of $RUNS; ratio = HPVM / baseline;"
  echo " goals: <= 1.10 against hand-written CUDA, sgemm_blocked / cuBLAS <= 2.0, i.e. >= 50% of its GFLOP/s)"
  awk -v m="${SGEMM[0]}" -v n="${SGEMM[1]}" -v k="${SGEMM[2]}" \
    -v rows="$(printf '%s\n' "${TABLE[@]}" | awk '$1 == "sgemm_blocked" { print $3 ":" $4 ":" $6 }' | tr '\n' ' ')" \
    'BEGIN { split(rows, r, " "); for (i in r) { split(r[i], f, ":");
               if (f[3] == "sgemm_cublas")
                 printf "sgemm_blocked %.0f GFLOP/s, cuBLAS %.0f GFLOP/s: %.0f%% of cuBLAS\n",
                        2 * m * n * k / f[1] / 1e6, 2 * m * n * k / f[2] / 1e6, 100 * f[2] / f[1] } }'
  awk -v g="$gpu" -v c="$cpu" -v f="${EDGE[2]}" -v w="${EDGE[0]}" -v h="${EDGE[1]}" \
    'BEGIN { printf "edge %dx%d: GPU %.1f frames/s, CPU (%s threads) %.1f frames/s: %.2fx\n",
             w, h, f * 1e3 / g, "'"$(nproc)"'", f * 1e3 / c, c / g }'
  sweep
  return "$FAILED"
}

# The work-group shapes the runtime can pick (HPVM_WORKGROUP, docs/Runtime.md) for the
# programs that leave the choice to it: each shape's median of RUNS, the default's, the best.
# The space is small enough to measure whole: the best found is the optimum here.
sweep() {
  local entry program shapes args shape line ms best best_ms default_ms sum
  echo
  echo "# work-group sweep (HPVM_WORKGROUP): median of $RUNS per shape"
  for entry in "vadd|64 128 256 512 1024|${VADD[*]}" \
               "sgemm|8x8 16x8 8x16 16x16 32x4 32x8 32x16 32x32 64x2 64x4 64x8 128x1 128x2 256x1|${SGEMM[*]}" \
               "stencil|8x8x4 8x8x8 16x8x2 16x8x4 16x4x4 16x16x1 16x16x2 32x4x2 32x8x1 32x8x2 32x2x4 64x2x2 64x4x1 128x2x1|${STENCIL[*]}"; do
    IFS='|' read -r program shapes args <<<"$entry"
    best="" best_ms="" default_ms="" sum=""
    for shape in default $shapes; do
      # A shape the device refuses would run the CPU version (traced): not a measurement.
      line=$(HPVM_TRACE=1 HPVM_WORKGROUP="${shape#default}" timeout 120 \
        "$OUT/${program}_hpvm" $args "$RUNS" 2>"$OUT/sweep.trace") ||
        { echo "$program $shape: failed: $(tail -3 "$OUT/sweep.trace")" >&2; FAILED=1; continue; }
      if grep -q 'falls back' "$OUT/sweep.trace"; then
        echo "$program $shape: not run on the device: $(grep -m1 'falls back' "$OUT/sweep.trace")"
        continue
      fi
      [[ -z "$sum" ]] && sum=$(checksum "$line")
      [[ "$(checksum "$line")" == "$sum" ]] ||
        { echo "$program $shape: checksum $(checksum "$line"), expected $sum" >&2; FAILED=1; }
      ms=$(median "$line")
      printf '%-8s %-9s %10.3f ms\n' "$program" "$shape" "$ms"
      [[ "$shape" == default ]] && default_ms="$ms"
      if [[ -z "$best_ms" ]] || awk -v a="$ms" -v b="$best_ms" 'BEGIN { exit !(a < b) }'; then
        best="$shape" best_ms="$ms"
      fi
    done
    rm -f "$OUT/sweep.trace"
    awk -v p="$program" -v d="$default_ms" -v b="$best" -v m="$best_ms" \
      'BEGIN { printf "sweep %s: default %.3f ms, best %s %.3f ms (%.2fx)\n", p, d, b, m, d / m }'
  done
}

case "$STEP" in
  build) build ;;
  run) run ;;
  all) build && OUT="$OUT" run ;;
esac
