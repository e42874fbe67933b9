#!/usr/bin/env bash
# Installs every system package the project needs; a no-op when they are all present.
set -euo pipefail

PACKAGES=(
  # Compiler infrastructure: Debian's LLVM/MLIR 22, the pinned toolchain.
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22 lld-22
  # Build; python3-venv for the Python package's test environment (scripts/bootstrap-python.sh).
  cmake ninja-build ccache make python3 python3-venv
  # pkg-config, for the test of the installed runtime's hpvm_rt.pc.
  pkgconf
  # SPIR-V and OpenCL (PoCL gives a CPU OpenCL device for tests).
  spirv-tools ocl-icd-opencl-dev pocl-opencl-icd llvm-spirv-15
  # Graph pictures for the demo.
  graphviz
  # Compiler runtimes used by sanitizer builds and the OpenMP baselines.
  libclang-rt-22-dev libomp-22-dev
  # gcc -fopenmp (libgomp): the C versions the benchmark drivers check against, also built by
  # the auto-tuner's tests (python/hpvm/tune/programs.py).
  gcc
  # MPI (Open MPI): the runtime's MPI layer, built and tested when present (docs/Distributed.md).
  openmpi-bin libopenmpi-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  # dpkg-query prints "install ok installed" only for fully installed packages.
  if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "bootstrap: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
