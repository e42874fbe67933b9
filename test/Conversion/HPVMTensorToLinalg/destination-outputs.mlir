// Destination passing: when the host stores a graph output into a destination
// it declares unaliased (`materialize_in_destination ... restrict writable`)
// and uses for nothing else, the leaf that computes the output writes there
// directly: the destination becomes a new input of the launch, the root and the
// leaf (access `out`), and neither the leaf's buffer nor the host's copy is made.
// RUN: hpvm-opt %s --convert-hpvm-tensor-to-linalg | FileCheck %s

// CHECK-LABEL: hpvm.leaf @conv(
// CHECK-SAME: %[[X:[^:]*]]: memref<1x2x6x6xf32> {hpvm.access = #hpvm.access<in>},
// CHECK-SAME: %[[D:[^:]*]]: memref<1x4x4x4xf32> {hpvm.access = #hpvm.access<out>})
// CHECK-SAME: -> memref<1x4x4x4xf32>
// CHECK-NOT: memref.alloc() {{.*}}memref<1x4x4x4xf32>
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[D]]
// CHECK: call @hpvm_rt_tensor_conv2d_constant_f32(
// CHECK-NOT: memref.dealloc %[[D]]
// CHECK: hpvm.return %[[D]] : memref<1x4x4x4xf32>
hpvm.leaf @conv(%x: tensor<1x2x6x6xf32>) -> (tensor<1x4x4x4xf32>) {
  %w = arith.constant dense<0.5> : tensor<4x2x3x3xf32>
  %c = hpvm.tensor.conv2d %x, %w : (tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x4x4xf32>
  %r = hpvm.tensor.relu %c : tensor<1x4x4x4xf32>
  hpvm.return %r : tensor<1x4x4x4xf32>
}
// CHECK-LABEL: hpvm.internal @root(
// CHECK-SAME: %arg0: memref<1x2x6x6xf32>, %arg1: memref<1x4x4x4xf32>) -> memref<1x4x4x4xf32>
// CHECK: %[[N:.*]] = hpvm.create_node @conv
// CHECK: hpvm.bind_in %arg0 -> %[[N]][0]
// CHECK-NEXT: hpvm.bind_in %arg1 -> %[[N]][1] : memref<1x4x4x4xf32>
// CHECK: hpvm.bind_out %[[N]][0] -> 0
hpvm.internal @root(%x: tensor<1x2x6x6xf32>) -> (tensor<1x4x4x4xf32>) {
  %n = hpvm.create_node @conv : !hpvm.node
  hpvm.bind_in %x -> %n[0] : tensor<1x2x6x6xf32>
  hpvm.bind_out %n[0] -> 0
}
// CHECK-LABEL: func.func @host(
// CHECK-NEXT: %[[G:.*]] = hpvm.launch @root(%arg0, %arg1)
// CHECK-NEXT: hpvm.wait %[[G]] : memref<1x4x4x4xf32>
// CHECK-NEXT: return
func.func @host(%in: memref<1x2x6x6xf32>, %out: memref<1x4x4x4xf32>) {
  %t = bufferization.to_tensor %in restrict : memref<1x2x6x6xf32> to tensor<1x2x6x6xf32>
  %g = hpvm.launch @root(%t) : (tensor<1x2x6x6xf32>) -> !hpvm.graph
  %r = hpvm.wait %g : tensor<1x4x4x4xf32>
  bufferization.materialize_in_destination %r in restrict writable %out
      : (tensor<1x4x4x4xf32>, memref<1x4x4x4xf32>) -> ()
  return
}

// Two outputs: the first destination is also read by the host, so that output
// is copied (and its buffer freed); the second is written in place.
// CHECK-LABEL: hpvm.leaf @split(
// CHECK-SAME: %{{[^:]*}}: memref<4xf32> {hpvm.access = #hpvm.access<in>},
// CHECK-SAME: %[[B:[^:]*]]: memref<4xf32> {hpvm.access = #hpvm.access<out>})
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: hpvm.return %[[A]], %[[B]]
hpvm.leaf @split(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = hpvm.tensor.relu %x : tensor<4xf32>
  %b = hpvm.tensor.tanh %x : tensor<4xf32>
  hpvm.return %a, %b : tensor<4xf32>, tensor<4xf32>
}
hpvm.internal @two(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %n = hpvm.create_node @split : !hpvm.node
  hpvm.bind_in %x -> %n[0] : tensor<4xf32>
  hpvm.bind_out %n[0] -> 0
  hpvm.bind_out %n[1] -> 1
}
// CHECK-LABEL: func.func @two_outputs(
// CHECK: %[[G:.*]] = hpvm.launch @two(%arg0, %arg2)
// CHECK-NEXT: %[[R:.*]]:2 = hpvm.wait %[[G]]
// CHECK-NEXT: memref.copy %[[R]]#0, %arg1
// CHECK-NEXT: memref.dealloc %[[R]]#0
// CHECK-NOT: memref.copy
// CHECK: return
func.func @two_outputs(%in: memref<4xf32>, %first: memref<4xf32>, %second: memref<4xf32>) -> f32 {
  %t = bufferization.to_tensor %in restrict : memref<4xf32> to tensor<4xf32>
  %g = hpvm.launch @two(%t) : (tensor<4xf32>) -> !hpvm.graph
  %a, %b = hpvm.wait %g : tensor<4xf32>, tensor<4xf32>
  bufferization.materialize_in_destination %a in restrict writable %first
      : (tensor<4xf32>, memref<4xf32>) -> ()
  bufferization.materialize_in_destination %b in restrict writable %second
      : (tensor<4xf32>, memref<4xf32>) -> ()
  %c0 = arith.constant 0 : index
  %v = memref.load %first[%c0] : memref<4xf32>
  return %v : f32
}

// Not forwarded: the output also goes along an edge to a sibling (its buffer is
// read after the leaf returns), and a root launched twice (one signature, two
// hosts).
// CHECK-LABEL: hpvm.leaf @shared(
// CHECK-SAME: %{{[^:]*}}: memref<4xf32> {hpvm.access = #hpvm.access<in>}) -> memref<4xf32>
hpvm.leaf @shared(%x: tensor<4xf32>) -> (tensor<4xf32>) {
  %a = hpvm.tensor.relu %x : tensor<4xf32>
  hpvm.return %a : tensor<4xf32>
}
// CHECK-LABEL: hpvm.leaf @after(
// CHECK-SAME: %{{[^:]*}}: memref<4xf32> {hpvm.access = #hpvm.access<in>}) -> memref<4xf32>
hpvm.leaf @after(%x: tensor<4xf32>) -> (tensor<4xf32>) {
  %a = hpvm.tensor.tanh %x : tensor<4xf32>
  hpvm.return %a : tensor<4xf32>
}
hpvm.internal @fanout(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %n = hpvm.create_node @shared : !hpvm.node
  %m = hpvm.create_node @after : !hpvm.node
  hpvm.bind_in %x -> %n[0] : tensor<4xf32>
  hpvm.edge %n[0] -> %m[0] one_to_one
  hpvm.bind_out %n[0] -> 0
  hpvm.bind_out %m[0] -> 1
}
// CHECK-LABEL: func.func @fanout_twice(
// CHECK: hpvm.launch @fanout(%arg0) :
// CHECK-COUNT-2: memref.copy
// CHECK: hpvm.launch @fanout(%arg0) :
// CHECK-COUNT-2: memref.copy
func.func @fanout_twice(%in: memref<4xf32>, %a: memref<4xf32>, %b: memref<4xf32>,
                        %c: memref<4xf32>, %d: memref<4xf32>) {
  %t = bufferization.to_tensor %in restrict : memref<4xf32> to tensor<4xf32>
  %g = hpvm.launch @fanout(%t) : (tensor<4xf32>) -> !hpvm.graph
  %r:2 = hpvm.wait %g : tensor<4xf32>, tensor<4xf32>
  bufferization.materialize_in_destination %r#0 in restrict writable %a
      : (tensor<4xf32>, memref<4xf32>) -> ()
  bufferization.materialize_in_destination %r#1 in restrict writable %b
      : (tensor<4xf32>, memref<4xf32>) -> ()
  %h = hpvm.launch @fanout(%t) : (tensor<4xf32>) -> !hpvm.graph
  %s:2 = hpvm.wait %h : tensor<4xf32>, tensor<4xf32>
  bufferization.materialize_in_destination %s#0 in restrict writable %c
      : (tensor<4xf32>, memref<4xf32>) -> ()
  bufferization.materialize_in_destination %s#1 in restrict writable %d
      : (tensor<4xf32>, memref<4xf32>) -> ()
  return
}
