// hpvm-fuse-tensor-nodes, last: a leaf that only reshapes its one tensor and
// sends it to one other leaf becomes part of that leaf (a view there, where
// as a leaf of its own it copied into a buffer); a reshape of a reshape folds
// in the next round. Near misses: a reshape bound out, one feeding two
// leaves, one with another target than its consumer, a replicated one.
// RUN: hpvm-opt %s --split-input-file --hpvm-fuse-tensor-nodes | FileCheck %s
// RUN: hpvm-opt %s --split-input-file --hpvm-fuse-tensor-nodes=fold-reshapes=false | FileCheck %s --check-prefix=OFF

// Attention's reshapes: the product's operands are two reshaped tensors (one
// reshaped twice); all three reshapes join the product's leaf, taking the
// tensors they reshaped, in topological order.
// CHECK-LABEL: hpvm.leaf @split_merge_heads_keys_product(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<8x16xf32>, %[[K:[^:]*]]: tensor<128xf32>
// CHECK: %[[QS:.*]] = tensor.expand_shape %[[Q]] {{.*}} into tensor<2x4x16xf32>
// CHECK: %[[QM:.*]] = tensor.collapse_shape %[[QS]] {{.*}} into tensor<8x16xf32>
// CHECK: %[[KS:.*]] = tensor.expand_shape %[[K]] {{.*}} into tensor<16x8xf32>
// CHECK: %[[P:.*]] = hpvm.tensor.mul %[[QM]], %[[KS]]
// CHECK: hpvm.return %[[P]]
// CHECK-LABEL: hpvm.internal @attention(
// CHECK-NEXT: %[[F:.*]] = hpvm.create_node @split_merge_heads_keys_product
// CHECK-NOT: hpvm.create_node
// CHECK-NOT: hpvm.edge
// CHECK: hpvm.bind_in %{{.*}} -> %[[F]][0]
// CHECK: hpvm.bind_in %{{.*}} -> %[[F]][1]
// CHECK: hpvm.bind_out %[[F]][0] -> 0
// OFF-LABEL: hpvm.internal @attention(
// OFF-COUNT-4: hpvm.create_node
hpvm.leaf @split(%x: tensor<8x16xf32>) -> (tensor<2x4x16xf32>) {
  %r = tensor.expand_shape %x [[0, 1], [2]] output_shape [2, 4, 16] : tensor<8x16xf32> into tensor<2x4x16xf32>
  hpvm.return %r : tensor<2x4x16xf32>
}
hpvm.leaf @merge_heads(%x: tensor<2x4x16xf32>) -> (tensor<8x16xf32>) {
  %r = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x4x16xf32> into tensor<8x16xf32>
  hpvm.return %r : tensor<8x16xf32>
}
hpvm.leaf @keys(%x: tensor<128xf32>) -> (tensor<16x8xf32>) {
  %r = tensor.expand_shape %x [[0, 1]] output_shape [16, 8] : tensor<128xf32> into tensor<16x8xf32>
  hpvm.return %r : tensor<16x8xf32>
}
hpvm.leaf @product(%a: tensor<8x16xf32>, %b: tensor<16x8xf32>) -> (tensor<8x8xf32>) {
  %p = hpvm.tensor.mul %a, %b : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  hpvm.return %p : tensor<8x8xf32>
}
hpvm.internal @attention(%q: tensor<8x16xf32>, %k: tensor<128xf32>) -> (tensor<8x8xf32>) {
  %s = hpvm.create_node @split : !hpvm.node
  %m = hpvm.create_node @merge_heads : !hpvm.node
  %k1 = hpvm.create_node @keys : !hpvm.node
  %p = hpvm.create_node @product : !hpvm.node
  hpvm.bind_in %q -> %s[0] : tensor<8x16xf32>
  hpvm.bind_in %k -> %k1[0] : tensor<128xf32>
  hpvm.edge %s[0] -> %m[0] one_to_one
  hpvm.edge %m[0] -> %p[0] one_to_one
  hpvm.edge %k1[0] -> %p[1] one_to_one
  hpvm.bind_out %p[0] -> 0
}

// -----

// Near misses: a reshape whose result is the graph's (bound out), one whose
// result two leaves read, one for another target than its consumer and a
// replicated one all stay leaves of their own.
// CHECK-LABEL: hpvm.internal @misses(
// CHECK-COUNT-8: hpvm.create_node
// CHECK-NOT: hpvm.create_node
hpvm.leaf @flat(%x: tensor<4x8xf32>) -> (tensor<32xf32>) {
  %r = tensor.collapse_shape %x [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  hpvm.return %r : tensor<32xf32>
}
hpvm.leaf @flat_gpu(%x: tensor<4x8xf32>) -> (tensor<32xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %r = tensor.collapse_shape %x [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  hpvm.return %r : tensor<32xf32>
}
hpvm.leaf @twice(%x: tensor<32xf32>) -> (tensor<32xf32>) {
  %r = hpvm.tensor.relu %x : tensor<32xf32>
  hpvm.return %r : tensor<32xf32>
}
hpvm.internal @misses(%x: tensor<4x8xf32>) -> (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) {
  %out = hpvm.create_node @flat : !hpvm.node
  %shared = hpvm.create_node @flat : !hpvm.node
  %a = hpvm.create_node @twice : !hpvm.node
  %b = hpvm.create_node @twice : !hpvm.node
  %gpu = hpvm.create_node @flat_gpu : !hpvm.node
  %c = hpvm.create_node @twice : !hpvm.node
  %c4 = arith.constant 4 : index
  %grid = hpvm.create_node @flat [%c4] : !hpvm.node
  %d = hpvm.create_node @twice [%c4] : !hpvm.node
  hpvm.bind_in %x -> %out[0] : tensor<4x8xf32>
  hpvm.bind_in %x -> %shared[0] : tensor<4x8xf32>
  hpvm.bind_in %x -> %gpu[0] : tensor<4x8xf32>
  hpvm.bind_in %x -> %grid[0] : tensor<4x8xf32>
  hpvm.edge %shared[0] -> %a[0] one_to_one
  hpvm.edge %shared[0] -> %b[0] one_to_one
  hpvm.edge %gpu[0] -> %c[0] one_to_one
  hpvm.edge %grid[0] -> %d[0] one_to_one
  hpvm.bind_out %out[0] -> 0
  hpvm.bind_out %a[0] -> 1
  hpvm.bind_out %b[0] -> 2
  hpvm.bind_out %c[0] -> 3
  hpvm.bind_out %d[0] -> 4
}
