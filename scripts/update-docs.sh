#!/usr/bin/env bash
# Regenerates the TableGen'd references in docs/ (--write) or fails when one is stale (--check):
# docs/Dialect/HPVM.md (ops, attributes, types), docs/Passes.md (conversions) and
# docs/Transforms.md (graph transforms).
set -euo pipefail
mode=${1:---check}
build=${2:-build}
cd "$(dirname "$0")/.."

ninja -C "$build" HPVMDialectDocGen HPVMConversionPassesDocGen HPVMTransformsPassesDocGen >/dev/null
status=0
# sync GENERATED TARGET
sync() {
  local generated="$build/docs/HPVM/$1" target="$2"
  local header="<!-- Generated from TableGen by 'make docs'; do not edit. -->"
  if [ "$mode" = "--write" ]; then
    mkdir -p "$(dirname "$target")"
    { echo "$header"; cat "$generated"; } > "$target"
    echo "docs: regenerated $target"
  elif diff -q <({ echo "$header"; cat "$generated"; }) "$target" >/dev/null 2>&1; then
    echo "check-docs: $target is current"
  else
    echo "check-docs: $target is out of date; run 'make docs' and commit it"
    status=1
  fi
}
sync HPVMDialect.md docs/Dialect/HPVM.md
sync HPVMConversionPasses.md docs/Passes.md
sync HPVMTransformsPasses.md docs/Transforms.md
exit $status
