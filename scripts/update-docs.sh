#!/usr/bin/env bash
# Regenerates the TableGen'd references in docs/ (--write) or fails when one is stale (--check):
# docs/Dialect/HPVM.md (ops, attributes, types), docs/Passes.md (conversions, then the passes
# the lowering pipelines add around them) and docs/Transforms.md (graph transforms).
set -euo pipefail
mode=${1:---check}
build=${2:-build}
cd "$(dirname "$0")/.."

ninja -C "$build" HPVMDialectDocGen HPVMConversionPassesDocGen HPVMPipelinesPassesDocGen \
  HPVMTransformsPassesDocGen >/dev/null
status=0
# The text of TARGET: the header, then each generated file (or, for a "## heading|text" argument,
# a section heading with its introduction).
# content GENERATED...
content() {
  echo "<!-- Generated from TableGen by 'make docs'; do not edit. -->"
  local part
  for part in "$@"; do
    if [ "${part#\#\# }" != "$part" ]; then
      printf '\n%s\n\n%s\n' "${part%%|*}" "${part#*|}"
    else
      cat "$build/docs/HPVM/$part"
    fi
  done
}
# sync TARGET GENERATED...
sync() {
  local target="$1"
  shift
  if [ "$mode" = "--write" ]; then
    mkdir -p "$(dirname "$target")"
    content "$@" > "$target"
    echo "docs: regenerated $target"
  elif diff -q <(content "$@") "$target" >/dev/null 2>&1; then
    echo "check-docs: $target is current"
  else
    echo "check-docs: $target is out of date; run 'make docs' and commit it"
    status=1
  fi
}
sync docs/Dialect/HPVM.md HPVMDialect.md
sync docs/Passes.md \
  "## Conversions|The conversions of the hpvm dialect (include/HPVM/Conversion/Passes.td)." \
  HPVMConversionPasses.md \
  "## Passes of the lowering pipelines|The steps that hpvm-lower-to-cpu-pipeline and hpvm-lower-to-llvm-pipeline add around the conversions (include/HPVM/Pipelines/Passes.td), each runnable alone from hpvm-opt." \
  HPVMPipelinesPasses.md
sync docs/Transforms.md HPVMTransformsPasses.md
exit $status
