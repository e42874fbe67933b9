#!/usr/bin/env bash
# Regenerates docs/Dialect/*.md from TableGen (--write) or fails when they are stale (--check).
set -euo pipefail
mode=${1:---check}
build=${2:-build}
cd "$(dirname "$0")/.."

ninja -C "$build" HPVMOpsDocGen HPVMDialectDocGen HPVMAttrsAndTypesDocGen >/dev/null
generated="$build/docs/HPVM"
status=0
for name in HPVMDialect HPVMOps HPVMAttrsAndTypes; do
  source="$generated/$name.md"
  target="docs/Dialect/$name.md"
  if [ "$mode" = "--write" ]; then
    mkdir -p docs/Dialect
    { echo "<!-- Generated from include/HPVM/Dialect/HPVM/IR/*.td by 'make docs'; do not edit. -->"
      cat "$source"; } > "$target"
  else
    if ! diff -q <({ echo "<!-- Generated from include/HPVM/Dialect/HPVM/IR/*.td by 'make docs'; do not edit. -->"
                    cat "$source"; }) "$target" >/dev/null 2>&1; then
      echo "check-docs: $target is out of date; run 'make docs' and commit it"
      status=1
    fi
  fi
done
[ "$mode" = "--write" ] && echo "docs: regenerated docs/Dialect"
[ $status -eq 0 ] && [ "$mode" = "--check" ] && echo "check-docs: docs/Dialect is current"
exit $status
