#!/usr/bin/env bash
# run.sh - the HPVM 1.0 release's CPU programs, unchanged, compiled by hpvm-cc and compared bit
# for bit with the same sources built natively (clang, no HPVM: native/hpvm_native.c runs the
# leaves one instance after the other, driven by native/<prog>_native.*).
#
# Usage: bash benchmarks/release-check/run.sh RELEASE_ROOT [--quick]
#   RELEASE_ROOT: the directory that holds hpvm/test/benchmarks (the release is never copied
#   into this repository). Tools from ${HPVM_BIN:-build/bin}, builds and outputs under
#   ${HPVM_BENCH_OUT:-build/release-check}. The pipeline needs OpenCV 4 (pkg-config opencv4);
#   without it the script installs Debian's libopencv-dev when it can (root and apt-get), or
#   skips the pipeline. Exit status 1 when a program fails to compile or run, or differs.
#
# Per program: inputs from inputs.py (fixed seeds); the native build, run once (the
# reference); the hpvm-cc build (-O3, vector lanes on, hpvm-cc's default) run with
# HPVM_NUM_THREADS unset, =1 and =3; the hpvm-cc -fno-hpvm-lanes build run once. Every output
# file of every run must equal the reference's (cmp). Both builds use -O3 -ffp-contract=off
# (and the native one -march=native, as hpvm-cc compiles for the host CPU).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/benchmarks/release-check"
NATIVE="$HERE/native"
BIN="${HPVM_BIN:-$ROOT/build/bin}"
OUT="${HPVM_BENCH_OUT:-$ROOT/build/release-check}"
CLANG="${CLANG:-clang-22}"
CLANGXX="${CLANGXX:-clang++-22}"

usage() { echo "usage: bash benchmarks/release-check/run.sh RELEASE_ROOT [--quick]" >&2; exit 2; }
[[ $# -ge 1 && $# -le 2 ]] || usage
RELEASE="$1"
QUICK=0
if [[ $# == 2 ]]; then [[ "$2" == "--quick" ]] || usage; QUICK=1; fi
REL="$RELEASE/hpvm/test/benchmarks"
[[ -d "$REL/parboil" && -d "$REL/hpvm-cava" ]] ||
  { echo "run.sh: $RELEASE has no hpvm/test/benchmarks/{parboil,hpvm-cava}" >&2; exit 2; }
[[ -x "$BIN/hpvm-cc" ]] || { echo "run.sh: no $BIN/hpvm-cc (build first)" >&2; exit 2; }
PB="$REL/parboil"
PBC=("$PB/common/src/parboil.c")

FLAGS=(-O3 -ffp-contract=off -DDEVICE=CPU_TARGET)
NFLAGS=("${FLAGS[@]}" -march=native -I "$ROOT/runtime/include/hpvm" -I "$ROOT/runtime/include"
        -I "$NATIVE" -w)

if [[ $QUICK == 1 ]]; then
  SGEMM=(32 48 16) STENCIL=(140 8 6) STENCIL_T=2 SPMV=256 LBM_T=1 CAVA=(48 64) PIPE=(32 3)
  OUT="$OUT/quick"
else
  SGEMM=(128 96 80) STENCIL=(300 20 12) STENCIL_T=5 SPMV=1024 LBM_T=3 CAVA=(128 128) PIPE=(96 6)
fi
mkdir -p "$OUT"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# The native stand-in and the cava shim, shared by the programs.
"$CLANG" "${NFLAGS[@]}" -c "$NATIVE/hpvm_native.c" -o "$OUT/hpvm_native.o"
"$CLANG" -O2 -shared -fPIC "$NATIVE/zero_memalign.c" -ldl -o "$OUT/zero_memalign.so"

ROWS=()
FAILED=0

# check NAME INPUT_DESC: builds (hpvm_NAME, native_NAME), inputs (inputs_NAME DIR) and runs
# (run_NAME EXE PREFIX writes the outputs PREFIX*) come from the functions below.
# The program built with --distribute=mpi ($dir/hpvm_mpi) and $dir/hpvm_mpi3, which runs it on
# 3 ranks of mpirun (Open MPI's run-as-root variables set, as the tests set them).
mpi_build() {
  local name="$1" dir="$2"
  "hpvm_$name" "$dir/hpvm_mpi" --distribute=mpi >"$dir/hpvm-cc-mpi.log" 2>&1 ||
    { tail -20 "$dir/hpvm-cc-mpi.log"; return 1; }
  printf '#!/bin/sh\nexport OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n%s\n' \
    "exec mpirun --oversubscribe --bind-to none -np 3 '$dir/hpvm_mpi' \"\$@\"" \
    >"$dir/hpvm_mpi3"
  chmod +x "$dir/hpvm_mpi3"
}

check() {
  local name="$1" desc="$2" dir="$OUT/$1"
  rm -rf "$dir"
  mkdir -p "$dir/in"
  echo "== $name ($desc)"
  local t0 t1 compile="-" tn="-" th="-"
  t0=$(now)
  if ! "hpvm_$name" "$dir/hpvm" >"$dir/hpvm-cc.log" 2>&1; then
    tail -20 "$dir/hpvm-cc.log"
    ROWS+=("| $name | $desc | **fails to compile** (hpvm-cc) | - | - | - |")
    FAILED=1
    return
  fi
  t1=$(now)
  compile=$(secs "$t0" "$t1")
  if ! "hpvm_$name" "$dir/hpvm_nolanes" -fno-hpvm-lanes >"$dir/hpvm-cc-nolanes.log" 2>&1; then
    tail -20 "$dir/hpvm-cc-nolanes.log"
    ROWS+=("| $name | $desc | **fails to compile** (hpvm-cc -fno-hpvm-lanes) | $compile | - | - |")
    FAILED=1
    return
  fi
  if ! "native_$name" "$dir/native" >"$dir/native.log" 2>&1; then
    tail -20 "$dir/native.log"
    ROWS+=("| $name | $desc | **native build fails** | $compile | - | - |")
    FAILED=1
    return
  fi
  "inputs_$name" "$dir/in"

  local runs=(native hpvm hpvm_t1 hpvm_t3 hpvm_nolanes) run exe bad=()
  # The streaming pipeline also over 3 MPI ranks where mpirun is (docs/Distributed.md).
  if [[ $name == pipeline ]] && command -v mpirun >/dev/null; then
    if ! mpi_build "$name" "$dir"; then
      local why="**fails to compile** (hpvm-cc --distribute=mpi)"
      ROWS+=("| $name | $desc | $why | $compile | - | - |")
      FAILED=1
      return
    fi
    runs+=(hpvm_mpi3)
  fi
  for run in "${runs[@]}"; do
    exe="$dir/${run%_t[0-9]}"
    local threads=""
    case "$run" in
      *_t1) threads=1 ;;
      *_t3) threads=3 ;;
    esac
    t0=$(now)
    if ! (unset HPVM_NUM_THREADS
          [[ -z $threads ]] || export HPVM_NUM_THREADS=$threads
          "run_$name" "$exe" "$dir/out_$run") >"$dir/run_$run.log" 2>&1; then
      tail -5 "$dir/run_$run.log"
      bad+=("$run: exit status")
      [[ $run == native ]] && break  # no reference
      continue
    fi
    t1=$(now)
    if [[ $run == native ]] && ! compgen -G "$dir/out_native*" >/dev/null; then
      bad+=("native: no output file")
      break
    fi
    [[ $run == native ]] && tn=$(secs "$t0" "$t1")
    [[ $run == hpvm ]] && th=$(secs "$t0" "$t1")
    if [[ $run != native ]]; then
      local ref f
      for ref in "$dir"/out_native*; do
        f="$dir/out_$run${ref#"$dir"/out_native}"
        if ! cmp -s "$ref" "$f"; then
          bad+=("$run: $(basename "$f") $( (cmp "$ref" "$f" 2>&1 || true) | head -1 |
                                          sed 's/.*differ: //; s/, line.*//')")
        fi
      done
    fi
  done
  # The native drivers say so when the inputs reach undefined behaviour of the release (where
  # the builds may legitimately differ): the inputs must then change, the check fails.
  if grep -q "undefined behaviour" "$dir"/run_*.log; then
    grep -h "undefined behaviour" "$dir"/run_*.log | head -3
    bad+=("the inputs reach undefined behaviour of the release (run_*.log)")
  fi
  local result
  if [[ ${#bad[@]} == 0 ]]; then
    result="identical ($((${#runs[@]} - 1)) hpvm runs)"
    rm -f "$dir"/out_hpvm*  # equal to out_native*
  else
    result="$(printf '%s; ' "${bad[@]}" | sed 's/; $//')"
    if [[ $result == *"exit status"* || $result == *"no output"* ]]; then
      result="**fails**: $result"
    else
      result="**differs**: $result"
    fi
    FAILED=1
  fi
  echo "   $result; hpvm-cc ${compile}s, native run ${tn}s, hpvm run ${th}s"
  ROWS+=("| $name | $desc | $result | $compile | $tn | $th |")
}

# ---- parboil sgemm: main.cc io.cc; -i A,B,B^T -o C; C written as text by io.cc, exact
# through native/exact_floats.cc (a locale that prints floats with 9 digits).
S_SG="$PB/benchmarks/sgemm/src/hpvm"
hpvm_sgemm() {
  local o="$1"; shift
  "$BIN/hpvm-cc" "${FLAGS[@]}" "$@" -I "$PB/common/include" "$S_SG/main.cc" "$S_SG/io.cc" \
    "${PBC[@]}" "$NATIVE/exact_floats.cc" -lm -o "$o"
}
native_sgemm() {
  "$CLANGXX" "${NFLAGS[@]}" -I "$PB/common/include" -I "$S_SG" "$NATIVE/sgemm_native.cc" \
    "$S_SG/io.cc" "$NATIVE/exact_floats.cc" -x c "${PBC[@]}" -x none "$OUT/hpvm_native.o" \
    -lm -o "$1"
}
inputs_sgemm() { python3 "$HERE/inputs.py" sgemm "$1" "${SGEMM[@]}"; }
run_sgemm() {
  local i="$OUT/sgemm/in"
  "$1" -i "$i/matrix1.txt,$i/matrix2.txt,$i/matrix2t.txt" -o "$2.txt"
}

# ---- parboil stencil: stencil.cpp file.cc; -i input -o output nx ny nz iterations
S_ST="$PB/benchmarks/stencil/src/hpvm"
hpvm_stencil() {
  local o="$1"; shift
  "$BIN/hpvm-cc" "${FLAGS[@]}" "$@" -I "$PB/common/include" "$S_ST/stencil.cpp" "$S_ST/file.cc" \
    "${PBC[@]}" -lm -o "$o"
}
native_stencil() {
  "$CLANGXX" "${NFLAGS[@]}" -I "$PB/common/include" -I "$S_ST" "$NATIVE/stencil_native.cc" \
    "$S_ST/file.cc" -x c "${PBC[@]}" -x none "$OUT/hpvm_native.o" -lm -o "$1"
}
inputs_stencil() { python3 "$HERE/inputs.py" stencil "$1" "${STENCIL[@]}"; }
run_stencil() { "$1" -i "$OUT/stencil/in/input.bin" -o "$2.bin" "${STENCIL[@]}" "$STENCIL_T"; }

# ---- parboil spmv: main.cpp file.cpp gpu_info.cpp + convert-dataset (coo_to_jds, mmio);
# -i matrix.mtx,vector.bin -o output
S_SP="$PB/benchmarks/spmv/src/hpvm"
CD_SP="$PB/benchmarks/spmv/common_src/convert-dataset"
hpvm_spmv() {
  local o="$1"; shift
  "$BIN/hpvm-cc" "${FLAGS[@]}" "$@" -I "$PB/common/include" -I "$CD_SP" "$S_SP/main.cpp" \
    "$S_SP/file.cpp" "$S_SP/gpu_info.cpp" "$CD_SP/convert_dataset.c" "$CD_SP/mmio.c" \
    "${PBC[@]}" -lm -o "$o"
}
native_spmv() {
  "$CLANGXX" "${NFLAGS[@]}" -I "$PB/common/include" -I "$S_SP" -I "$CD_SP" \
    "$NATIVE/spmv_native.cc" "$S_SP/file.cpp" "$S_SP/gpu_info.cpp" -x c \
    "$CD_SP/convert_dataset.c" "$CD_SP/mmio.c" "${PBC[@]}" -x none "$OUT/hpvm_native.o" \
    -lm -o "$1"
}
inputs_spmv() { python3 "$HERE/inputs.py" spmv "$1" "$SPMV"; }
run_spmv() { "$1" -i "$OUT/spmv/in/matrix.mtx,$OUT/spmv/in/vector.bin" -o "$2.bin"; }

# ---- parboil lbm: main.cpp lbm.cpp; -i obstacles -o velocities TIMESTEPS (grid fixed at
# 120 x 120 x 150 by layout_config.h)
S_LBM="$PB/benchmarks/lbm/src/hpvm"
hpvm_lbm() {
  local o="$1"; shift
  "$BIN/hpvm-cc" "${FLAGS[@]}" "$@" -I "$PB/common/include" "$S_LBM/main.cpp" "$S_LBM/lbm.cpp" \
    "${PBC[@]}" -lm -o "$o"
}
native_lbm() {
  "$CLANGXX" "${NFLAGS[@]}" -I "$PB/common/include" -I "$S_LBM" "$NATIVE/lbm_native.cc" \
    "$S_LBM/lbm.cpp" -x c "${PBC[@]}" -x none "$OUT/hpvm_native.o" -lm -o "$1"
}
inputs_lbm() { python3 "$HERE/inputs.py" lbm "$1"; }
run_lbm() { "$1" -i "$OUT/lbm/in/obstacles.of" -o "$2.bin" "$LBM_T"; }

# ---- hpvm-cava: main.c load_cam_model.c cam_pipe_utility.c utility.c;
# cava CAM_MODEL_DIR RAW_IMAGE OUTPUT_BASE (five images OUTPUT_BASE{,_gamut,...}.bin);
# posix_memalign zeroes its memory in both builds (see native/zero_memalign.c).
S_CAVA="$REL/hpvm-cava/src"
CAVA_SRCS=("$S_CAVA/load_cam_model.c" "$S_CAVA/cam_pipe_utility.c" "$S_CAVA/utility.c")
hpvm_cava() {
  local o="$1"; shift
  "$BIN/hpvm-cc" "${FLAGS[@]}" "$@" -I "$S_CAVA" "$S_CAVA/main.c" "${CAVA_SRCS[@]}" -lm -o "$o"
}
native_cava() {
  "$CLANG" "${NFLAGS[@]}" -I "$S_CAVA" "$NATIVE/cava_native.c" "${CAVA_SRCS[@]}" \
    "$OUT/hpvm_native.o" -lm -o "$1"
}
inputs_cava() { python3 "$HERE/inputs.py" cava "$1" "${CAVA[@]}"; }
run_cava() {
  LD_PRELOAD="$OUT/zero_memalign.so" "$1" "$REL/hpvm-cava/cam_models/NikonD7000/" \
    "$OUT/cava/in/raw.bin" "$2"
}

# ---- pipeline (edge detection): main.cc with OpenCV 4 and native/opencv-compat, its main
# renamed and native/pipeline_driver.cc's main streaming generated frames through the graph.
S_PIPE="$REL/pipeline/src"
CV_LIBS=(-lopencv_core -lopencv_imgproc -lopencv_videoio -lopencv_highgui)
PIPE_FLAGS=(-Dmain=release_pipeline_main -I "$NATIVE/opencv-compat" -I /usr/include/opencv4
            -I "$S_PIPE")
hpvm_pipeline() {
  local o="$1"; shift
  "$BIN/hpvm-cc" "${FLAGS[@]}" "$@" "${PIPE_FLAGS[@]}" "$NATIVE/pipeline_driver.cc" \
    "${CV_LIBS[@]}" -o "$o"
}
native_pipeline() {
  "$CLANGXX" "${NFLAGS[@]}" "${PIPE_FLAGS[@]}" -DRELEASE_CHECK_NATIVE \
    "$NATIVE/pipeline_driver.cc" "$OUT/hpvm_native.o" "${CV_LIBS[@]}" -o "$1"
}
inputs_pipeline() { :; }
run_pipeline() { "$1" "${PIPE[@]}" "$2.bin"; }

have_opencv() {
  pkg-config --exists opencv4 2>/dev/null && return 0
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "== installing OpenCV (libopencv-dev) for the pipeline"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get install -y --no-install-recommends libopencv-dev ||
      { apt-get update && apt-get install -y --no-install-recommends libopencv-dev; }
    } >"$OUT/apt-opencv.log" 2>&1 || true
  fi
  pkg-config --exists opencv4 2>/dev/null
}

T0=$(now)
check sgemm "A ${SGEMM[0]}x${SGEMM[2]}, B ${SGEMM[2]}x${SGEMM[1]}"
check stencil "${STENCIL[0]}x${STENCIL[1]}x${STENCIL[2]}, $STENCIL_T iterations"
check spmv "${SPMV}x${SPMV} symmetric, 50 iterations"
check lbm "120x120x150, $LBM_T time steps"
check cava "${CAVA[0]}x${CAVA[1]} raw image"
if [[ ! -f "$S_PIPE/main.cc" ]]; then
  ROWS+=("| pipeline | - | skipped: not in this release | - | - | - |")
elif have_opencv; then
  check pipeline "${PIPE[1]} frames of ${PIPE[0]}x${PIPE[0]}"
else
  echo "== pipeline: skipped (no OpenCV)"
  ROWS+=("| pipeline | - | skipped: no OpenCV | - | - | - |")
fi
T1=$(now)

echo
echo "Release programs, unchanged: $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) CPUs:" \
     "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"\
     "release $(cd "$RELEASE" && git rev-parse --short HEAD 2>/dev/null || echo "at $RELEASE")" \
     "$([[ $QUICK == 1 ]] && echo '(--quick)')"
echo
echo "| program | inputs | result (against the native build, bit for bit) | hpvm-cc compile (s) | native run (s) | hpvm run (s) |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
echo
echo "Total: $(secs "$T0" "$T1") s."
if [[ $FAILED != 0 ]]; then
  echo "release-check: FAILED (a program failed to compile or run, or differs)"
  exit 1
fi
echo "release-check: every program checked is identical to its native build"
