#!/usr/bin/env bash
# The model zoo's environment (benchmarks/model-zoo): a virtual environment in
# BUILD/zoo-venv with torch, torchvision, onnx and onnxruntime from PyPI (pinned in
# benchmarks/model-zoo/requirements.txt; installed again only when that file changes).
# Not part of `make check`: torch is several GB. Usage: scripts/bootstrap-zoo.sh [BUILD_DIR];
# prints the venv's python.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p "${1:-build}"
build=$(cd "${1:-build}" && pwd)
venv="$build/zoo-venv"
requirements=benchmarks/model-zoo/requirements.txt
stamp="$venv/.requirements.sha256"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2
fi
want=$(sha256sum "$requirements" | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "bootstrap-zoo: installing $(grep -v '^#' "$requirements" | tr '\n' ' ')" >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements" >&2
  echo "$want" > "$stamp"
fi
echo "$venv/bin/python"
