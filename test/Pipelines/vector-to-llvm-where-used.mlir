// hpvm-vector-to-llvm-where-used alone: convert-vector-to-llvm runs on the
// module (as a nested pipeline) when it holds a vector op, and not at all
// otherwise.
// RUN: hpvm-opt %s --split-input-file --hpvm-vector-to-llvm-where-used | FileCheck %s
// RUN: hpvm-opt %s --split-input-file --hpvm-vector-to-llvm-where-used --mlir-print-ir-after=convert-vector-to-llvm 2>&1 >/dev/null | FileCheck %s --check-prefix=NESTED

// CHECK-LABEL: func.func @splat(
// CHECK-NOT: vector.broadcast
// CHECK: llvm.insertelement
// CHECK: llvm.shufflevector
// NESTED: IR Dump After ConvertVectorToLLVMPass (convert-vector-to-llvm)
// NESTED: func.func @splat(
// NESTED-NOT: IR Dump After
func.func @splat(%x: f32) -> vector<4xf32> {
  %v = vector.broadcast %x : f32 to vector<4xf32>
  return %v : vector<4xf32>
}

// -----

// CHECK-LABEL: func.func @scalar(
// CHECK-NEXT: arith.addf
func.func @scalar(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  return %y : f32
}
