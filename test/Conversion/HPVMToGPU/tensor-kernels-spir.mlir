// The tensor kernels' SPIR-V reads back through llvm-spirv 15, PoCL's path (PoCL lacks
// cl_khr_il_program): the image carries its SPIR 1.2 bitcode. A branch-free padding read
// once made LLVM emit OpIAddCarry, which llvm-spirv 15 cannot read: the image lost its
// fallback with only a warning, and the nodes ran on the CPU. It came back with the tiled
// pooled kernels (a pool window's padding check next to its position - 1); the SPIR-V backend
// now runs without CodeGenPrepare, which formed the carry.
// REQUIRES: llvm-spirv
// RUN: rm -rf %t && mkdir %t
// RUN: hpvm-opt %S/tensor-kernels.mlir --convert-hpvm-to-gpu --hpvm-embed-kernels="devices=opencl dump-dir=%t" -o /dev/null 2>&1 | FileCheck %s --allow-empty
// CHECK-NOT: warning
// RUN: test -s %t/hpvm_kernels.spir.bc
// RUN: rm -rf %t.tiles && mkdir %t.tiles
// RUN: hpvm-opt %S/tensor-tiles.mlir --convert-hpvm-to-gpu="tensor-tiles=always" --hpvm-embed-kernels="devices=opencl dump-dir=%t.tiles" -o /dev/null 2>&1 | FileCheck %s --allow-empty
// RUN: test -s %t.tiles/hpvm_kernels.spir.bc
