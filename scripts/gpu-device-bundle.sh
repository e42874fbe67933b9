#!/usr/bin/env bash
# gpu-device-bundle.sh - everything a machine with an NVIDIA GPU runs to check this project,
# built here (where hpvm-cc, LLVM and nvcc are) into one folder that needs none of them there:
#   programs/  every HPVM-C test program and example with its nodes hinted GPU_TARGET, built
#              with --target=gpu, and what its CPU build printed (scripts/device-programs.py
#              --bundle); on the GPU each must print the same, with its kernels on cuda:0
#              (the lines of test/Integration/Devices/gpu-device.test)
#   runtime/   the runtime's CUDA suite against the real driver (runtime/test/cuda_device_test.c,
#              its PTX and cubin)
#   libraries/ test/Integration/Devices/Inputs/tensor_libraries.c built --target=gpu and its CPU
#              output: with the real cuDNN / cuBLAS its fused nodes run "on cuda:0 (cudnn)" /
#              "(cublas)", with HPVM_TENSOR_LIBRARIES=0 their generated kernels; same output
#   tiles/     test/Integration/Devices/Inputs/tensor_tiles.c (two conv + bias + act + pool
#              layers) built --target=gpu with tensor tiles auto, always and never, and its CPU
#              output: each must print the same, with both layers "on cuda:0"; whether the
#              three give the same bits is reported (PoCL: they do)
#   examples/  the .mlir examples with their C hosts, built --target=gpu (scripts/device-examples.sh)
#   bench/     benchmarks/gpu, built (HPVM vs hand-written CUDA and cuBLAS; the edge pipeline;
#              the work-group sweep) and benchmarks/gpu/tensor_baseline.py (cuDNN through PyTorch)
#   run.sh     runs the runtime suite, the benchmarks, the programs and the examples, and copies
#              the reports to $OUT when it is set
# Usage: bash scripts/gpu-device-bundle.sh [DIR] [--quick]   (DIR: build/device-bundle)
# Then, on the GPU machine, from the repository root: bash DIR/run.sh
# (with the device tool: carry DIR, a path under the ignored build/; docs/GPUBackend.md).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$ROOT/build/device-bundle"
QUICK=()
for arg in "$@"; do
  case "$arg" in
    --quick) QUICK=(--quick) ;;
    *) DIR="$(mkdir -p "$arg" && cd "$arg" && pwd)" ;;
  esac
done
BIN="${HPVM_BIN:-$ROOT/build/bin}"
rm -rf "$DIR"
mkdir -p "$DIR"
# The machine with the GPU has another CPU: code for any x86-64 with AVX2, not -march=native.
MARCH="${HPVM_BUNDLE_MARCH:--march=x86-64-v3}"
python3 "$ROOT/scripts/device-programs.py" --target gpu --out "$DIR/.work" --bundle "$DIR/programs" \
  --cflags="$MARCH" \
  --hpvm-cc "$BIN/hpvm-cc" "$ROOT"/test/HPVMC/run/*.c "$ROOT"/test/HPVMC/run/*.cpp \
  "$ROOT"/examples/hpvm-c/*.c >"$DIR/bundle.log"
rm -rf "$DIR/.work"
if grep -q FAILED "$DIR/bundle.log"; then
  cat "$DIR/bundle.log" >&2
  exit 1
fi
# The runtime's suite for a real driver, from the runtime's own build (it links the runtime
# statically and needs nothing but libc and the driver there).
RT_BUILD="$ROOT/build/runtime-tests"
cmake -S "$ROOT/runtime" -B "$RT_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$RT_BUILD" hpvm_rt_cuda_device_test >/dev/null
mkdir -p "$DIR/runtime"
cp "$RT_BUILD/test/hpvm_rt_cuda_device_test" "$RT_BUILD/test/kernels_nvptx.ptx" "$DIR/runtime/"
[[ -f "$RT_BUILD/test/kernels_nvptx.cubin" ]] && cp "$RT_BUILD/test/kernels_nvptx.cubin" "$DIR/runtime/"
# Tensor nodes through cuDNN / cuBLAS (docs/GPUBackend.md, "Libraries"), and their kernels.
mkdir -p "$DIR/libraries"
LIB_SRC="$ROOT/test/Integration/Devices/Inputs/tensor_libraries.c"
"$BIN/hpvm-cc" -O2 $MARCH "$LIB_SRC" -o "$DIR/.libraries-cpu"
"$DIR/.libraries-cpu" >"$DIR/libraries/cpu.txt"
rm -f "$DIR/.libraries-cpu"
"$BIN/hpvm-cc" -O2 $MARCH --target=gpu "$LIB_SRC" -o "$DIR/libraries/tensor_libraries"
cat >"$DIR/libraries/run.sh" <<'LIBRARIES'
#!/usr/bin/env bash
# The tensor program with the libraries (when installed) and without: the CPU build's output.
cd "$(dirname "${BASH_SOURCE[0]}")"
status=0
for setting in 1 0; do
  HPVM_TRACE=1 HPVM_TENSOR_LIBRARIES=$setting ./tensor_libraries >out.txt 2>trace.txt
  code=$?
  echo "== HPVM_TENSOR_LIBRARIES=$setting: exit $code"
  sort -u trace.txt
  if [ $code -ne 0 ] || ! diff cpu.txt out.txt; then
    echo "FAILED: HPVM_TENSOR_LIBRARIES=$setting: not the CPU build's output"
    status=1
  fi
done
grep -q '(cu' trace.txt 2>/dev/null && { echo "FAILED: a library ran when switched off"; status=1; }
exit $status
LIBRARIES
chmod +x "$DIR/libraries/run.sh"
# Tensor kernels in tiles (convolutions whose tiles fold a pool) and one thread per element.
mkdir -p "$DIR/tiles"
TILES_SRC="$ROOT/test/Integration/Devices/Inputs/tensor_tiles.c"
"$BIN/hpvm-cc" -O2 $MARCH "$TILES_SRC" -o "$DIR/.tiles-cpu"
"$DIR/.tiles-cpu" >"$DIR/tiles/cpu.txt" 2>/dev/null
rm -f "$DIR/.tiles-cpu"
for mode in auto always never; do
  "$BIN/hpvm-cc" -O2 $MARCH --target=gpu -fhpvm-tensor-tiles=$mode "$TILES_SRC" \
    -o "$DIR/tiles/tensor_tiles_$mode"
done
cat >"$DIR/tiles/run.sh" <<'TILES'
#!/usr/bin/env bash
# The tensor program with tiles (auto, always) and without: the CPU build's summary, both
# layers on the GPU; the bits of the three compared (reported, not required).
cd "$(dirname "${BASH_SOURCE[0]}")"
status=0
for mode in auto always never; do
  HPVM_TRACE=1 "./tensor_tiles_$mode" >"out_$mode.txt" 2>"trace_$mode.txt"
  code=$?
  echo "== tiles $mode: exit $code"
  grep -E 'hpvm-trace|bits' "trace_$mode.txt"
  if [ $code -ne 0 ] || ! diff cpu.txt "out_$mode.txt"; then
    echo "FAILED: tiles $mode: not the CPU build's summary"
    status=1
  fi
  if grep -q 'hpvm-trace: .* on cpu' "trace_$mode.txt"; then
    echo "FAILED: tiles $mode: a layer ran on the CPU"
    status=1
  fi
done
for mode in always never; do
  if diff <(grep bits trace_auto.txt) <(grep bits "trace_$mode.txt") >/dev/null; then
    echo "bits: $mode = auto"
  else
    echo "bits: $mode differs from auto (within the reference's 1e-4)"
  fi
done
exit $status
TILES
chmod +x "$DIR/tiles/run.sh"
HPVM_BIN="$BIN" HPVM_BUNDLE_MARCH="$MARCH" bash "$ROOT/scripts/device-examples.sh" build "$DIR/examples" \
  >"$DIR/examples.log"
HPVM_BENCH_OUT="$DIR/bench" HPVM_BIN="$BIN" HPVM_BENCH_MARCH="$MARCH" \
  bash "$ROOT/benchmarks/gpu/run.sh" build "${QUICK[@]}"
cp "$ROOT/benchmarks/gpu/tensor_baseline.py" "$DIR/bench/"
cat >"$DIR/run.sh" <<RUN
#!/usr/bin/env bash
# Runs the bundle built by scripts/gpu-device-bundle.sh on this machine's GPU.
HERE="\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)"
report=\${OUT:-\$HERE}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem --format=csv 2>&1 | tee "\$report/device.txt"
(cd "\$HERE/runtime" && ./hpvm_rt_cuda_device_test kernels_nvptx.ptx \$(ls kernels_nvptx.cubin 2>/dev/null)) 2>&1 | tee "\$report/runtime.txt"
runtime=\${PIPESTATUS[0]}
bash "\$HERE/bench/run.sh" run ${QUICK[*]} 2>&1 | tee "\$report/bench.txt"
bench=\${PIPESTATUS[0]}
timeout 120 python3 "\$HERE/bench/tensor_baseline.py" 2>&1 | tee "\$report/tensor.txt"
tensor=\${PIPESTATUS[0]}
bash "\$HERE/libraries/run.sh" 2>&1 | tee "\$report/libraries.txt"
libraries=\${PIPESTATUS[0]}
bash "\$HERE/tiles/run.sh" 2>&1 | tee "\$report/tiles.txt"
tiles=\${PIPESTATUS[0]}
python3 "\$HERE/programs/device-programs.py" --run-bundle "\$HERE/programs" 2>&1 | tee "\$report/programs.txt"
programs=\${PIPESTATUS[0]}
bash "\$HERE/examples/run.sh" run 2>&1 | tee "\$report/examples.txt"
examples=\${PIPESTATUS[0]}
echo "runtime: exit \$runtime; libraries: exit \$libraries; tiles: exit \$tiles; programs: exit \$programs; examples: exit \$examples; benchmarks: exit \$bench; tensor baseline: exit \$tensor"
exit \$((runtime || libraries || tiles || programs || examples || bench || tensor))
RUN
echo "# bundle in $DIR ($(du -sh "$DIR" | cut -f1)): $(grep -c bundled "$DIR/bundle.log") programs, the benchmarks"
