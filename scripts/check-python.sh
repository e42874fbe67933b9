#!/usr/bin/env bash
# The Python package's tests (python/tests, pytest) against this build's tools: the package
# installed into BUILD/python-venv, the compiled graphs cached in BUILD/python-cache.
# Usage: scripts/check-python.sh [BUILD_DIR] [pytest arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
shift || true
python=$(bash scripts/bootstrap-python.sh "$build")
export HPVM_HOME=$build HPVM_CACHE_DIR=$build/python-cache
# Run from the tests directory so that `import hpvm` is the installed package, not python/hpvm.
cd python/tests
exec "$python" -m pytest -q -p no:cacheprovider "$@"
