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

echo "hetero-check: programs from $PROGRAMS, hpvm-cc $HPVMCC"
check_matmul
check_era_tmprun
check_hpvm_onnx
[[ $ERA_FULL == 1 ]] && check_era_full
echo "hetero-check: $PASSED passed, $FAILED failed"
[[ $FAILED == 0 ]]
