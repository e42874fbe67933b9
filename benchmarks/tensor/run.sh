#!/usr/bin/env bash
# ONNX models on the CPU: hpvm against onnxruntime (benchmarks/tensor/bench.py), with the
# Python package installed into BUILD/python-venv. Usage: benchmarks/tensor/run.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:-build}" && pwd)
python=$(bash scripts/bootstrap-python.sh "$build")
export HPVM_HOME=$build HPVM_CACHE_DIR=$build/python-cache
exec "$python" benchmarks/tensor/bench.py
