// hpvm-expand-strided-copies: a copy between strided views becomes loops of
// loads and stores over the source's extents; copies between identity layouts
// (lowered to llvm.intr.memcpy) and unranked copies stay.
// RUN: hpvm-opt %s --hpvm-expand-strided-copies | FileCheck %s

// CHECK-LABEL: func.func @strided(
// CHECK-NOT: memref.copy
// CHECK: %[[N:.*]] = memref.dim %{{.*}}, %c0
// CHECK: scf.for %[[I:.*]] = %c0 to %[[N]] step %c1 {
// CHECK: %[[M:.*]] = memref.dim %{{.*}}, %c1
// CHECK: scf.for %[[J:.*]] = %c0 to %[[M]] step %c1 {
// CHECK: %[[V:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]]
// CHECK: memref.store %[[V]], %{{.*}}[%[[I]], %[[J]]]
func.func @strided(%a: memref<?x?xf32, strided<[?, 2], offset: ?>>, %b: memref<?x?xf32>) {
  memref.copy %a, %b : memref<?x?xf32, strided<[?, 2], offset: ?>> to memref<?x?xf32>
  return
}

// CHECK-LABEL: func.func @contiguous(
// CHECK: memref.copy
func.func @contiguous(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  return
}

// CHECK-LABEL: func.func @unranked(
// CHECK: memref.copy
func.func @unranked(%a: memref<*xf32>, %b: memref<*xf32>) {
  memref.copy %a, %b : memref<*xf32> to memref<*xf32>
  return
}

// CHECK-LABEL: func.func @scalar(
// CHECK-NOT: memref.copy
// CHECK: %[[V:.*]] = memref.load %{{.*}}[] : memref<f32, strided<[], offset: 3>>
// CHECK: memref.store %[[V]], %{{.*}}[] : memref<f32>
func.func @scalar(%a: memref<f32, strided<[], offset: 3>>, %b: memref<f32>) {
  memref.copy %a, %b : memref<f32, strided<[], offset: 3>> to memref<f32>
  return
}
