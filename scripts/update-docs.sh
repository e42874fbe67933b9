#!/usr/bin/env bash
# Regenerates docs/Dialect/HPVM.md from TableGen (--write) or fails when it is stale (--check).
set -euo pipefail
mode=${1:---check}
build=${2:-build}
cd "$(dirname "$0")/.."

ninja -C "$build" HPVMDialectDocGen >/dev/null
target=docs/Dialect/HPVM.md
generated() {
  echo "<!-- Generated from include/HPVM/Dialect/HPVM/IR/*.td by 'make docs'; do not edit. -->"
  cat "$build/docs/HPVM/HPVMDialect.md"
}
if [ "$mode" = "--write" ]; then
  mkdir -p docs/Dialect
  generated > "$target"
  echo "docs: regenerated $target"
elif diff -q <(generated) "$target" >/dev/null 2>&1; then
  echo "check-docs: $target is current"
else
  echo "check-docs: $target is out of date; run 'make docs' and commit it"
  exit 1
fi
