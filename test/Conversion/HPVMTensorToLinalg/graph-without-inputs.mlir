// A tensor graph without inputs: the root's signature alone has tensors (no op
// inside names them), and it is converted with its leaf, so that the binds agree.
// Regression: the root kept tensor<2x2xf32> and bind_out refused the leaf's memref.
// RUN: hpvm-opt %s --convert-hpvm-tensor-to-linalg | FileCheck %s

// The host's destination is unaliased: the leaf writes into it, passed in as the
// root's and the leaf's only input (destination-outputs.mlir).
// CHECK-LABEL: hpvm.leaf @relu(
// CHECK-SAME: %[[D:.*]]: memref<2x2xf32> {hpvm.access = #hpvm.access<out>}) -> memref<2x2xf32>
// Its loop runs over the four elements in a row (CollapseElementwise), written
// through a collapsed view of the destination, which the leaf returns expanded.
// CHECK: %[[C:.*]] = memref.collapse_shape %[[D]] {{\[}}[0, 1]] : memref<2x2xf32> into memref<4xf32>
// CHECK: linalg.generic {{.*}} outs(%[[C]] : memref<4xf32>)
// CHECK: %[[E:.*]] = memref.expand_shape %[[C]]
// CHECK: hpvm.return %[[E]]
hpvm.leaf @relu() -> (tensor<2x2xf32>) {
  %c = arith.constant dense<[[-1.0, 2.0], [3.0, -4.0]]> : tensor<2x2xf32>
  %r = hpvm.tensor.relu %c : tensor<2x2xf32>
  hpvm.return %r : tensor<2x2xf32>
}
// CHECK-LABEL: hpvm.internal @root(%arg0: memref<2x2xf32>) -> memref<2x2xf32>
// CHECK: hpvm.bind_in %arg0 -> %[[N:.*]][0] : memref<2x2xf32>
// CHECK: hpvm.bind_out %[[N]][0] -> 0
hpvm.internal @root() -> (tensor<2x2xf32>) {
  %n = hpvm.create_node @relu : !hpvm.node
  hpvm.bind_out %n[0] -> 0
}
// CHECK-LABEL: func.func @run(
// CHECK: %[[G:.*]] = hpvm.launch @root(%arg0) : (memref<2x2xf32>) -> !hpvm.graph
// CHECK-NEXT: hpvm.wait %[[G]] : memref<2x2xf32>
// CHECK-NEXT: return
func.func @run(%out: memref<2x2xf32>) {
  %g = hpvm.launch @root() : () -> !hpvm.graph
  %r = hpvm.wait %g : tensor<2x2xf32>
  bufferization.materialize_in_destination %r in restrict writable %out
      : (tensor<2x2xf32>, memref<2x2xf32>) -> ()
  return
}
