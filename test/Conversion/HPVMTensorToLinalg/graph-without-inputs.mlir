// A tensor graph without inputs: the root's signature alone has tensors (no op
// inside names them), and it is converted with its leaf, so that the binds agree.
// Regression: the root kept tensor<2x2xf32> and bind_out refused the leaf's memref.
// RUN: hpvm-opt %s --convert-hpvm-tensor-to-linalg | FileCheck %s

// CHECK-LABEL: hpvm.leaf @relu() -> memref<2x2xf32>
hpvm.leaf @relu() -> (tensor<2x2xf32>) {
  %c = arith.constant dense<[[-1.0, 2.0], [3.0, -4.0]]> : tensor<2x2xf32>
  %r = hpvm.tensor.relu %c : tensor<2x2xf32>
  hpvm.return %r : tensor<2x2xf32>
}
// CHECK-LABEL: hpvm.internal @root() -> memref<2x2xf32>
// CHECK: hpvm.bind_out %{{.*}}[0] -> 0
hpvm.internal @root() -> (tensor<2x2xf32>) {
  %n = hpvm.create_node @relu : !hpvm.node
  hpvm.bind_out %n[0] -> 0
}
// CHECK-LABEL: func.func @run(
// CHECK: %[[G:.*]] = hpvm.launch @root() : () -> !hpvm.graph
// CHECK: hpvm.wait %[[G]] : memref<2x2xf32>
func.func @run(%out: memref<2x2xf32>) {
  %g = hpvm.launch @root() : () -> !hpvm.graph
  %r = hpvm.wait %g : tensor<2x2xf32>
  bufferization.materialize_in_destination %r in restrict writable %out
      : (tensor<2x2xf32>, memref<2x2xf32>) -> ()
  return
}
