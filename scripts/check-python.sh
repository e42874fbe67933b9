#!/usr/bin/env bash
# The Python package's tests (python/tests, pytest) against this build's tools: the package
# installed into BUILD/python-venv, the compiled graphs cached in BUILD/python-cache.
# Usage: scripts/check-python.sh [BUILD_DIR] [pytest arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
python=$(bash scripts/bootstrap-python.sh "$build")
export HPVM_HOME=$PWD/$build HPVM_CACHE_DIR=$PWD/$build/python-cache
# Run from the tests directory so that `import hpvm` is the installed package, not python/hpvm.
cd python/tests
exec "$PWD/../../$python" -m pytest -q -p no:cacheprovider "$@"
