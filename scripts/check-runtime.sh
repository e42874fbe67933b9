#!/usr/bin/env bash
# check-runtime.sh - builds the HPVM runtime standalone (normal, ASan+UBSan, TSan) and runs its
# tests in each; exits non-zero if anything fails.  Usage: scripts/check-runtime.sh [-j N]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS=2
if [[ "${1:-}" == "-j" && -n "${2:-}" ]]; then JOBS="$2"; fi

# Sanitizer builds need clang (clang-22 on the project machines) and its runtime libraries.
CLANG="${HPVM_CLANG:-$(command -v clang-22 || command -v clang || true)}"
LAUNCHER=()
if command -v ccache >/dev/null 2>&1; then LAUNCHER=(-DCMAKE_C_COMPILER_LAUNCHER="$ROOT/scripts/ccache-launcher.sh"); fi

# configure_and_test NAME SCALE [cmake args...]: builds build/NAME and runs its tests.
# SCALE is HPVM_STRESS_SCALE: stress tests divide their item counts by it.  Sanitizer builds
# run 5-20x slower, so they use a reduced count (full count in the normal build).
configure_and_test() {
  local name="$1" scale="$2"
  shift 2
  local dir="$ROOT/build/$name"
  echo "=== $name: configure and build ==="
  cmake -S "$ROOT/runtime" -B "$dir" -G Ninja "${LAUNCHER[@]}" "$@" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; return 1; }
  ninja -C "$dir" -j "$JOBS"
  echo "=== $name: test (HPVM_STRESS_SCALE=$scale) ==="
  (cd "$dir" && HPVM_STRESS_SCALE="$scale" ctest --output-on-failure --timeout 240 -j 1)
}

mkdir -p "$ROOT/build"
start=$(date +%s)
configure_and_test runtime-tests 1 -DCMAKE_BUILD_TYPE=RelWithDebInfo

if [[ -z "$CLANG" ]]; then
  echo "check-runtime: no clang found: cannot build the sanitizer configurations" >&2
  exit 1
fi
SANITIZER_COMMON=(-DCMAKE_C_COMPILER="$CLANG" -DCMAKE_BUILD_TYPE=RelWithDebInfo
                  -DHPVM_RUNTIME_BUILD_BENCHMARKS=OFF)
ASAN_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
configure_and_test runtime-asan 2 "${SANITIZER_COMMON[@]}" \
  -DCMAKE_C_FLAGS="$ASAN_FLAGS" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined"
TSAN_FLAGS="-fsanitize=thread -fno-omit-frame-pointer"
configure_and_test runtime-tsan 5 "${SANITIZER_COMMON[@]}" \
  -DCMAKE_C_FLAGS="$TSAN_FLAGS" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread"
echo "check-runtime: all runtime tests passed in normal, ASan+UBSan and TSan builds ($(($(date +%s) - start)) s)"
