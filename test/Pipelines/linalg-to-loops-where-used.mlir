// hpvm-linalg-to-loops-where-used alone: convert-linalg-to-loops runs (as a
// nested pipeline, shown by --mlir-print-ir-after) on the functions that hold
// a linalg op only; the others are not visited.
// RUN: hpvm-opt %s --hpvm-linalg-to-loops-where-used | FileCheck %s
// RUN: hpvm-opt %s --hpvm-linalg-to-loops-where-used --mlir-print-ir-after=convert-linalg-to-loops 2>&1 >/dev/null | FileCheck %s --check-prefix=NESTED

// CHECK-LABEL: func.func @copy(
// CHECK: scf.for
// CHECK: memref.load
// CHECK: memref.store
// CHECK-NOT: linalg.
// CHECK-LABEL: func.func @plain(
// CHECK-NEXT: return

// NESTED: IR Dump After ConvertLinalgToLoopsPass (convert-linalg-to-loops)
// NESTED-NEXT: func.func @copy(
// NESTED-NOT: IR Dump After
func.func @copy(%a: memref<4xf32>, %b: memref<4xf32>) {
  linalg.copy ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  return
}
func.func @plain(%a: memref<4xf32>) {
  return
}
