#!/usr/bin/env bash
# run.sh - public Hetero-C++ programs, unchanged, built by hpvm-cc twice -- as a dataflow graph
# (hpvm-cc) and as plain sequential C/C++ (hpvm-cc -fhetero-sequential, the "native build") --
# run, and compared: the graph build's stdout must equal the sequential build's, byte for byte.
#
# Usage: bash benchmarks/hetero-check/run.sh PROGRAMS_DIR [--era-full]
#   PROGRAMS_DIR holds the programs (never copied into this repository; README.md says where
#   they come from), either in the flat layout
#     matmul/matmul.cpp  era-tmprun/tmpRun.c  hpvm-onnx/{run_onnx.cpp,model.hpp,stage_def.hpp}
#     era-full/{src,include}                 (only with --era-full)
#   or as git clones at the commits README.md names:
#     HPVM-WASM597/matmul/matmul.cpp  era/src/tmpRun.c  hpvm-ONNX/src/run_onnx.cpp  era-full/src
#   --era-full: also compile (compile only: the program needs ERA's socket-fed simulators to
#   run) each of IBM/era's src/*.c but cv_toolset.c, both ways, one PASS/FAIL line per file.
#   The HDC programs (README.md), when present, as clones:
#     PRISM-HDC-Demo/simple_examples  HD-Classification/Hetero-C++  HD-Clustering/Hetero-C++
#   and IBM/scheduler-library's mini-era, as a clone: scheduler-library/examples/mini-era
#   HDC_OPENCL=1: HD-Classification, HD-Clustering and mini-era also built with their hinted
#   tasks as OpenCL kernels.
# Tools from ${HPVM_BIN:-build/bin}. Builds and outputs go to a mktemp directory, removed at
# the end (kept, and named, with HETERO_CHECK_KEEP=1). Exit status 1 when any program fails
# to compile or run, or differs; 2 for a usage error.
#
# Every run sets HPVM_TRACE=1: the graph build prints one "hpvm-trace: NODE on DEVICE" line on
# stderr per node execution; their number must be what the program's graph runs (a leaf runs
# once per launch, all its instances together), and the sequential build, which has no graph,
# must print none. The programs print nothing nondeterministic (no times, addresses or
# unordered parallel output), so stdout is compared whole.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/benchmarks/hetero-check"
BIN="${HPVM_BIN:-$ROOT/build/bin}"
HPVMCC="$BIN/hpvm-cc"

usage() { echo "usage: bash benchmarks/hetero-check/run.sh PROGRAMS_DIR [--era-full]" >&2; exit 2; }
[[ $# -ge 1 && $# -le 2 ]] || usage
PROGRAMS="$1"
ERA_FULL=0
if [[ $# == 2 ]]; then [[ "$2" == "--era-full" ]] || usage; ERA_FULL=1; fi
[[ -d "$PROGRAMS" ]] || { echo "run.sh: $PROGRAMS is not a directory" >&2; exit 2; }
PROGRAMS="$(cd "$PROGRAMS" && pwd)"
[[ -x "$HPVMCC" ]] || { echo "run.sh: no $HPVMCC (build first)" >&2; exit 2; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/hetero-check.XXXXXX")"
cleanup() {
  if [[ "${HETERO_CHECK_KEEP:-0}" == 1 ]]; then echo "hetero-check: outputs kept in $WORK"
  else rm -rf "$WORK"; fi
}
trap cleanup EXIT

PASSED=0
FAILED=0
pass() { echo "PASS $*"; PASSED=$((PASSED + 1)); }
fail() { echo "FAIL $*"; FAILED=$((FAILED + 1)); }
# A log's error lines (or its last lines when it has none), indented, for a failure's context.
excerpt() {
  { grep -E 'error|Error|Assertion|Segmentation' "$1" || tail -n "${2:-6}" "$1"; } |
    head -n "${2:-6}" | sed 's/^/    /' || true
}

# find_first VAR CANDIDATE...: VAR := the first candidate path that exists (empty if none).
find_first() {
  local var="$1" c
  shift
  for c in "$@"; do
    if [[ -e "$c" ]]; then printf -v "$var" '%s' "$c"; return 0; fi
  done
  printf -v "$var" '%s' ""
}

# build NAME OUTDIR -- HPVMCC_ARGS...: the graph build (OUTDIR/graph) and the sequential
# build (OUTDIR/seq); prints a FAIL line and returns 1 when either does not compile.
build() {
  local name="$1" dir="$2"
  shift 3
  mkdir -p "$dir"
  if ! (cd "$dir" && "$HPVMCC" "$@" -o graph) >"$dir/graph-build.log" 2>&1; then
    fail "$name: hpvm-cc (graph build) fails to compile:"
    excerpt "$dir/graph-build.log"
    return 1
  fi
  if ! (cd "$dir" && "$HPVMCC" -fhetero-sequential "$@" -o seq) >"$dir/seq-build.log" 2>&1; then
    fail "$name: hpvm-cc -fhetero-sequential (native build) fails to compile:"
    excerpt "$dir/seq-build.log"
    return 1
  fi
}

# compare NAME DIR TAG NODES ARGS...: runs DIR/graph and DIR/seq with ARGS (HPVM_TRACE=1,
# 60 s each), expects NODES trace lines from the graph build and none from the sequential
# one, and equal stdout. Leaves DIR/TAG.seq.out, the reference, for the caller's own checks.
compare() {
  local name="$1" dir="$2" tag="$3" nodes="$4"
  shift 4
  local label="$name${*:+ (args: $*)}" rc_g=0 rc_s=0
  HPVM_TRACE=1 timeout 60 "$dir/graph" "$@" >"$dir/$tag.graph.out" 2>"$dir/$tag.graph.err" || rc_g=$?
  HPVM_TRACE=1 timeout 60 "$dir/seq" "$@" >"$dir/$tag.seq.out" 2>"$dir/$tag.seq.err" || rc_s=$?
  if [[ $rc_s != 0 ]]; then
    fail "$label: the sequential build exits with $rc_s"
    excerpt "$dir/$tag.seq.err"
    return 1
  fi
  if [[ $rc_g != 0 ]]; then
    fail "$label: the graph build exits with $rc_g"
    excerpt "$dir/$tag.graph.err"
    return 1
  fi
  local traced seq_traced names
  traced=$(grep -c '^hpvm-trace: ' "$dir/$tag.graph.err" || true)
  seq_traced=$(grep -c '^hpvm-trace: ' "$dir/$tag.seq.err" || true)
  names=$(sed -n 's/^hpvm-trace: //p' "$dir/$tag.graph.err" | paste -sd ';' | sed 's/;/; /g')
  if [[ $seq_traced != 0 ]]; then
    fail "$label: the sequential build traced $seq_traced node runs (it should have no graph)"
    return 1
  fi
  if [[ $traced != "$nodes" ]]; then
    fail "$label: the graph build traced $traced node runs, expected $nodes${names:+: $names}"
    return 1
  fi
  if ! cmp -s "$dir/$tag.seq.out" "$dir/$tag.graph.out"; then
    fail "$label: stdout differs (< sequential, > graph):"
    diff "$dir/$tag.seq.out" "$dir/$tag.graph.out" | head -8 | sed 's/^/    /' || true
    return 1
  fi
  local lines bytes
  lines=$(wc -l <"$dir/$tag.seq.out")
  bytes=$(wc -c <"$dir/$tag.seq.out")
  pass "$label: stdout identical ($lines lines, $bytes bytes); $traced node runs traced ($names)"
}

# (1) matmul: mtaylo12/HPVM-WASM597 matmul/matmul.cpp (HPVM 2.x's hetero-c++ matmul test). A
# task holding a 2-deep parallel loop; prints the product of all-ones by all-minus-ones, every
# entry -COMMON. Run with its defaults (20x30, common 10) and with `7 5 3`.
check_matmul() {
  local src dir="$WORK/matmul"
  find_first src "$PROGRAMS/matmul/matmul.cpp" "$PROGRAMS/HPVM-WASM597/matmul/matmul.cpp"
  [[ -n $src ]] || { fail "matmul: no matmul/matmul.cpp under $PROGRAMS"; return; }
  build matmul "$dir" -- "$src" || return 0
  local run tag args expected l r c
  for run in "default::20 30 10" "args:7 5 3:7 5 3"; do
    IFS=: read -r tag args expected <<<"$run"
    # shellcheck disable=SC2086  # args: words on purpose
    compare matmul "$dir" "$tag" 1 $args || continue
    # The reference itself: LEFT rows of RIGHT entries, each -COMMON.
    read -r l r c <<<"$expected"
    if ! awk -v l="$l" -v r="$r" -v c="$c" '
           NR > 3 { rows++; if (NF != r) bad = 1; for (i = 1; i <= NF; i++) if ($i != -c) bad = 1 }
           END { exit (bad || rows != l) }' "$dir/$tag.seq.out"; then
      fail "matmul${args:+ (args: $args)}: the sequential build's matrix is not ${l}x${r} of -$c"
    fi
  done
}

# (2) era-tmprun: IBM/era src/tmpRun.c (C). __hetero_launch_begin/end around a section of two
# tasks that print; null buffers. Prints "hellohello again" (no newline).
check_era_tmprun() {
  local src dir="$WORK/era-tmprun"
  find_first src "$PROGRAMS/era-tmprun/tmpRun.c" "$PROGRAMS/era/src/tmpRun.c"
  [[ -n $src ]] || { fail "era-tmprun: no era-tmprun/tmpRun.c under $PROGRAMS"; return; }
  build era-tmprun "$dir" -- "$src" || return 0
  compare era-tmprun "$dir" run 2 || return 0
  [[ "$(cat "$dir/run.seq.out")" == "hellohello again" ]] ||
    fail "era-tmprun: the sequential build does not print 'hellohello again'"
}

# (3) hpvm-onnx: hx507/hpvm-ONNX src/run_onnx.cpp, a section of three tasks, each calling
# do_inference_at_stage. The onnxruntime model (model.cpp, and ../data/mnist.onnx) is replaced
# by onnx_model_standin.cpp (see that file). Flags: the project's own (cmake/hpvm.cmake
# compiles the Hetero-C++ source with -fno-exceptions; its -std=c++20 is not an hpvm-cc option
# and not needed: clang takes the designated initializers in gnu++17 as an extension). The
# argument, the model file, is required by main and unused by the stand-in.
check_hpvm_onnx() {
  local src dir="$WORK/hpvm-onnx"
  find_first src "$PROGRAMS/hpvm-onnx/run_onnx.cpp" "$PROGRAMS/hpvm-ONNX/src/run_onnx.cpp"
  [[ -n $src ]] || { fail "hpvm-onnx: no hpvm-onnx/run_onnx.cpp under $PROGRAMS"; return; }
  build hpvm-onnx "$dir" -- -fno-exceptions -I "$(dirname "$src")" "$src" \
    "$HERE/onnx_model_standin.cpp" || return 0
  compare hpvm-onnx "$dir" run 3 ../data/mnist.onnx || return 0
  if ! grep -q '^Done! $' "$dir/run.seq.out" ||
     [[ $(grep -c '^Result at stage Stage' "$dir/run.seq.out") != 3 ]]; then
    fail "hpvm-onnx: the sequential build does not print three stage results and 'Done!'"
  fi
}

# (3b) hpvm-ONNX's earlier revisions 46d8a49 and 2e614f1: one task whose locals are
# std::arrays (the image and the results), calling the model through do_inference (46d8a49) or
# do_inference_at_stage (2e614f1), each replaced by a stand-in of its own
# (onnx_model_standin_<commit>.cpp). Expected: 1 node run, "Result: N" and "Done!".
check_hpvm_onnx_revisions() {
  local commit src dir
  for commit in 46d8a49 2e614f1; do
    dir="$WORK/hpvm-onnx-$commit"
    find_first src "$PROGRAMS/hpvm-onnx-$commit/run_onnx.cpp" \
      "$PROGRAMS/hpvm-ONNX-$commit/src/run_onnx.cpp"
    [[ -n $src ]] || { echo "SKIP hpvm-onnx-$commit: no hpvm-onnx-$commit under $PROGRAMS"; continue; }
    build "hpvm-onnx-$commit" "$dir" -- -fno-exceptions -I "$(dirname "$src")" "$src" \
      "$HERE/onnx_model_standin_$commit.cpp" || continue
    compare "hpvm-onnx-$commit" "$dir" run 1 ../data/mnist.onnx || continue
    grep -q '^Result: [0-9]' "$dir/run.seq.out" && grep -q '^Done! $' "$dir/run.seq.out" ||
      fail "hpvm-onnx-$commit: the sequential build does not print a result and 'Done!'"
  done
}

# (4, --era-full) IBM/era at the hetero-integration commit: compile only, each translation unit
# alone (-c), with the Makefile's hpvm-cpu + COMPILE_HCC flags. cv_toolset.c is left out: it
# includes /usr/include/python3.6m/Python.h by absolute path (ERA's CV path, not Hetero-C++).
check_era_full() {
  local base
  find_first base "$PROGRAMS/era-full"
  [[ -n $base && -d "$base/src" ]] || { fail "era-full: no era-full/src under $PROGRAMS"; return; }
  local dir="$WORK/era-full" f name mode
  mkdir -p "$dir"
  local flags=(-O1 -c -DHPVM -DHCC -DDEVICE=CPU_TARGET -DINT_TIME -fno-exceptions
               -I "$base/include" -I "$base/soc_utils")
  for f in "$base"/src/*.c; do
    name=$(basename "$f" .c)
    [[ $name == cv_toolset ]] && continue
    local ok=1
    for mode in graph seq; do
      local extra=()
      [[ $mode == seq ]] && extra=(-fhetero-sequential)
      if ! timeout 300 "$HPVMCC" "${flags[@]}" "${extra[@]}" "$f" -o "$dir/$name.$mode.o" \
             >"$dir/$name.$mode.log" 2>&1; then
        fail "era-full src/$name.c (compile only): hpvm-cc${extra:+ ${extra[*]}} fails:"
        excerpt "$dir/$name.$mode.log" 3
        ok=0
      fi
    done
    [[ $ok == 0 ]] || pass "era-full src/$name.c (compile only): hpvm-cc and -fhetero-sequential"
  done
  return 0
}

# --- The HDC programs (hdc.h's intrinsics) -----------------------------------------------
# Their stdout is compared without the lines that report times ("... mSec"), and the
# result files they write (the labels each data point got) whole. Their hypermatrices are
# locals of main and of the nodes (tens of MB), so they run with a 1 GiB stack (ulimit -s;
# the runtime's threads take the same size).

# A time() of the shim's: the simple examples seed rand() with time(NULL) and print what
# it drew, so both builds must see the same clock.
make_fixed_time() {
  [[ -f "$WORK/fixed_time.so" ]] && return 0
  printf '#include <time.h>\ntime_t time(time_t *t) { if (t) *t = 1700000000; return 1700000000; }\n' \
    >"$WORK/fixed_time.c"
  cc -shared -fPIC -o "$WORK/fixed_time.so" "$WORK/fixed_time.c"
}

# compare_hdc NAME DIR RESULT NODES ARGS...: runs DIR/graph and DIR/seq in DIR/run (where
# ../dataset is DIR/dataset), as compare does; RESULT is the file each writes there. The
# lines of stdout that match TIMES_RE (default "mSec") are left out of the comparison. NODES
# "any" takes any number of node runs but none (other revisions than README.md's have other
# graphs: HD_CLASSIFICATION_NODES=any, HD_CLUSTERING_NODES=any).
compare_hdc() {
  local name="$1" dir="$2" result="$3" nodes="$4"
  shift 4
  local mode rc traced names
  make_fixed_time
  for mode in graph seq; do
    [[ -z $result ]] || rm -f "$dir/run/$result"
    rc=0
    (cd "$dir/run" && ulimit -s 1048576 &&
       HPVM_TRACE=1 LD_PRELOAD="$WORK/fixed_time.so" timeout 300 "../$mode" "$@") \
      >"$dir/$mode.out" 2>"$dir/$mode.err" || rc=$?
    if [[ $rc != 0 ]]; then
      fail "$name: the $mode build exits with $rc"
      excerpt "$dir/$mode.err"
      return 1
    fi
    rm -f "$dir/$mode.result"
    [[ -z $result || ! -f "$dir/run/$result" ]] || mv "$dir/run/$result" "$dir/$mode.result"
    grep -v "${TIMES_RE:-mSec}" "$dir/$mode.out" >"$dir/$mode.kept" || true
  done
  traced=$(grep -c '^hpvm-trace: ' "$dir/graph.err" || true)
  names=$(sed -n 's/^hpvm-trace: //p' "$dir/graph.err" | sort | uniq -c |
          awk '{$1 = $1 "x"; print}' | paste -sd ';' | sed 's/;/; /g')
  if [[ $(grep -c '^hpvm-trace: ' "$dir/seq.err" || true) != 0 ]]; then
    fail "$name: the sequential build traced node runs (it should have no graph)"
    return 1
  fi
  if [[ $nodes == any && $traced == 0 ]] || [[ $nodes != any && $traced != "$nodes" ]]; then
    fail "$name: the graph build traced $traced node runs, expected $nodes: $names"
    return 1
  fi
  if ! cmp -s "$dir/seq.kept" "$dir/graph.kept"; then
    fail "$name: stdout (but its times) differs (< sequential, > graph):"
    diff "$dir/seq.kept" "$dir/graph.kept" | head -8 | sed 's/^/    /' || true
    return 1
  fi
  # Earlier revisions write no result file: then only stdout is compared.
  local written=""
  if [[ -f "$dir/seq.result" || -f "$dir/graph.result" ]]; then
    if ! cmp -s "$dir/seq.result" "$dir/graph.result"; then
      fail "$name: $result differs (or only one build wrote it)"
      return 1
    fi
    written=", $result identical ($(wc -l <"$dir/seq.result") lines)"
  fi
  pass "$name${*:+ (args: $*)}: stdout identical but times ($(wc -l <"$dir/seq.kept") lines)$written; $traced node runs traced ($names)"
}

# (5, 6) RafaeNoor/PRISM-HDC-Demo simple_examples/{binary_encoding,cosine_similarity}: a task
# that projects a feature vector with a random +-1 matrix (then binarizes it) or scores it
# against the matrix's rows. Built against the project's hdc.h (their include/ lends only
# utils.h, linked into a folder of its own).
check_prism() {
  local base
  find_first base "$PROGRAMS/PRISM-HDC-Demo/simple_examples" "$PROGRAMS/prism/simple_examples"
  [[ -n $base ]] || { echo "SKIP prism: no PRISM-HDC-Demo/simple_examples under $PROGRAMS"; return 0; }
  mkdir -p "$WORK/prism-include"
  ln -sf "$base/include/utils.h" "$WORK/prism-include/utils.h"
  local example dir
  for example in binary_encoding cosine_similarity; do
    dir="$WORK/prism-$example"
    build "prism $example" "$dir" -- -fno-exceptions -I "$WORK/prism-include" \
      "$base/$example/main.cpp" || continue
    mkdir -p "$dir/run"
    compare_hdc "prism $example" "$dir" "" 1 || continue
    case $example in
      binary_encoding)
        grep -A1 '^Encoded Feature:' "$dir/seq.out" | tail -n 1 |
          grep -qE '^\[ ?(-?1, ){9}-?1\]$' ||
          fail "prism $example: the sequential build's encoding is not 10 values of +-1";;
      cosine_similarity)
        grep -q '^Arg Max: [0-9]$' "$dir/seq.out" ||
          fail "prism $example: the sequential build prints no arg max";;
    esac
  done
}

# (7) xavierrouth/HD-Classification Hetero-C++/src/host.cpp: random-projection encoding,
# training (1 epoch) and inference, a graph launch per data point, on a synthetic
# ISOLET-shaped data set (hdc_dataset.py: the training half of the real one is not in the
# repository's stored history). Prints the test accuracy; writes out.cpu.txt.
check_hd_classification() {
  local src dir="$WORK/hd-classification"
  find_first src "$PROGRAMS/HD-Classification/Hetero-C++/src/host.cpp"
  [[ -n $src ]] || { echo "SKIP hd-classification: no HD-Classification under $PROGRAMS"; return 0; }
  build hd-classification "$dir" -- -O3 -fno-exceptions -I "$(dirname "$src")" "$src" ||
    return 0
  mkdir -p "$dir/run"
  python3 "$HERE/hdc_dataset.py" classification "$dir/dataset"
  # 6238 encodings, initial updates and training launches (3 tasks each), 1559 inferences
  # (3 tasks), the projection matrix's 2 tasks and 2 norms.
  compare_hdc hd-classification "$dir" out.cpu.txt "${HD_CLASSIFICATION_NODES:-42109}" 1 || return 0
  grep -qE '^Test accuracy = (1|0\.[0-9]+)$' "$dir/seq.out" ||
    fail "hd-classification: the sequential build prints no test accuracy"
  [[ ${HDC_OPENCL:-0} == 1 ]] || return 0
  # Its scoring and arg-max tasks hint DEVICE: with GPU_TARGET they are OpenCL kernels.
  local ocl="$WORK/hd-classification-opencl"
  mkdir -p "$ocl/run"
  ln -sfn "$dir/dataset" "$ocl/dataset"
  ln -sf "$dir/seq" "$ocl/seq"
  if ! (cd "$ocl" && "$HPVMCC" --target=opencl -DDEVICE=GPU_TARGET -O3 -fno-exceptions \
          -I "$(dirname "$src")" "$src" -o graph) >"$ocl/graph-build.log" 2>&1; then
    fail "hd-classification (opencl): hpvm-cc --target=opencl fails to compile:"
    excerpt "$ocl/graph-build.log"
    return 0
  fi
  compare_hdc "hd-classification (opencl)" "$ocl" out.cpu.txt \
    "${HD_CLASSIFICATION_NODES:-42109}" 1 || return 0
  grep -q 'on opencl' "$ocl/graph.err" ||
    fail "hd-classification (opencl): no node ran on an OpenCL device"
}

# (8) xavierrouth/HD-Clustering Hetero-C++/src/host.cpp: k-means over hypervectors, 2
# epochs, on a synthetic data set; writes out.txt (each point's cluster).
check_hd_clustering() {
  local src dir="$WORK/hd-clustering"
  find_first src "$PROGRAMS/HD-Clustering/Hetero-C++/src/host.cpp"
  [[ -n $src ]] || { echo "SKIP hd-clustering: no HD-Clustering under $PROGRAMS"; return 0; }
  build hd-clustering "$dir" -- -O3 -fno-exceptions -I "$(dirname "$src")" "$src" || return 0
  mkdir -p "$dir/run"
  python3 "$HERE/hdc_dataset.py" clustering "$dir/dataset"
  compare_hdc hd-clustering "$dir" out.txt "${HD_CLUSTERING_NODES:-5}" 2 || return 0
  [[ ${HDC_OPENCL:-0} == 1 ]] || return 0
  # Its scoring and labelling tasks hint DEVICE: with GPU_TARGET they may be OpenCL kernels.
  local ocl="$WORK/hd-clustering-opencl"
  mkdir -p "$ocl/run"
  ln -sfn "$dir/dataset" "$ocl/dataset"
  ln -sf "$dir/seq" "$ocl/seq"
  if ! (cd "$ocl" && "$HPVMCC" --target=opencl -DDEVICE=GPU_TARGET -O3 -fno-exceptions \
          -I "$(dirname "$src")" "$src" -o graph) >"$ocl/graph-build.log" 2>&1; then
    fail "hd-clustering (opencl): hpvm-cc --target=opencl fails to compile:"
    excerpt "$ocl/graph-build.log"
    return 0
  fi
  compare_hdc "hd-clustering (opencl)" "$ocl" out.txt "${HD_CLUSTERING_NODES:-5}" 2 || return 0
}

# (9) IBM/scheduler-library examples/mini-era, the EPOCHS fork's HPVM build (Makefile target
# hpvm-cpu, hw_config_files/build_local.config): an 8-task graph (radar FFT and its distance,
# Viterbi decoding in 4 steps, the CV stand-in, plan and control) nested in a task of a root
# section, launched once per time step of a trace. Its sources are C++ named .c (the
# Makefile compiles them with clang++): -x c++. Flags: the Makefile's, plus
# -fno-exceptions (its ESP build's) and -std=gnu++14 (HPVM 2.x's clang defaulted to
# C++14; its include/hpvm.h declares __hpvm__init, __hpvm__cleanup and
# __hpvm__isNonZeroLoop noexcept and its include/hetero.h the same without, which C++17
# refuses). Not -DHPVM_BASE_CRIT: that code does not compile with any compiler (undeclared
# names). Its `__hpvm__task` calls are ignored with a warning. Inputs: the repository's own
# traces (the 500-step tt02_0500.new, the 1k-sample radar dictionary). Stdout is compared
# without the lines that report times (usec).
check_mini_era() {
  local base
  find_first base "$PROGRAMS/scheduler-library" "$PROGRAMS/mini-era"
  if [[ -z $base || ! -d "$base/examples/mini-era/src" ]]; then
    echo "SKIP mini-era: no scheduler-library/examples/mini-era under $PROGRAMS"
    return 0
  fi
  local me="$base/examples/mini-era" dir="$WORK/mini-era"
  mkdir -p "$dir/run"
  ln -sfn "$me/traces" "$dir/run/traces"
  local flags=(-O2 -fno-exceptions -std=gnu++14
    -I "$me/include" -I "$base/task_library/include" -DINT_TIME -DUSE_ESP_INTERFACE
    -DNUM_CPU_ACCEL=3 -DNUM_VIT_ACCEL=0 -DNUM_FFT_ACCEL=0 -DNUM_CV_ACCEL=0
    -DMAX_RADAR_LOGN=14 -DBYPASS_KERAS_CV_CODE -DHPVM -DHCC)
  build mini-era "$dir" -- -DDEVICE=CPU_TARGET "${flags[@]}" -x c++ "$me"/src/*.c -x none -lm ||
    return 0
  # 500 time steps, a launch each of the 8 tasks.
  local TIMES_RE=' usec'
  local args=(-T traces/tt02_0500.new -R traces/norm_radar_01k_dictionary.dfn
    -V traces/vit_dictionary.dfn -C traces/objects_dictionary.dfn)
  compare_hdc mini-era "$dir" "" "${MINI_ERA_NODES:-4000}" "${args[@]}" || return 0
  grep -q '^Done\.$' "$dir/seq.out" ||
    fail "mini-era: the sequential build does not end with 'Done.'"
  [[ ${HDC_OPENCL:-0} == 1 ]] || return 0
  # Its Viterbi and CV tasks hint DEVICE: with GPU_TARGET Viterbi is an OpenCL kernel (CV
  # calls usleep: it stays on the CPU). Its launch declares three buffers with sizeof of
  # pointer parameters, 8 bytes (vit_data_in, vit_data_out, vit_depunctured; main.c's arrays
  # are 64 KiB, 64 KiB and MAX_ENCODED_BITS), which one memory never notices but a device's
  # buffers do: the kernel writes past them (on PoCL, heap corruption). This build takes a
  # copy of hpvm_tasks.c with the arrays' sizes.
  local ocl="$WORK/mini-era-opencl"
  mkdir -p "$ocl/run" "$ocl/src"
  ln -sfn "$me/traces" "$ocl/run/traces"
  ln -sf "$dir/seq" "$ocl/seq"
  cp "$me"/src/*.c "$ocl/src/"
  sed -i 's/sizeof(vit_data_in)/(64 * 1024)/; s/sizeof(vit_data_out)/(64 * 1024)/
          s/sizeof(vit_depunctured)/MAX_ENCODED_BITS/' "$ocl/src/hpvm_tasks.c"
  if ! (cd "$ocl" && "$HPVMCC" --target=opencl -DDEVICE=GPU_TARGET "${flags[@]}" \
          -x c++ src/*.c -x none -lm -o graph) >"$ocl/graph-build.log" 2>&1; then
    fail "mini-era (opencl): hpvm-cc --target=opencl fails to compile:"
    excerpt "$ocl/graph-build.log"
    return 0
  fi
  compare_hdc "mini-era (opencl)" "$ocl" "" "${MINI_ERA_NODES:-4000}" "${args[@]}" || return 0
  grep -q '^hpvm-trace: VIT on opencl' "$ocl/graph.err" ||
    fail "mini-era (opencl): its Viterbi task (VIT) did not run on an OpenCL device"
}

echo "hetero-check: programs from $PROGRAMS, hpvm-cc $HPVMCC"
check_matmul
check_era_tmprun
check_hpvm_onnx
check_hpvm_onnx_revisions
check_prism
check_hd_classification
check_hd_clustering
check_mini_era
[[ $ERA_FULL == 1 ]] && check_era_full
echo "hetero-check: $PASSED passed, $FAILED failed"
[[ $FAILED == 0 ]]
