#!/usr/bin/env bash
# fuzz.sh - builds and runs the libFuzzer targets (docs/Reliability.md).
#
#   scripts/fuzz.sh check [BUILD_DIR]       make check's stage: fixed seed and budgets, under 60 s
#   scripts/fuzz.sh run SECONDS [FUZZ_BUILD_DIR] make fuzz: SECONDS per target, corpus kept in
#                                           test/Fuzz/corpus/<target> (minimised afterwards)
#   scripts/fuzz.sh run SECONDS FUZZ_BUILD_DIR TARGET   one target only (api, ir, hpvmc or python)
#
# Targets: api   runtime API sequences (runtime/fuzz/api_fuzz.c, build/runtime-fuzz)
#          ir    bytes -> parser, verifier, round trip, CPU pipeline (tools/hpvm-fuzz)
#          hpvmc HPVM-C -> clang -> import -> hpvm-raise-c -> CPU pipeline (tools/hpvm-fuzz)
#          python (run only) the Python package's hypothesis fuzzer, python/tests/test_fuzz.py:
#                random ONNX models against onnxruntime, hostile call arguments; against the
#                main build, HPVM_FUZZ_EXAMPLES (default SECONDS) examples per test
# check runs every regression input (test/Fuzz/regressions/<target>), the kept corpus and the
# seeds once, then mutates for a short fixed budget with -seed=1; the IR and HPVM-C targets come
# from the main build there (their libraries uninstrumented: a crash and regression net).  run
# uses build/fuzz, a second configuration whose own code is compiled with libFuzzer coverage
# and ASan+UBSan (HPVM_FUZZ_INSTRUMENT=ON), so the search is guided by the compiler's code.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODE="${1:-check}"
CLANG="${HPVM_CLANG:-$(command -v clang-22 || true)}"
[[ -n "$CLANG" ]] || { echo "fuzz.sh: clang-22 is needed (scripts/bootstrap.sh)" >&2; exit 1; }
LAUNCHER=()
if command -v ccache >/dev/null 2>&1; then LAUNCHER=(-DCMAKE_C_COMPILER_LAUNCHER="$ROOT/scripts/ccache-launcher.sh"); fi

# The runtime with coverage + ASan + UBSan, and its API fuzzer (cheap C: always rebuilt).
build_runtime_fuzzer() {
  local dir="$ROOT/build/runtime-fuzz" flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
  mkdir -p "$ROOT/build"
  cmake -S "$ROOT/runtime" -B "$dir" -G Ninja "${LAUNCHER[@]}" -DCMAKE_C_COMPILER="$CLANG" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHPVM_RUNTIME_BUILD_TESTS=OFF \
    -DHPVM_RUNTIME_BUILD_BENCHMARKS=OFF -DHPVM_RUNTIME_BUILD_SHARED=OFF \
    -DHPVM_RUNTIME_BUILD_FUZZERS=ON -DCMAKE_C_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; return 1; }
  ninja -C "$dir" -j 2 hpvm_rt_api_fuzz hpvm_rt_misuse_table >/dev/null
}

# Seeds, regenerated from the tests every time (never stale): every .mlir test split at its
# `// -----` markers, and the HPVM-C run tests.
make_seeds() {
  local out="$1"
  rm -rf "$out"
  mkdir -p "$out/ir" "$out/hpvmc" "$out/api"
  python3 - "$ROOT" "$out/ir" <<'PY'
import pathlib, re, sys
root, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
n = 0
for path in sorted((root / "test").rglob("*.mlir")):
    for part in re.split(r"^// -----\s*$", path.read_text(), flags=re.M):
        if part.strip():
            (out / f"{path.stem}-{n}.mlir").write_text(part)
            n += 1
PY
  cp "$ROOT"/test/HPVMC/run/*.c "$out/hpvmc/"
  # A few API programs to start from (opcode, then arguments; see api_fuzz.c).
  printf '\x00\x02\x01\x02\x00\x02\x00\x02\x03\x00\x02\x02' >"$out/api/copies"
  printf '\x0b\x01\x01\x00\x02\x00\x02\x05\x00\x00\x40\x01\x05\x04\x00' >"$out/api/pipeline"
  printf '\x09\x04\xff\x00\x00\x00\x00\x00\x03\x00\x01\x01\x02\x02\x03' >"$out/api/graph"
}

# run_target NAME BINARY SECONDS CORPUS_MODE [libFuzzer flags...]
#   CORPUS_MODE keep: new units go to test/Fuzz/corpus/NAME; scratch: to a temporary directory.
run_target() {
  local name="$1" binary="$2" seconds="$3" corpus_mode="$4"
  shift 4
  local corpus="$ROOT/test/Fuzz/corpus/$name" regressions="$ROOT/test/Fuzz/regressions/$name"
  local artifacts="$ROOT/build/fuzz-artifacts/$name/" log="$ROOT/build/fuzz-logs/$name.log"
  mkdir -p "$corpus" "$regressions" "$artifacts" "$(dirname "$log")"
  [[ -x "$binary" ]] || { echo "fuzz.sh: $binary is missing (make build)" >&2; return 1; }
  # Regression inputs first, one by one: each must pass.
  local inputs=("$regressions"/*)
  if [[ -e "${inputs[0]}" ]]; then
    "$binary" -timeout=60 -rss_limit_mb=4096 "${inputs[@]}" >"$log.regressions" 2>&1 ||
      { tail -40 "$log.regressions"; echo "fuzz.sh: $name: a regression input fails" >&2; return 1; }
  fi
  local first="$corpus"
  if [[ "$corpus_mode" == scratch ]]; then first="$SCRATCH/$name"; mkdir -p "$first"; fi
  echo "=== fuzz $name: ${seconds} s ==="
  if ! "$binary" -seed=1 -max_total_time="$seconds" -timeout=25 -rss_limit_mb=4096 \
      -print_final_stats=1 -artifact_prefix="$artifacts" "$@" \
      "$first" "$corpus" "$SEEDS/$name" >"$log" 2>&1; then
    grep -E "ERROR|invariant|SUMMARY|Test unit written" "$log" | head -20 >&2
    echo "fuzz.sh: $name found a crash, hang or leak: $log, input in $artifacts" >&2
    return 1
  fi
  grep -E "^#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::new_units_added" "$log" |
    sed "s/^/  $name: /"
}

SCRATCH="$(mktemp -d)"
SEEDS="$SCRATCH/seeds"
trap 'rm -rf "$SCRATCH"' EXIT
make_seeds "$SEEDS"

case "$MODE" in
check)
  BUILD_DIR="${2:-$ROOT/build}"
  build_runtime_fuzzer
  start=$(date +%s)
  # 46 s of fuzzing in all (libFuzzer's time includes replaying the corpus first), under 60 s
  # with the regression inputs and the start-up.
  run_target api "$ROOT/build/runtime-fuzz/fuzz/hpvm_rt_api_fuzz" 10 scratch -max_len=512
  run_target ir "$BUILD_DIR/bin/hpvm-ir-fuzz" 18 scratch -max_len=16384
  run_target hpvmc "$BUILD_DIR/bin/hpvm-c-fuzz" 18 scratch -max_len=16384
  echo "fuzz check: no crash, hang or leak ($(($(date +%s) - start)) s)"
  ;;
run)
  SECONDS_EACH="${2:?usage: fuzz.sh run SECONDS [FUZZ_BUILD_DIR] [TARGET]}"
  FUZZ_BUILD="${3:-$ROOT/build/fuzz}"
  ONLY="${4:-}"
  # The instrumented configuration must not land on a normal build (its libraries would then
  # need the sanitizers' runtimes, and every tool would fail to link).
  if [[ -f "$FUZZ_BUILD/CMakeCache.txt" ]] &&
     ! grep -q '^HPVM_FUZZ_INSTRUMENT:BOOL=ON' "$FUZZ_BUILD/CMakeCache.txt"; then
    echo "fuzz.sh run: $FUZZ_BUILD is a normal build; give a directory of its own" \
         "(default build/fuzz): fuzz.sh run SECONDS [FUZZ_BUILD_DIR] [TARGET]" >&2
    exit 2
  fi
  build_runtime_fuzzer
  if [[ -z "$ONLY" || "$ONLY" != api ]]; then
    cmake -G Ninja -S "$ROOT" -B "$FUZZ_BUILD" -DHPVM_FUZZ_INSTRUMENT=ON \
      -DCMAKE_BUILD_TYPE=Release >"$FUZZ_BUILD.configure.log" 2>&1 ||
      { cat "$FUZZ_BUILD.configure.log"; exit 1; }
    ninja -C "$FUZZ_BUILD" -j 2 hpvm-ir-fuzz hpvm-c-fuzz
  fi
  for target in api ir hpvmc; do
    [[ -n "$ONLY" && "$ONLY" != "$target" ]] && continue
    case "$target" in
    api) run_target api "$ROOT/build/runtime-fuzz/fuzz/hpvm_rt_api_fuzz" "$SECONDS_EACH" keep -max_len=512 ;;
    ir) run_target ir "$FUZZ_BUILD/bin/hpvm-ir-fuzz" "$SECONDS_EACH" keep -max_len=16384 ;;
    hpvmc) run_target hpvmc "$FUZZ_BUILD/bin/hpvm-c-fuzz" "$SECONDS_EACH" keep -max_len=16384 ;;
    esac
    # Keep the corpus small: only the units that add coverage beyond the seeds.
    bin="$ROOT/build/runtime-fuzz/fuzz/hpvm_rt_api_fuzz"
    [[ "$target" == ir ]] && bin="$FUZZ_BUILD/bin/hpvm-ir-fuzz"
    [[ "$target" == hpvmc ]] && bin="$FUZZ_BUILD/bin/hpvm-c-fuzz"
    minimal="$SCRATCH/min-$target"
    mkdir -p "$minimal"
    "$bin" -merge=1 -timeout=25 "$minimal" "$ROOT/test/Fuzz/corpus/$target" >/dev/null 2>&1
    rm -rf "$ROOT/test/Fuzz/corpus/$target"
    mv "$minimal" "$ROOT/test/Fuzz/corpus/$target"
    echo "  $target: corpus kept: $(ls "$ROOT/test/Fuzz/corpus/$target" | wc -l) files"
  done
  if [[ -z "$ONLY" || "$ONLY" == python ]]; then
    # The Python surface (hypothesis): random examples instead of make check's fixed ones,
    # about one compile a second; the graphs it compiles are cached in the scratch folder.
    examples="${HPVM_FUZZ_EXAMPLES:-$SECONDS_EACH}"
    echo "=== fuzz python: $examples examples per test ==="
    python=$(bash "$ROOT/scripts/bootstrap-python.sh" "$ROOT/build")
    (cd "$ROOT/python/tests" && HPVM_HOME="$ROOT/build" HPVM_CACHE_DIR="$SCRATCH/python-cache" \
      HYPOTHESIS_STORAGE_DIRECTORY="$SCRATCH/hypothesis" HPVM_FUZZ_EXAMPLES="$examples" \
      "$python" -m pytest -q -p no:cacheprovider test_fuzz.py) ||
      { echo "fuzz.sh: python: the fuzzer found a failing example (printed above, with" \
             "@reproduce_failure to replay it)" >&2; exit 1; }
  fi
  ;;
*)
  echo "usage: fuzz.sh check [BUILD_DIR] | run SECONDS [FUZZ_BUILD_DIR] [TARGET]" >&2
  exit 2
  ;;
esac
