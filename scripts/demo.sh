#!/usr/bin/env bash
# The main job: parse, verify and print the example graphs, and draw them (DOT, and PNG with Graphviz).
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
bin="$build/bin"
out="$build/demo"
mkdir -p "$out"

for example in examples/*.mlir; do
  name=$(basename "$example" .mlir)
  echo "=== $example: parsed, verified and printed by hpvm-opt ==="
  "$bin/hpvm-opt" "$example"
  "$bin/hpvm-translate" --hpvm-to-dot "$example" -o "$out/$name.dot"
  echo "--- wrote $out/$name.dot"
  if command -v dot >/dev/null 2>&1; then
    dot -Tpng "$out/$name.dot" -o "$out/$name.png"
    echo "--- rendered $out/$name.png"
  fi
  echo
done
