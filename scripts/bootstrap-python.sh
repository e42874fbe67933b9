#!/usr/bin/env bash
# The Python package's environment: a virtual environment in BUILD/python-venv with the
# pinned test dependencies (python/requirements-test.txt, from PyPI; installed again only
# when that file changes), and the package itself installed from python/ (`pip install`,
# a regular install, redone each time so that it matches the sources).
# Usage: scripts/bootstrap-python.sh [BUILD_DIR]; prints the venv's python (an absolute path).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p "${1:-build}"
build=$(cd "${1:-build}" && pwd)
venv="$build/python-venv"
requirements=python/requirements-test.txt
stamp="$venv/.requirements.sha256"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2
fi
want=$(sha256sum "$requirements" | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "bootstrap-python: installing $(grep -v '^#' "$requirements" | tr '\n' ' ')" >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements" >&2
  echo "$want" > "$stamp"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation \
  --no-deps --force-reinstall ./python >&2
# setuptools leaves its build directory in the source tree.
rm -rf python/build python/hpvm.egg-info
echo "$venv/bin/python"
