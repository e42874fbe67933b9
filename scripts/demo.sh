#!/usr/bin/env bash
# The main job: parse, verify, print and draw the example graphs, compile and run an HPVM-C
# program, import an ONNX model from Python and check it against onnxruntime, then compile
# sgemm, the 3-D stencil and the edge-detection pipeline with hpvm-cc and run them on the CPU
# against OpenMP and sequential C (correctness, GFLOP/s, frames/s).
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

echo "=== a malformed graph is rejected with a located diagnostic (exit code 1) ==="
bad="$out/malformed.mlir"
cat > "$bad" <<'MLIR'
hpvm.leaf @producer() -> (f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f : f32
}
hpvm.leaf @consumer(%x: i64) {
  hpvm.return
}
hpvm.internal @root() {
  %p = hpvm.create_node @producer : !hpvm.node
  %q = hpvm.create_node @consumer : !hpvm.node
  hpvm.edge %p[0] -> %q[0] all_to_all
}
MLIR
if "$bin/hpvm-opt" --mlir-print-op-on-diagnostic=false "$bad" >/dev/null; then
  echo "demo: the malformed graph was accepted" >&2
  exit 1
else
  echo "--- hpvm-opt exited with code $?"
fi

echo
echo "=== an HPVM-C program compiled unchanged by hpvm-cc (examples/hpvm-c/sgemm.c) ==="
"$bin/hpvm-cc" -O3 -ffp-contract=off examples/hpvm-c/sgemm.c -o "$out/hpvmc_sgemm"
"$out/hpvmc_sgemm"
echo "--- its graph, raised to the hpvm dialect: $out/hpvmc_sgemm.mlir"
"$bin/hpvm-cc" --emit=hpvm examples/hpvm-c/sgemm.c -o "$out/hpvmc_sgemm.mlir"
echo
echo "=== a malformed HPVM-C program: the diagnostic points at the C line (exit code 1) ==="
if "$bin/hpvm-cc" test/HPVMC/errors/edge_type_mismatch.c -o "$out/malformed_c"; then
  echo "demo: the malformed HPVM-C program was accepted" >&2
  exit 1
else
  echo "--- hpvm-cc exited with code $?"
fi

echo
echo "=== Python: an ONNX model imported (hpvm.onnx), compiled, run, checked against onnxruntime ==="
python=$(bash scripts/bootstrap-python.sh "$build")
home=$(cd "$build" && pwd)
HPVM_HOME="$home" HPVM_CACHE_DIR="$home/python-cache" OPENBLAS_NUM_THREADS=1 \
  "$python" python/examples/lenet_onnx.py "$out"

echo
echo "=== compiled with hpvm-cc and run on the CPU (HPVM vs OpenMP vs sequential C, bitwise checked) ==="
bash benchmarks/hpvm/run_cpu.sh --demo
