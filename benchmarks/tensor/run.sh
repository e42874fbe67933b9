#!/usr/bin/env bash
# Tensor graphs through the Python package installed into BUILD/python-venv: by default ONNX
# models on the CPU against onnxruntime (benchmarks/tensor/bench.py); with SCRIPT=devices.py,
# the tensor kernels on the OpenCL device against the CPU backend (benchmarks/tensor/devices.py).
# Usage: benchmarks/tensor/run.sh [BUILD_DIR] [SCRIPT]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:-build}" && pwd)
python=$(bash scripts/bootstrap-python.sh "$build")
export HPVM_HOME=$build HPVM_CACHE_DIR=$build/python-cache
exec "$python" "benchmarks/tensor/${2:-bench.py}"
