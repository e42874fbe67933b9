#!/usr/bin/env bash
# Tensor kernels on the OpenCL device (PoCL) against the CPU backend
# (benchmarks/tensor/devices.py). Usage: benchmarks/tensor/run_devices.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:-build}" && pwd)
python=$(bash scripts/bootstrap-python.sh "$build")
export HPVM_HOME=$build HPVM_CACHE_DIR=$build/python-cache
exec "$python" benchmarks/tensor/devices.py
