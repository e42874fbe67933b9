#!/usr/bin/env bash
# bench-runtime.sh - builds the runtime benchmarks with gcc -O3 (OpenMP baseline: libgomp) and
# runs them once: parallel-for launch overhead vs OpenMP, 2-stage streaming vs a mutex queue.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build/runtime-bench"
LAUNCHER=()
if command -v ccache >/dev/null 2>&1; then LAUNCHER=(-DCMAKE_C_COMPILER_LAUNCHER="$ROOT/scripts/ccache-launcher.sh"); fi

mkdir -p "$ROOT/build"
cmake -S "$ROOT/runtime" -B "$BUILD" -G Ninja "${LAUNCHER[@]}" \
  -DCMAKE_C_COMPILER="${HPVM_BENCH_CC:-gcc}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_FLAGS_RELEASE="-O3 -DNDEBUG" -DHPVM_RUNTIME_BUILD_TESTS=OFF \
  -DHPVM_RUNTIME_BUILD_BENCHMARKS=ON >"$BUILD.configure.log" 2>&1 ||
  { cat "$BUILD.configure.log"; exit 1; }
ninja -C "$BUILD" -j 2 hpvm_rt_bench

{
  echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "# uptime before: $(uptime); compiler: $("${HPVM_BENCH_CC:-gcc}" --version | head -1)"
  "$BUILD/bench/hpvm_rt_bench" "$@"
  echo "# uptime after: $(uptime)"
} | tee "$BUILD/results.txt"
