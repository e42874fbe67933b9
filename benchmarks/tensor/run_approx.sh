#!/usr/bin/env bash
# The approximate convolutions (hpvm_rt_tensor_conv2d_approx_f32) against the exact one
# (benchmarks/tensor/approx_bench.c), against BUILD/runtime/libhpvm_rt.a (built first); the
# fp16 / bf16 products against the f32 one (benchmarks/tensor/half_bench.c); then reduction
# sampling against exact reductions (benchmarks/tensor/reduction_bench.py), compiled
# through the Python package installed into BUILD/python-venv.
# Usage: benchmarks/tensor/run_approx.sh [BUILD_DIR] [ROUNDS] [--all]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:-build}" && pwd)
ninja -C "$build" runtime/libhpvm_rt.a >/dev/null
cc=$(command -v clang-22 || command -v clang || command -v cc)
mkdir -p "$build/benchmarks"
"$cc" -O2 -Iruntime/include benchmarks/tensor/approx_bench.c "$build/runtime/libhpvm_rt.a" \
  -lpthread -lm -ldl -o "$build/benchmarks/approx_bench"
"$build/benchmarks/approx_bench" "${2:-30}" ${3:+"$3"}
echo
# The precision knobs of products (fp16 / bf16 storage) against the f32 product.
"$cc" -O2 -Iruntime/include benchmarks/tensor/half_bench.c "$build/runtime/libhpvm_rt.a" \
  -lpthread -lm -ldl -o "$build/benchmarks/half_bench"
"$build/benchmarks/half_bench" "${2:-30}"
echo
# Sampled reductions are code the compiler generates (no runtime kernel): timed as compiled.
python=$(bash scripts/bootstrap-python.sh "$build")
export HPVM_HOME=$build HPVM_CACHE_DIR=$build/python-cache
exec "$python" benchmarks/tensor/reduction_bench.py --rounds "${2:-30}"
