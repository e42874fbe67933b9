#!/usr/bin/env bash
# The approximate convolutions (hpvm_rt_tensor_conv2d_approx_f32) against the exact one
# (benchmarks/tensor/approx_bench.c), against BUILD/runtime/libhpvm_rt.a (built first).
# Usage: benchmarks/tensor/run_approx.sh [BUILD_DIR] [ROUNDS] [--all]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:-build}" && pwd)
ninja -C "$build" runtime/libhpvm_rt.a >/dev/null
cc=$(command -v clang-22 || command -v clang || command -v cc)
mkdir -p "$build/benchmarks"
"$cc" -O2 -Iruntime/include benchmarks/tensor/approx_bench.c "$build/runtime/libhpvm_rt.a" \
  -lpthread -lm -ldl -o "$build/benchmarks/approx_bench"
exec "$build/benchmarks/approx_bench" "${2:-30}" ${3:+"$3"}
