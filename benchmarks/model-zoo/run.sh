#!/usr/bin/env bash
# run.sh - models from the field: torchvision's model definitions (random weights), exported by
# hpvm.from_torch at run time, compiled by hpvm, checked against onnxruntime and timed
# (benchmarks/model-zoo/zoo.py; its --help lists the options). torch is several GB: its
# environment (BUILD/zoo-venv, scripts/bootstrap-zoo.sh) is made on first use, and none of this
# is part of `make check`.
#
# Usage: bash benchmarks/model-zoo/run.sh [--build BUILD_DIR] [zoo.py options...]
#   e.g. --only resnet18,vit_b_16 --batch 1,8 --rounds 3
# or:    bash benchmarks/model-zoo/run.sh [--build BUILD_DIR] --transformers [options...]
#   Hugging Face transformers from small configs (transformers_zoo.py; its --help lists the
#   options), e.g. --transformers --only bert,llama --dynamo
# or:    bash benchmarks/model-zoo/run.sh [--build BUILD_DIR] --generation [options...]
#   greedy generation with a key/value cache, GPT-2 and a Llama-style decoder
#   (generation_zoo.py; its --help lists the options), e.g. --generation --time gpt2_small
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="$ROOT/build"
if [[ ${1:-} == --build ]]; then
  BUILD="$2"
  shift 2
fi
BUILD="$(cd "$BUILD" && pwd)"
[[ -x $BUILD/bin/hpvm-cc ]] || { echo "run.sh: no $BUILD/bin/hpvm-cc (build first)" >&2; exit 2; }
PY="$(bash "$ROOT/scripts/bootstrap-zoo.sh" "$BUILD")"
export HPVM_HOME="$BUILD" HPVM_CACHE_DIR="$BUILD/zoo-cache" PYTHONPATH="$ROOT/python"
export OPENBLAS_NUM_THREADS=1
SCRIPT=zoo.py
if [[ ${1:-} == --transformers ]]; then
  SCRIPT=transformers_zoo.py
  shift
elif [[ ${1:-} == --generation ]]; then
  SCRIPT=generation_zoo.py
  shift
fi
exec "$PY" "$ROOT/benchmarks/model-zoo/$SCRIPT" --work "$BUILD/zoo-work" "$@"
