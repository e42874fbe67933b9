#!/usr/bin/env bash
# run.sh - the release's ApproxHPVM DNN programs, compiled unchanged by hpvm-cc and checked against
# onnxruntime on seeded weights and inputs (README.md; the logic: dnn_check.py and dnncheck/).
#
# Usage: bash benchmarks/dnn-check/run.sh RELEASE_ROOT [--build BUILD_DIR] [--only name,name]
#            [--batches K] [--work DIR] [--bench ROUNDS] [--threads N] [--timeout S]
#            [--flags "HPVM-CC FLAGS"] [--reference-only] [--save-onnx] [--float64-check]
#   RELEASE_ROOT: the directory that holds hpvm/test/dnn_benchmarks (never copied here).
#   BUILD_DIR (default build): hpvm-cc from BUILD_DIR/bin, Python (numpy, onnx, onnxruntime)
#   from BUILD_DIR/python-venv (made by `make python`). Work files: BUILD_DIR/dnn-check.
# Exit status 1 when a selected program fails to parse, compile, run or match; 2 for usage.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/benchmarks/dnn-check"

if [[ $# -lt 1 || $1 == -h || $1 == --help ]]; then
  sed -n '4,11p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi

# Only --build matters here (where the Python is); every argument goes on to dnn_check.py.
BUILD="$ROOT/build"
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --build) BUILD="${args[i + 1]:-}" ;;
    --build=*) BUILD="${args[i]#--build=}" ;;
  esac
done
[[ -n $BUILD ]] || { echo "run.sh: --build needs a directory" >&2; exit 2; }
PY="$BUILD/python-venv/bin/python"
if [[ ! -x $PY ]]; then
  echo "run.sh: no $PY (the build's Python with numpy, onnx and onnxruntime; make python)" >&2
  exit 2
fi
exec "$PY" "$HERE/dnn_check.py" "$@" --build "$BUILD"
