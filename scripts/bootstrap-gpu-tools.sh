#!/usr/bin/env bash
# What `make bench-gpu-static` reads machine code with beyond the CUDA toolkit's ptxas and nvcc:
# nvdisasm (SASS of a cubin), which the toolkit here lacks, from PyPI (nvidia-cuda-nvdisasm)
# into a virtual environment of its own, BUILD_DIR/gpu-tools-venv; installed again only when
# the pinned version changes. Prints the nvdisasm to use: NVDISASM or the toolkit's when there
# is one, else the venv's; nothing (exit 0) when it cannot be had (no network): the comparison
# then reports registers and spills without the SASS columns.
# Usage: scripts/bootstrap-gpu-tools.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
NVDISASM_VERSION=13.2.86
for candidate in "${NVDISASM:-}" "$(command -v nvdisasm || true)" \
                 "${CUDA_HOME:-/usr/local/cuda}/bin/nvdisasm"; do
  if [ -n "$candidate" ] && [ -x "$candidate" ]; then
    echo "$candidate"
    exit 0
  fi
done
mkdir -p "${1:-build}"
venv="$(cd "${1:-build}" && pwd)/gpu-tools-venv"
stamp="$venv/.nvdisasm-version"
if [ "$(cat "$stamp" 2>/dev/null)" != "$NVDISASM_VERSION" ]; then
  echo "bootstrap-gpu-tools: installing nvidia-cuda-nvdisasm==$NVDISASM_VERSION" >&2
  if ! { [ -x "$venv/bin/python" ] || python3 -m venv "$venv" >&2; } ||
     ! "$venv/bin/python" -m pip install -q --disable-pip-version-check \
         "nvidia-cuda-nvdisasm==$NVDISASM_VERSION" >&2; then
    echo "bootstrap-gpu-tools: nvdisasm not installed: the SASS columns will say n/a" >&2
    exit 0
  fi
  echo "$NVDISASM_VERSION" > "$stamp"
fi
found=$(find "$venv" -path '*/bin/nvdisasm' -type f | head -1)
[ -n "$found" ] && echo "$found"
exit 0
