// hpvm-fuse-tensor-nodes: each pattern applied (conv2d->add->act->pool,
// conv2d->add->act, conv2d->add->pool, conv2d->add, mul->add->act, mul->add,
// with every activation; conv2d->add->batchnorm->act, conv2d->batchnorm->act,
// add->act, batchnorm->act) and a remark with the reason for each refused rule.
// (Groups of the elementwise leaves left: hpvm-fuse-tensor-nodes-groups.mlir.)
// RUN: hpvm-opt %s --split-input-file --hpvm-fuse-tensor-nodes=elementwise-groups=false --verify-diagnostics | FileCheck %s

// conv2d -> add -> relu -> pool: the longest pattern; binds move to the
// fused node's ports.
// CHECK-LABEL: hpvm.leaf @conv_bias_relu_pool(%arg0: tensor<1x1x6x6xf32>, %arg1: tensor<2x1x3x3xf32>, %arg2: tensor<1x2x1x1xf32>) -> tensor<1x2x2x2xf32> {
// CHECK-NEXT: %[[C:[^ ]+]] = hpvm.tensor.conv2d %arg0, %arg1 :
// CHECK-NEXT: %[[A:[^ ]+]] = hpvm.tensor.add %[[C]], %arg2 :
// CHECK-NEXT: %[[R:[^ ]+]] = hpvm.tensor.relu %[[A]] :
// CHECK-NEXT: %[[P:[^ ]+]] = hpvm.tensor.pool max %[[R]] {strides = [2, 2], window = [2, 2]}
// CHECK-NEXT: hpvm.return %[[P]] : tensor<1x2x2x2xf32>
// CHECK-LABEL: hpvm.internal @root(
// CHECK-NEXT: %[[F:[^ ]+]] = hpvm.create_node @conv_bias_relu_pool : !hpvm.node
// CHECK-NEXT: hpvm.bind_in %arg0 -> %[[F]][0] : tensor<1x1x6x6xf32>
// CHECK-NEXT: hpvm.bind_in %arg1 -> %[[F]][1] : tensor<2x1x3x3xf32>
// CHECK-NEXT: hpvm.bind_in %arg2 -> %[[F]][2] : tensor<1x2x1x1xf32>
// CHECK-NEXT: hpvm.bind_out %[[F]][0] -> 0
// CHECK-NEXT: }
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.leaf @relu(%a: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %r = hpvm.tensor.relu %a : tensor<1x2x4x4xf32>
  hpvm.return %r : tensor<1x2x4x4xf32>
}
hpvm.leaf @pool(%r: tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>) {
  %p = hpvm.tensor.pool max %r {window = [2, 2], strides = [2, 2]} : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  hpvm.return %p : tensor<1x2x2x2xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x2x2xf32>) {
  %c = hpvm.create_node @conv : !hpvm.node
  %a = hpvm.create_node @bias : !hpvm.node
  %r = hpvm.create_node @relu : !hpvm.node
  %p = hpvm.create_node @pool : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one
  hpvm.bind_in %b -> %a[1] : tensor<1x2x1x1xf32>
  hpvm.edge %a[0] -> %r[0] one_to_one
  hpvm.edge %r[0] -> %p[0] one_to_one
  hpvm.bind_out %p[0] -> 0
}

// -----

// conv2d -> add -> tanh; the convolution enters the add as its right operand.
// CHECK-LABEL: hpvm.leaf @conv_bias_squash(%arg0: tensor<1x1x6x6xf32>, %arg1: tensor<2x1x3x3xf32>, %arg2: tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
// CHECK-NEXT: %[[C:[^ ]+]] = hpvm.tensor.conv2d %arg0, %arg1 :
// CHECK-NEXT: %[[A:[^ ]+]] = hpvm.tensor.add %arg2, %[[C]] :
// CHECK-NEXT: %[[T:[^ ]+]] = hpvm.tensor.tanh %[[A]] :
// CHECK-NEXT: hpvm.return %[[T]]
// CHECK-LABEL: hpvm.internal @root(
// CHECK-NEXT: %[[F:[^ ]+]] = hpvm.create_node @conv_bias_squash : !hpvm.node
// CHECK-NEXT: hpvm.bind_in %arg0 -> %[[F]][0]
// CHECK-NEXT: hpvm.bind_in %arg1 -> %[[F]][1]
// CHECK-NEXT: hpvm.bind_in %arg2 -> %[[F]][2]
// CHECK-NEXT: hpvm.bind_out %[[F]][0] -> 0
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %b, %c : (tensor<1x2x1x1xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.leaf @squash(%a: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %r = hpvm.tensor.tanh %a : tensor<1x2x4x4xf32>
  hpvm.return %r : tensor<1x2x4x4xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.create_node @conv : !hpvm.node
  %a = hpvm.create_node @bias : !hpvm.node
  %t = hpvm.create_node @squash : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one
  hpvm.bind_in %b -> %a[1] : tensor<1x2x1x1xf32>
  hpvm.edge %a[0] -> %t[0] one_to_one
  hpvm.bind_out %t[0] -> 0
}

// -----

// conv2d -> add -> pool; the bias comes on an edge from another leaf, and
// the chain's children are created out of dataflow order.
// CHECK-LABEL: hpvm.leaf @conv_bias_pool(%arg0: tensor<1x1x6x6xf32>, %arg1: tensor<2x1x3x3xf32>, %arg2: tensor<1x2x1x1xf32>) -> tensor<1x2x2x2xf32> {
// CHECK-NEXT: %[[C:[^ ]+]] = hpvm.tensor.conv2d %arg0, %arg1 :
// CHECK-NEXT: %[[A:[^ ]+]] = hpvm.tensor.add %[[C]], %arg2 :
// CHECK-NEXT: %[[P:[^ ]+]] = hpvm.tensor.pool max %[[A]]
// CHECK-NEXT: hpvm.return %[[P]]
// CHECK-LABEL: hpvm.internal @root(
// CHECK-NEXT: %[[M:[^ ]+]] = hpvm.create_node @make_bias : !hpvm.node
// CHECK-NEXT: %[[F:[^ ]+]] = hpvm.create_node @conv_bias_pool : !hpvm.node
// CHECK-NEXT: hpvm.bind_in %arg0 -> %[[F]][0]
// CHECK-NEXT: hpvm.bind_in %arg1 -> %[[F]][1]
// CHECK-NEXT: hpvm.bind_in %arg2 -> %[[M]][0]
// CHECK-NEXT: hpvm.edge %[[M]][0] -> %[[F]][2] one_to_one
// CHECK-NEXT: hpvm.bind_out %[[F]][0] -> 0
// CHECK-NEXT: }
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.leaf @pool(%r: tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>) {
  %p = hpvm.tensor.pool max %r {window = [2, 2], strides = [2, 2]} : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  hpvm.return %p : tensor<1x2x2x2xf32>
}
hpvm.leaf @make_bias(%b: tensor<1x2x1x1xf32>) -> (tensor<1x2x1x1xf32>) {
  hpvm.return %b : tensor<1x2x1x1xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x2x2xf32>) {
  %p = hpvm.create_node @pool : !hpvm.node
  %a = hpvm.create_node @bias : !hpvm.node
  %m = hpvm.create_node @make_bias : !hpvm.node
  %c = hpvm.create_node @conv : !hpvm.node
  hpvm.edge %a[0] -> %p[0] one_to_one
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one
  hpvm.bind_in %b -> %m[0] : tensor<1x2x1x1xf32>
  hpvm.edge %m[0] -> %a[1] one_to_one
  hpvm.bind_out %p[0] -> 0
}

// -----

// mul -> add -> sigmoid.
// CHECK-LABEL: hpvm.leaf @matmul_dense_bias_gate(%arg0: tensor<2x3xf32>, %arg1: tensor<3x4xf32>, %arg2: tensor<1x4xf32>) -> tensor<2x4xf32> {
// CHECK-NEXT: %[[Y:[^ ]+]] = hpvm.tensor.mul %arg0, %arg1 :
// CHECK-NEXT: %[[A:[^ ]+]] = hpvm.tensor.add %[[Y]], %arg2 :
// CHECK-NEXT: %[[S:[^ ]+]] = hpvm.tensor.sigmoid %[[A]] :
// CHECK-NEXT: hpvm.return %[[S]]
// CHECK-LABEL: hpvm.internal @root(
// CHECK-NEXT: %[[F:[^ ]+]] = hpvm.create_node @matmul_dense_bias_gate : !hpvm.node
// CHECK-NEXT: hpvm.bind_in %arg0 -> %[[F]][0]
// CHECK-NEXT: hpvm.bind_in %arg1 -> %[[F]][1]
// CHECK-NEXT: hpvm.bind_in %arg2 -> %[[F]][2]
// CHECK-NEXT: hpvm.bind_out %[[F]][0] -> 0
hpvm.leaf @matmul(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> (tensor<2x4xf32>) {
  %y = hpvm.tensor.mul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  hpvm.return %y : tensor<2x4xf32>
}
hpvm.leaf @dense_bias(%y: tensor<2x4xf32>, %b: tensor<1x4xf32>) -> (tensor<2x4xf32>) {
  %a = hpvm.tensor.add %y, %b : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  hpvm.return %a : tensor<2x4xf32>
}
hpvm.leaf @gate(%a: tensor<2x4xf32>) -> (tensor<2x4xf32>) {
  %r = hpvm.tensor.sigmoid %a : tensor<2x4xf32>
  hpvm.return %r : tensor<2x4xf32>
}
hpvm.internal @root(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>, %b: tensor<1x4xf32>) -> (tensor<2x4xf32>) {
  %m = hpvm.create_node @matmul : !hpvm.node
  %a = hpvm.create_node @dense_bias : !hpvm.node
  hpvm.bind_in %x -> %m[0] : tensor<2x3xf32>
  hpvm.bind_in %w -> %m[1] : tensor<3x4xf32>
  hpvm.edge %m[0] -> %a[0] one_to_one
  hpvm.bind_in %b -> %a[1] : tensor<1x4xf32>
  %s = hpvm.create_node @gate : !hpvm.node
  hpvm.edge %a[0] -> %s[0] one_to_one
  hpvm.bind_out %s[0] -> 0
}

// -----

// mul -> add -> clipped_relu.
// CHECK-LABEL: hpvm.leaf @matmul_dense_bias_relu6(
// CHECK-NEXT: hpvm.tensor.mul
// CHECK-NEXT: hpvm.tensor.add
// CHECK-NEXT: hpvm.tensor.clipped_relu %{{.*}} max 6.000000e+00
// CHECK-LABEL: hpvm.internal @root(
// CHECK-NEXT: hpvm.create_node @matmul_dense_bias_relu6 : !hpvm.node
hpvm.leaf @matmul(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> (tensor<2x4xf32>) {
  %y = hpvm.tensor.mul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  hpvm.return %y : tensor<2x4xf32>
}
hpvm.leaf @dense_bias(%y: tensor<2x4xf32>, %b: tensor<1x4xf32>) -> (tensor<2x4xf32>) {
  %a = hpvm.tensor.add %y, %b : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  hpvm.return %a : tensor<2x4xf32>
}
hpvm.leaf @relu6(%a: tensor<2x4xf32>) -> (tensor<2x4xf32>) {
  %r = hpvm.tensor.clipped_relu %a max 6.0 : tensor<2x4xf32>
  hpvm.return %r : tensor<2x4xf32>
}
hpvm.internal @root(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>, %b: tensor<1x4xf32>) -> (tensor<2x4xf32>) {
  %m = hpvm.create_node @matmul : !hpvm.node
  %a = hpvm.create_node @dense_bias : !hpvm.node
  hpvm.bind_in %x -> %m[0] : tensor<2x3xf32>
  hpvm.bind_in %w -> %m[1] : tensor<3x4xf32>
  hpvm.edge %m[0] -> %a[0] one_to_one
  hpvm.bind_in %b -> %a[1] : tensor<1x4xf32>
  %s = hpvm.create_node @relu6 : !hpvm.node
  hpvm.edge %a[0] -> %s[0] one_to_one
  hpvm.bind_out %s[0] -> 0
}

// -----

// mul -> add: the softmax after it is in no pattern and stays apart.
// CHECK-LABEL: hpvm.leaf @matmul_dense_bias(%arg0: tensor<2x3xf32>, %arg1: tensor<3x4xf32>, %arg2: tensor<1x4xf32>) -> tensor<2x4xf32> {
// CHECK-NEXT: %[[Y:[^ ]+]] = hpvm.tensor.mul %arg0, %arg1 :
// CHECK-NEXT: %[[A:[^ ]+]] = hpvm.tensor.add %[[Y]], %arg2 :
// CHECK-NEXT: hpvm.return %[[A]]
// CHECK-LABEL: hpvm.internal @root(
// CHECK-NEXT: %[[F:[^ ]+]] = hpvm.create_node @matmul_dense_bias : !hpvm.node
// CHECK-NEXT: hpvm.bind_in %arg0 -> %[[F]][0]
// CHECK-NEXT: hpvm.bind_in %arg1 -> %[[F]][1]
// CHECK-NEXT: hpvm.bind_in %arg2 -> %[[F]][2]
// CHECK-NEXT: %[[S:[^ ]+]] = hpvm.create_node @classes : !hpvm.node
// CHECK-NEXT: hpvm.edge %[[F]][0] -> %[[S]][0] one_to_one
// CHECK-NEXT: hpvm.bind_out %[[S]][0] -> 0
hpvm.leaf @matmul(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> (tensor<2x4xf32>) {
  %y = hpvm.tensor.mul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  hpvm.return %y : tensor<2x4xf32>
}
hpvm.leaf @dense_bias(%y: tensor<2x4xf32>, %b: tensor<1x4xf32>) -> (tensor<2x4xf32>) {
  %a = hpvm.tensor.add %y, %b : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  hpvm.return %a : tensor<2x4xf32>
}
hpvm.leaf @classes(%a: tensor<2x4xf32>) -> (tensor<2x4xf32>) {
  %r = hpvm.tensor.softmax %a : tensor<2x4xf32>
  hpvm.return %r : tensor<2x4xf32>
}
hpvm.internal @root(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>, %b: tensor<1x4xf32>) -> (tensor<2x4xf32>) {
  %m = hpvm.create_node @matmul : !hpvm.node
  %a = hpvm.create_node @dense_bias : !hpvm.node
  hpvm.bind_in %x -> %m[0] : tensor<2x3xf32>
  hpvm.bind_in %w -> %m[1] : tensor<3x4xf32>
  hpvm.edge %m[0] -> %a[0] one_to_one
  hpvm.bind_in %b -> %a[1] : tensor<1x4xf32>
  %s = hpvm.create_node @classes : !hpvm.node
  hpvm.edge %a[0] -> %s[0] one_to_one
  hpvm.bind_out %s[0] -> 0
}

// -----

// conv2d -> add, replicated with equal constant extents, and
// conv2d -> add -> clipped_relu -> pool in the same graph.
// CHECK-LABEL: hpvm.leaf @conv_bias(
// CHECK-LABEL: hpvm.leaf @conv2_bias2_relu6_pool(
// CHECK-NEXT: hpvm.tensor.conv2d
// CHECK-NEXT: hpvm.tensor.add
// CHECK-NEXT: hpvm.tensor.clipped_relu
// CHECK-NEXT: hpvm.tensor.pool
// CHECK-LABEL: hpvm.internal @root(
// CHECK: %[[C4:[^ ]+]] = arith.constant 4 : index
// CHECK: %[[F:[^ ]+]] = hpvm.create_node @conv_bias [%[[C4]]] : !hpvm.node
// CHECK-NEXT: hpvm.bind_in %arg0 -> %[[F]][0]
// CHECK-NEXT: hpvm.bind_in %arg1 -> %[[F]][1]
// CHECK-NEXT: hpvm.bind_in %arg2 -> %[[F]][2]
// CHECK-NEXT: hpvm.bind_out %[[F]][0] -> 1
// CHECK-NEXT: %[[G:[^ ]+]] = hpvm.create_node @conv2_bias2_relu6_pool : !hpvm.node
// CHECK: hpvm.bind_out %[[G]][0] -> 0
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.leaf @conv2(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias2(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.leaf @relu6(%a: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %r = hpvm.tensor.clipped_relu %a max 6.0 : tensor<1x2x4x4xf32>
  hpvm.return %r : tensor<1x2x4x4xf32>
}
hpvm.leaf @pool(%r: tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>) {
  %p = hpvm.tensor.pool max %r {window = [2, 2], strides = [2, 2]} : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  hpvm.return %p : tensor<1x2x2x2xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>) {
  %c4 = arith.constant 4 : index
  %four = arith.constant 4 : index
  %c = hpvm.create_node @conv [%c4] : !hpvm.node
  %a = hpvm.create_node @bias [%four] : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one
  hpvm.bind_in %b -> %a[1] : tensor<1x2x1x1xf32>
  hpvm.bind_out %a[0] -> 1
  %c2 = hpvm.create_node @conv2 : !hpvm.node
  %a2 = hpvm.create_node @bias2 : !hpvm.node
  %r2 = hpvm.create_node @relu6 : !hpvm.node
  %p2 = hpvm.create_node @pool : !hpvm.node
  hpvm.bind_in %x -> %c2[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c2[1] : tensor<2x1x3x3xf32>
  hpvm.edge %c2[0] -> %a2[0] one_to_one
  hpvm.bind_in %b -> %a2[1] : tensor<1x2x1x1xf32>
  hpvm.edge %a2[0] -> %r2[0] one_to_one
  hpvm.edge %r2[0] -> %p2[0] one_to_one
  hpvm.bind_out %p2[0] -> 0
}

// -----

// Refused: the convolution's result is also an output of the parent.
// CHECK-LABEL: hpvm.internal @root(
// CHECK: hpvm.create_node @conv
// CHECK: hpvm.create_node @bias
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  // expected-remark @+1 {{not fused with @bias (conv2d -> add): its result is also an output of @root (bind_out), not only an input of the next node}}
  %c = hpvm.create_node @conv : !hpvm.node
  %a = hpvm.create_node @bias : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.bind_in %b -> %a[1] : tensor<1x2x1x1xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one
  hpvm.bind_out %a[0] -> 0
  hpvm.bind_out %c[0] -> 1
}

// -----

// Refused: the convolution's result fans out (a residual block: the bias add
// and the skip add both read it), so it must survive the chain.
// CHECK-LABEL: hpvm.internal @root(
// CHECK: hpvm.create_node @conv
// CHECK: hpvm.create_node @bias
// CHECK: hpvm.create_node @skip
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.leaf @skip(%c: tensor<1x2x4x4xf32>, %d: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %d : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  // expected-remark @+1 {{not fused with @bias (conv2d -> add): its result also feeds @skip (input 1), not only the next node}}
  %c = hpvm.create_node @conv : !hpvm.node
  %a = hpvm.create_node @bias : !hpvm.node
  %s = hpvm.create_node @skip : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.bind_in %b -> %a[1] : tensor<1x2x1x1xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one
  hpvm.edge %a[0] -> %s[0] one_to_one
  hpvm.edge %c[0] -> %s[1] one_to_one
  hpvm.bind_out %s[0] -> 0
}

// -----

// Refused: different targets.
// CHECK-LABEL: hpvm.internal @root(
// CHECK: hpvm.create_node @conv
// CHECK: hpvm.create_node @bias
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) attributes {hpvm.targets = [#hpvm.target<tensor>]} {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  // expected-remark @+1 {{not fused with @bias (conv2d -> add): the nodes have different targets}}
  %c = hpvm.create_node @conv : !hpvm.node
  %a = hpvm.create_node @bias : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.bind_in %b -> %a[1] : tensor<1x2x1x1xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one
  hpvm.bind_out %a[0] -> 0
}

// -----

// Refused: a streaming edge.
// CHECK-LABEL: hpvm.internal @root(
// CHECK: hpvm.create_node @conv
// CHECK: hpvm.create_node @bias
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  // expected-remark @+1 {{not fused with @bias (conv2d -> add): a streaming edge joins them}}
  %c = hpvm.create_node @conv : !hpvm.node
  %a = hpvm.create_node @bias : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.bind_in %b -> %a[1] : tensor<1x2x1x1xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one streaming
  hpvm.bind_out %a[0] -> 0
}

// -----

// Refused: grids that may differ.
// CHECK-LABEL: hpvm.internal @root(
// CHECK: hpvm.create_node @conv
// CHECK: hpvm.create_node @bias
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>, %n: index, %m: index) -> (tensor<1x2x4x4xf32>) {
  // expected-remark @+1 {{not fused with @bias (conv2d -> add): the grids may differ in dimension 0}}
  %c = hpvm.create_node @conv [%n] : !hpvm.node
  %a = hpvm.create_node @bias [%m] : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.bind_in %b -> %a[1] : tensor<1x2x1x1xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one
  hpvm.bind_out %a[0] -> 0
}

// -----

// Refused: grids of different ranks.
// CHECK-LABEL: hpvm.internal @root(
// CHECK: hpvm.create_node @conv
// CHECK: hpvm.create_node @bias
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>, %n: index) -> (tensor<1x2x4x4xf32>) {
  // expected-remark @+1 {{not fused with @bias (conv2d -> add): the grids have different ranks}}
  %c = hpvm.create_node @conv [%n] : !hpvm.node
  %a = hpvm.create_node @bias [%n, %n] : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.bind_in %b -> %a[1] : tensor<1x2x1x1xf32>
  hpvm.edge %c[0] -> %a[0] all_to_all
  hpvm.bind_out %a[0] -> 0
}

// -----

// Refused: an all_to_all edge between replicated nodes.
// CHECK-LABEL: hpvm.internal @root(
// CHECK: hpvm.create_node @conv
// CHECK: hpvm.create_node @bias
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>, %n: index) -> (tensor<1x2x4x4xf32>) {
  // expected-remark @+1 {{not fused with @bias (conv2d -> add): an all_to_all edge joins replicated nodes}}
  %c = hpvm.create_node @conv [%n] : !hpvm.node
  %a = hpvm.create_node @bias [%n] : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.bind_in %b -> %a[1] : tensor<1x2x1x1xf32>
  hpvm.edge %c[0] -> %a[0] all_to_all
  hpvm.bind_out %a[0] -> 0
}

// -----

// Refused: the chain would cross internal nodes (different parents; the
// result reaches the add through a bind_out, not a direct edge).
// CHECK-LABEL: hpvm.internal @root(
// CHECK: hpvm.create_node @features
// CHECK: hpvm.create_node @bias
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.internal @features(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  // expected-remark @+1 {{not fused with @bias (conv2d -> add): the nodes have different parents (@features and @root); the result reaches it through bind_out and an edge of @root, not a direct edge}}
  %c = hpvm.create_node @conv : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.bind_out %c[0] -> 0
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %f = hpvm.create_node @features : !hpvm.node
  %a = hpvm.create_node @bias : !hpvm.node
  hpvm.bind_in %x -> %f[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %f[1] : tensor<2x1x3x3xf32>
  hpvm.edge %f[0] -> %a[0] one_to_one
  hpvm.bind_in %b -> %a[1] : tensor<1x2x1x1xf32>
  hpvm.bind_out %a[0] -> 0
}

// -----

// Refused: the add goes down into another internal node (different parents).
// CHECK-LABEL: hpvm.internal @features(
// CHECK-NEXT: hpvm.create_node @conv :
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.internal @classifier(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.create_node @bias : !hpvm.node
  hpvm.bind_in %c -> %a[0] : tensor<1x2x4x4xf32>
  hpvm.bind_in %b -> %a[1] : tensor<1x2x1x1xf32>
  hpvm.bind_out %a[0] -> 0
}
hpvm.internal @features(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  // expected-remark @+1 {{not fused with @bias (conv2d -> add): the nodes have different parents (@features and @classifier); the result reaches it through bind_out and an edge of @root, not a direct edge}}
  %c = hpvm.create_node @conv : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.bind_out %c[0] -> 0
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %f = hpvm.create_node @features : !hpvm.node
  %k = hpvm.create_node @classifier : !hpvm.node
  hpvm.bind_in %x -> %f[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %f[1] : tensor<2x1x3x3xf32>
  hpvm.edge %f[0] -> %k[0] one_to_one
  hpvm.bind_in %b -> %k[1] : tensor<1x2x1x1xf32>
  hpvm.bind_out %k[0] -> 0
}

// -----

// Refused: the consumer holds more than one op.
// CHECK-LABEL: hpvm.internal @root(
// CHECK: hpvm.create_node @conv
// CHECK: hpvm.create_node @bias_relu
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias_relu(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = hpvm.tensor.relu %a : tensor<1x2x4x4xf32>
  hpvm.return %r : tensor<1x2x4x4xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  // expected-remark @+1 {{not fused with @bias_relu: it is not a single-tensor-op leaf (it holds 2 ops besides hpvm.return, not all constants)}}
  %c = hpvm.create_node @conv : !hpvm.node
  %a = hpvm.create_node @bias_relu : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one
  hpvm.bind_in %b -> %a[1] : tensor<1x2x1x1xf32>
  hpvm.bind_out %a[0] -> 0
}

// -----

// Refused: an add fed by two convolutions joins the first chain only.
// CHECK-LABEL: hpvm.leaf @conv_sum(%arg0: tensor<1x1x6x6xf32>, %arg1: tensor<2x1x3x3xf32>, %arg2: tensor<1x2x4x4xf32>)
// CHECK-LABEL: hpvm.internal @root(
// CHECK: %[[D:[^ ]+]] = hpvm.create_node @conv2 :
// CHECK: %[[F:[^ ]+]] = hpvm.create_node @conv_sum :
// CHECK: hpvm.edge %[[D]][0] -> %[[F]][2] one_to_one
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @conv2(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @sum(%c: tensor<1x2x4x4xf32>, %d: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %d : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.create_node @conv : !hpvm.node
  // expected-remark @+1 {{not fused with @sum (conv2d -> add): it is already fused into the chain starting at @conv}}
  %d = hpvm.create_node @conv2 : !hpvm.node
  %a = hpvm.create_node @sum : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.bind_in %x -> %d[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %d[1] : tensor<2x1x3x3xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one
  hpvm.edge %d[0] -> %a[1] one_to_one
  hpvm.bind_out %a[0] -> 0
}

// -----

// Refused after a legal prefix: the chain stops at the longest legal pattern
// (conv2d -> add -> relu) when the pool has other targets; the result fed
// to a relu input that is not its operand stops a chain too.
// CHECK-LABEL: hpvm.leaf @conv_bias_relu(
// CHECK-LABEL: hpvm.leaf @conv2_bias2(
// CHECK-LABEL: hpvm.internal @root(
// CHECK: %[[F:[^ ]+]] = hpvm.create_node @conv_bias_relu :
// CHECK-NEXT: %[[P:[^ ]+]] = hpvm.create_node @pool :
// CHECK: hpvm.edge %[[F]][0] -> %[[P]][0] one_to_one
// CHECK: %[[G:[^ ]+]] = hpvm.create_node @conv2_bias2 :
// CHECK: %[[R:[^ ]+]] = hpvm.create_node @relu2 :
// CHECK: hpvm.edge %[[G]][0] -> %[[R]][0] one_to_one
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.leaf @relu(%a: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %r = hpvm.tensor.relu %a : tensor<1x2x4x4xf32>
  hpvm.return %r : tensor<1x2x4x4xf32>
}
hpvm.leaf @pool(%r: tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>) attributes {hpvm.targets = [#hpvm.target<tensor>]} {
  %p = hpvm.tensor.pool max %r {window = [2, 2], strides = [2, 2]} : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  hpvm.return %p : tensor<1x2x2x2xf32>
}
hpvm.leaf @conv2(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias2(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.leaf @relu2(%unused: tensor<1x2x4x4xf32>, %a: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %r = hpvm.tensor.relu %a : tensor<1x2x4x4xf32>
  hpvm.return %r : tensor<1x2x4x4xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>, %y: tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>) {
  %c = hpvm.create_node @conv : !hpvm.node
  %a = hpvm.create_node @bias : !hpvm.node
  // expected-remark @+1 {{not fused with @pool (relu -> pool): the nodes have different targets}}
  %r = hpvm.create_node @relu : !hpvm.node
  %p = hpvm.create_node @pool : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one
  hpvm.bind_in %b -> %a[1] : tensor<1x2x1x1xf32>
  hpvm.edge %a[0] -> %r[0] one_to_one
  hpvm.edge %r[0] -> %p[0] one_to_one
  hpvm.bind_out %p[0] -> 0
  %c2 = hpvm.create_node @conv2 : !hpvm.node
  // expected-remark @+1 {{not fused with @relu2 (add -> relu): its result feeds input 0 of the consumer, which is not the data operand of its 'hpvm.tensor.relu'}}
  %a2 = hpvm.create_node @bias2 : !hpvm.node
  %r2 = hpvm.create_node @relu2 : !hpvm.node
  hpvm.bind_in %x -> %c2[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c2[1] : tensor<2x1x3x3xf32>
  hpvm.edge %c2[0] -> %a2[0] one_to_one
  hpvm.bind_in %b -> %a2[1] : tensor<1x2x1x1xf32>
  hpvm.edge %a2[0] -> %r2[0] one_to_one
  hpvm.bind_in %y -> %r2[1] : tensor<1x2x4x4xf32>
  hpvm.bind_out %r2[0] -> 1
}

// -----

// Not a pattern: conv2d -> relu without an add; nothing happens, no remark.
// CHECK-LABEL: hpvm.internal @root(
// CHECK-NEXT: hpvm.create_node @conv :
// CHECK-NEXT: hpvm.create_node @relu :
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @relu(%a: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %r = hpvm.tensor.relu %a : tensor<1x2x4x4xf32>
  hpvm.return %r : tensor<1x2x4x4xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.create_node @conv : !hpvm.node
  %r = hpvm.create_node @relu : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.edge %c[0] -> %r[0] one_to_one
  hpvm.bind_out %r[0] -> 0
}

// -----

// Leaves holding their constants (weights and a bias a frontend wrote into the
// leaf, as the Python package's builders do) are still single-tensor-op leaves:
// the constants move into the fused leaf before the op that uses them.
// CHECK-LABEL: hpvm.leaf @conv_bias_relu(%arg0: tensor<1x1x4x4xf32>) -> tensor<1x2x2x2xf32> {
// CHECK-NEXT: %[[W:[^ ]+]] = arith.constant dense<1.000000e+00> : tensor<2x1x3x3xf32>
// CHECK-NEXT: %[[C:[^ ]+]] = hpvm.tensor.conv2d %arg0, %[[W]] :
// CHECK-NEXT: %[[B:[^ ]+]] = arith.constant dense<5.000000e-01> : tensor<1x2x1x1xf32>
// CHECK-NEXT: %[[A:[^ ]+]] = hpvm.tensor.add %[[C]], %[[B]] :
// CHECK-NEXT: %[[R:[^ ]+]] = hpvm.tensor.relu %[[A]] :
// CHECK-NEXT: hpvm.return %[[R]]
// CHECK-LABEL: hpvm.internal @net(
// CHECK-NEXT: %[[N:.*]] = hpvm.create_node @conv_bias_relu : !hpvm.node
// CHECK-NEXT: hpvm.bind_in %arg0 -> %[[N]][0]
// CHECK-NEXT: hpvm.bind_out %[[N]][0] -> 0
hpvm.leaf @conv(%x: tensor<1x1x4x4xf32>) -> (tensor<1x2x2x2xf32>) {
  %w = arith.constant dense<1.0> : tensor<2x1x3x3xf32>
  %c = hpvm.tensor.conv2d %x, %w : (tensor<1x1x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x2x2xf32>
  hpvm.return %c : tensor<1x2x2x2xf32>
}
hpvm.leaf @bias(%c: tensor<1x2x2x2xf32>) -> (tensor<1x2x2x2xf32>) {
  %b = arith.constant dense<0.5> : tensor<1x2x1x1xf32>
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x2x2xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x2x2xf32>
  hpvm.return %a : tensor<1x2x2x2xf32>
}
hpvm.leaf @relu(%a: tensor<1x2x2x2xf32>) -> (tensor<1x2x2x2xf32>) {
  %r = hpvm.tensor.relu %a : tensor<1x2x2x2xf32>
  hpvm.return %r : tensor<1x2x2x2xf32>
}
hpvm.internal @net(%x: tensor<1x1x4x4xf32>) -> (tensor<1x2x2x2xf32>) {
  %c = hpvm.create_node @conv : !hpvm.node
  %a = hpvm.create_node @bias : !hpvm.node
  %r = hpvm.create_node @relu : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x4x4xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one
  hpvm.edge %a[0] -> %r[0] one_to_one
  hpvm.bind_out %r[0] -> 0
}

// -----

// ApproxHPVM's leaves (as hpvm-raise-c makes them from the release's DNN
// programs): each also returns a byte size, which travels beside the tensor
// into the next leaf, and the product flattens its 4-D operands and expands
// its result. The sizes of the inner steps come from inside the fused leaf;
// the last leaf's size stays its output.
// CHECK-LABEL: hpvm.leaf @fc_bias_act(%arg0: tensor<2x3x2x2xf32>, %arg1: i64, %arg2: tensor<1x1x12x5xf32>, %arg3: i64, %arg4: tensor<1x5x1x1xf32>, %arg5: i64) -> (tensor<2x5x1x1xf32>, i64) {
// CHECK-NEXT: %[[Z0:[^ ]+]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: %[[X:[^ ]+]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1, 2, 3]]
// CHECK-NEXT: %[[W:[^ ]+]] = tensor.collapse_shape %arg2 {{\[\[}}0, 1, 2], [3]]
// CHECK-NEXT: %[[M:[^ ]+]] = hpvm.tensor.mul %[[X]], %[[W]] :
// CHECK-NEXT: %[[E:[^ ]+]] = tensor.expand_shape %[[M]] {{\[\[}}0], [1, 2, 3]]
// CHECK-NEXT: %[[Z1:[^ ]+]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: %[[A:[^ ]+]] = hpvm.tensor.add %[[E]], %arg4 :
// CHECK-NEXT: %[[Z2:[^ ]+]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: %[[T:[^ ]+]] = hpvm.tensor.clipped_relu %[[A]] max 6.0
// CHECK-NEXT: hpvm.return %[[T]], %[[Z2]] : tensor<2x5x1x1xf32>, i64
// CHECK-LABEL: hpvm.internal @root(
// CHECK-NEXT: %[[F:[^ ]+]] = hpvm.create_node @fc_bias_act : !hpvm.node
// CHECK-NEXT: hpvm.bind_in %arg0 -> %[[F]][0]
// CHECK-NEXT: hpvm.bind_in %arg1 -> %[[F]][1]
// CHECK-NEXT: hpvm.bind_in %arg2 -> %[[F]][2]
// CHECK-NEXT: hpvm.bind_in %arg3 -> %[[F]][3]
// CHECK-NEXT: hpvm.bind_in %arg4 -> %[[F]][4]
// CHECK-NEXT: hpvm.bind_in %arg5 -> %[[F]][5]
// CHECK-NEXT: hpvm.bind_out %[[F]][0] -> 0
// CHECK-NEXT: hpvm.bind_out %[[F]][1] -> 1
// CHECK-NEXT: }
hpvm.leaf @fc(%x: tensor<2x3x2x2xf32>, %xb: i64, %w: tensor<1x1x12x5xf32>, %wb: i64) -> (tensor<2x5x1x1xf32>, i64) {
  %z = llvm.mlir.constant(0 : i64) : i64
  %fx = tensor.collapse_shape %x [[0], [1, 2, 3]] : tensor<2x3x2x2xf32> into tensor<2x12xf32>
  %fw = tensor.collapse_shape %w [[0, 1, 2], [3]] : tensor<1x1x12x5xf32> into tensor<12x5xf32>
  %m = hpvm.tensor.mul %fx, %fw : (tensor<2x12xf32>, tensor<12x5xf32>) -> tensor<2x5xf32>
  %e = tensor.expand_shape %m [[0], [1, 2, 3]] output_shape [2, 5, 1, 1] : tensor<2x5xf32> into tensor<2x5x1x1xf32>
  hpvm.return %e, %z : tensor<2x5x1x1xf32>, i64
}
hpvm.leaf @bias(%a: tensor<2x5x1x1xf32>, %ab: i64, %b: tensor<1x5x1x1xf32>, %bb: i64) -> (tensor<2x5x1x1xf32>, i64) {
  %z = llvm.mlir.constant(0 : i64) : i64
  %s = hpvm.tensor.add %a, %b : (tensor<2x5x1x1xf32>, tensor<1x5x1x1xf32>) -> tensor<2x5x1x1xf32>
  hpvm.return %s, %z : tensor<2x5x1x1xf32>, i64
}
hpvm.leaf @act(%a: tensor<2x5x1x1xf32>, %ab: i64) -> (tensor<2x5x1x1xf32>, i64) {
  %z = llvm.mlir.constant(0 : i64) : i64
  %r = hpvm.tensor.clipped_relu %a max 6.0 : tensor<2x5x1x1xf32>
  hpvm.return %r, %z : tensor<2x5x1x1xf32>, i64
}
hpvm.internal @root(%x: tensor<2x3x2x2xf32>, %xb: i64, %w: tensor<1x1x12x5xf32>, %wb: i64, %b: tensor<1x5x1x1xf32>, %bb: i64) -> (tensor<2x5x1x1xf32>, i64) {
  %f = hpvm.create_node @fc : !hpvm.node
  %a = hpvm.create_node @bias : !hpvm.node
  %r = hpvm.create_node @act : !hpvm.node
  hpvm.bind_in %x -> %f[0] : tensor<2x3x2x2xf32>
  hpvm.bind_in %xb -> %f[1] : i64
  hpvm.bind_in %w -> %f[2] : tensor<1x1x12x5xf32>
  hpvm.bind_in %wb -> %f[3] : i64
  hpvm.edge %f[0] -> %a[0] one_to_one
  hpvm.edge %f[1] -> %a[1] one_to_one
  hpvm.bind_in %b -> %a[2] : tensor<1x5x1x1xf32>
  hpvm.bind_in %bb -> %a[3] : i64
  hpvm.edge %a[0] -> %r[0] one_to_one
  hpvm.edge %a[1] -> %r[1] one_to_one
  hpvm.bind_out %r[0] -> 0
  hpvm.bind_out %r[1] -> 1
}

// -----

// A size output that also goes elsewhere: the producer's outputs would vanish
// with it, so the step is refused.
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>, i64) {
  %z = llvm.mlir.constant(0 : i64) : i64
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c, %z : tensor<1x2x4x4xf32>, i64
}
hpvm.leaf @bias(%c: tensor<1x2x4x4xf32>, %cb: i64, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.leaf @count(%n: i64) -> (i64) {
  hpvm.return %n : i64
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>, i64) {
  // expected-remark @below {{not fused with @bias (conv2d -> add): its output 1 also feeds @count, not only the next node}}
  %c = hpvm.create_node @conv : !hpvm.node
  %a = hpvm.create_node @bias : !hpvm.node
  %n = hpvm.create_node @count : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one
  hpvm.edge %c[1] -> %a[1] one_to_one
  hpvm.edge %c[1] -> %n[0] one_to_one
  hpvm.bind_in %b -> %a[2] : tensor<1x2x1x1xf32>
  hpvm.bind_out %a[0] -> 0
  hpvm.bind_out %n[0] -> 1
}

// -----

// The layers of ResNet and MobileNet as ApproxHPVM writes them: a batch
// normalization between the convolution and its activation, and a residual
// add before an activation (a chain may start at an add).
// CHECK-LABEL: hpvm.leaf @conv_norm_relu(
// CHECK: hpvm.tensor.conv2d
// CHECK-NEXT: hpvm.tensor.batchnorm
// CHECK-NEXT: hpvm.tensor.relu
// CHECK-LABEL: hpvm.leaf @skip_relu2(
// CHECK: hpvm.tensor.add
// CHECK-NEXT: hpvm.tensor.relu
// CHECK-LABEL: hpvm.internal @root(
// CHECK-NEXT: %[[A:[^ ]+]] = hpvm.create_node @conv_norm_relu
// CHECK: %[[B:[^ ]+]] = hpvm.create_node @skip_relu2
// CHECK-NOT: hpvm.create_node
hpvm.leaf @conv(%x: tensor<1x2x6x6xf32>, %w: tensor<2x2x3x3xf32>) -> (tensor<1x2x6x6xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [1, 1]} : (tensor<1x2x6x6xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  hpvm.return %c : tensor<1x2x6x6xf32>
}
hpvm.leaf @norm(%c: tensor<1x2x6x6xf32>, %g: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> (tensor<1x2x6x6xf32>) {
  %n = hpvm.tensor.batchnorm %c, %g, %b, %m, %v {epsilon = 1.0e-03} : (tensor<1x2x6x6xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x6x6xf32>
  hpvm.return %n : tensor<1x2x6x6xf32>
}
hpvm.leaf @relu(%a: tensor<1x2x6x6xf32>) -> (tensor<1x2x6x6xf32>) {
  %r = hpvm.tensor.relu %a : tensor<1x2x6x6xf32>
  hpvm.return %r : tensor<1x2x6x6xf32>
}
hpvm.leaf @skip(%a: tensor<1x2x6x6xf32>, %b: tensor<1x2x6x6xf32>) -> (tensor<1x2x6x6xf32>) {
  %s = hpvm.tensor.add %a, %b : (tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  hpvm.return %s : tensor<1x2x6x6xf32>
}
hpvm.leaf @relu2(%a: tensor<1x2x6x6xf32>) -> (tensor<1x2x6x6xf32>) {
  %r = hpvm.tensor.relu %a : tensor<1x2x6x6xf32>
  hpvm.return %r : tensor<1x2x6x6xf32>
}
hpvm.internal @root(%x: tensor<1x2x6x6xf32>, %w: tensor<2x2x3x3xf32>, %g: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>, %y: tensor<1x2x6x6xf32>) -> (tensor<1x2x6x6xf32>) {
  %c = hpvm.create_node @conv : !hpvm.node
  %n = hpvm.create_node @norm : !hpvm.node
  %r = hpvm.create_node @relu : !hpvm.node
  %s = hpvm.create_node @skip : !hpvm.node
  %q = hpvm.create_node @relu2 : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x2x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x2x3x3xf32>
  hpvm.edge %c[0] -> %n[0] one_to_one
  hpvm.bind_in %g -> %n[1] : tensor<2xf32>
  hpvm.bind_in %b -> %n[2] : tensor<2xf32>
  hpvm.bind_in %m -> %n[3] : tensor<2xf32>
  hpvm.bind_in %v -> %n[4] : tensor<2xf32>
  hpvm.edge %n[0] -> %r[0] one_to_one
  hpvm.edge %r[0] -> %s[0] one_to_one
  hpvm.bind_in %y -> %s[1] : tensor<1x2x6x6xf32>
  hpvm.edge %s[0] -> %q[0] one_to_one
  hpvm.bind_out %q[0] -> 0
}

// -----

// Leaves of C++ (mangled names, as a release DNN program's var_N_node): the fused
// leaf is named from their names as the trace shows them, demangled.
// CHECK-LABEL: hpvm.leaf @var_0_node_var_1_node_var_2_node_var_3_node(
// CHECK: hpvm.create_node @var_0_node_var_1_node_var_2_node_var_3_node : !hpvm.node
hpvm.leaf @_Z10var_0_nodePvmS_m(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @_Z10var_1_nodePvmS_m(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.leaf @_Z10var_2_nodePvm(%a: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %r = hpvm.tensor.relu %a : tensor<1x2x4x4xf32>
  hpvm.return %r : tensor<1x2x4x4xf32>
}
hpvm.leaf @_Z10var_3_nodePvm(%r: tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>) {
  %p = hpvm.tensor.pool max %r {window = [2, 2], strides = [2, 2]} : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  hpvm.return %p : tensor<1x2x2x2xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x2x2xf32>) {
  %c = hpvm.create_node @_Z10var_0_nodePvmS_m : !hpvm.node
  %a = hpvm.create_node @_Z10var_1_nodePvmS_m : !hpvm.node
  %r = hpvm.create_node @_Z10var_2_nodePvm : !hpvm.node
  %p = hpvm.create_node @_Z10var_3_nodePvm : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one
  hpvm.bind_in %b -> %a[1] : tensor<1x2x1x1xf32>
  hpvm.edge %a[0] -> %r[0] one_to_one
  hpvm.edge %r[0] -> %p[0] one_to_one
  hpvm.bind_out %p[0] -> 0
}


// -----

// conv2d -> add -> HardSwish as the ONNX importer writes it (a map the CPU's kernels apply in
// their epilogue): the map is the chain's activation.
// CHECK-LABEL: hpvm.leaf @conv_bias_hswish(%arg0: tensor<1x1x6x6xf32>, %arg1: tensor<2x1x3x3xf32>, %arg2: tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
// CHECK-NEXT: %[[C:[^ ]+]] = hpvm.tensor.conv2d %arg0, %arg1 :
// CHECK-NEXT: %[[A:[^ ]+]] = hpvm.tensor.add %[[C]], %arg2 :
// CHECK-NEXT: %[[H:[^ ]+]] = hpvm.tensor.map %[[A]] :
// CHECK: hpvm.return %[[H]]
// CHECK-LABEL: hpvm.internal @root(
// CHECK-NEXT: %[[F:[^ ]+]] = hpvm.create_node @conv_bias_hswish : !hpvm.node
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.leaf @hswish(%a: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %y = hpvm.tensor.map %a : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  ^bb0(%e: f32):
    %sixth = arith.constant 0.166666672 : f32
    %half = arith.constant 5.000000e-01 : f32
    %zero = arith.constant 0.000000e+00 : f32
    %one = arith.constant 1.000000e+00 : f32
    %s = arith.mulf %e, %sixth : f32
    %t = arith.addf %s, %half : f32
    %lo = arith.minimumf %t, %one : f32
    %hi = arith.maximumf %lo, %zero : f32
    %r = arith.mulf %e, %hi : f32
    hpvm.tensor.yield %r : f32
  }
  hpvm.return %y : tensor<1x2x4x4xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.create_node @conv : !hpvm.node
  %a = hpvm.create_node @bias : !hpvm.node
  %h = hpvm.create_node @hswish : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one
  hpvm.bind_in %b -> %a[1] : tensor<1x2x1x1xf32>
  hpvm.edge %a[0] -> %h[0] one_to_one
  hpvm.bind_out %h[0] -> 0
}

// -----

// A map that is not HardSwish (0.25 where it adds 0.5) ends the chain at the add.
// CHECK-LABEL: hpvm.leaf @conv_bias(
// CHECK-LABEL: hpvm.internal @root(
// CHECK-NEXT: %[[F:[^ ]+]] = hpvm.create_node @conv_bias : !hpvm.node
// CHECK: hpvm.create_node @other : !hpvm.node
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.leaf @other(%a: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %y = hpvm.tensor.map %a : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  ^bb0(%e: f32):
    %sixth = arith.constant 0.166666672 : f32
    %half = arith.constant 2.500000e-01 : f32
    %zero = arith.constant 0.000000e+00 : f32
    %one = arith.constant 1.000000e+00 : f32
    %s = arith.mulf %e, %sixth : f32
    %t = arith.addf %s, %half : f32
    %lo = arith.minimumf %t, %one : f32
    %hi = arith.maximumf %lo, %zero : f32
    %r = arith.mulf %e, %hi : f32
    hpvm.tensor.yield %r : f32
  }
  hpvm.return %y : tensor<1x2x4x4xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.create_node @conv : !hpvm.node
  %a = hpvm.create_node @bias : !hpvm.node
  %h = hpvm.create_node @other : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one
  hpvm.bind_in %b -> %a[1] : tensor<1x2x1x1xf32>
  hpvm.edge %a[0] -> %h[0] one_to_one
  hpvm.bind_out %h[0] -> 0
}
