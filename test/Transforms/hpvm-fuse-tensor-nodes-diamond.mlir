// hpvm-fuse-tensor-nodes: a chain ending in a diamond (the last result feeds a
// one-input elementwise leaf and, with that leaf's result, a two-input map:
// SiLU as ONNX writes it, Sigmoid then Mul(x, sigmoid(x))) becomes one leaf;
// a remark with the reason for each refused rule.
// (Groups of the elementwise leaves left: hpvm-fuse-tensor-nodes-groups.mlir.)
// RUN: hpvm-opt %s --split-input-file --hpvm-fuse-tensor-nodes=elementwise-groups=false --verify-diagnostics | FileCheck %s

// conv2d -> add, then the diamond: one leaf.
// CHECK-LABEL: hpvm.leaf @conv_bias_s_y(%arg0: tensor<1x1x6x6xf32>, %arg1: tensor<2x1x3x3xf32>, %arg2: tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
// CHECK-NEXT: %[[C:[^ ]+]] = hpvm.tensor.conv2d %arg0, %arg1
// CHECK-NEXT: %[[A:[^ ]+]] = hpvm.tensor.add %[[C]], %arg2
// CHECK-NEXT: %[[S:[^ ]+]] = hpvm.tensor.sigmoid %[[A]]
// CHECK-NEXT: %[[Y:[^ ]+]] = hpvm.tensor.map %[[A]], %[[S]]
// CHECK: arith.mulf
// CHECK: hpvm.return %[[Y]] : tensor<1x2x4x4xf32>
// CHECK-LABEL: hpvm.internal @root(
// CHECK-NEXT: %[[F:[^ ]+]] = hpvm.create_node @conv_bias_s_y : !hpvm.node
// CHECK-NEXT: hpvm.bind_in %arg0 -> %[[F]][0]
// CHECK-NEXT: hpvm.bind_in %arg1 -> %[[F]][1]
// CHECK-NEXT: hpvm.bind_in %arg2 -> %[[F]][2]
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
hpvm.leaf @s(%a: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %s = hpvm.tensor.sigmoid %a : tensor<1x2x4x4xf32>
  hpvm.return %s : tensor<1x2x4x4xf32>
}
hpvm.leaf @y(%i0: tensor<1x2x4x4xf32>, %i1: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %y = hpvm.tensor.map %i0, %i1 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  ^bb0(%e0: f32, %e1: f32):
    %m = arith.mulf %e0, %e1 : f32
    hpvm.tensor.yield %m : f32
  }
  hpvm.return %y : tensor<1x2x4x4xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.create_node @conv : !hpvm.node
  %a = hpvm.create_node @bias : !hpvm.node
  %s = hpvm.create_node @s : !hpvm.node
  %y = hpvm.create_node @y : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.bind_in %b -> %a[1] : tensor<1x2x1x1xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one
  hpvm.edge %a[0] -> %s[0] one_to_one
  hpvm.edge %a[0] -> %y[0] one_to_one
  hpvm.edge %s[0] -> %y[1] one_to_one
    hpvm.bind_out %y[0] -> 0
}

// -----

// A lone convolution (no bias), the product's operands the other way round.
// CHECK-LABEL: hpvm.leaf @conv_s_y(
// CHECK-NEXT: %[[C:[^ ]+]] = hpvm.tensor.conv2d %arg0, %arg1
// CHECK-NEXT: %[[S:[^ ]+]] = hpvm.tensor.sigmoid %[[C]]
// CHECK-NEXT: %[[Y:[^ ]+]] = hpvm.tensor.map %[[S]], %[[C]]
// CHECK-LABEL: hpvm.internal @root(
// CHECK-NEXT: hpvm.create_node @conv_s_y
// CHECK-NOT: hpvm.create_node
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @s(%a: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %s = hpvm.tensor.sigmoid %a : tensor<1x2x4x4xf32>
  hpvm.return %s : tensor<1x2x4x4xf32>
}
hpvm.leaf @y(%i0: tensor<1x2x4x4xf32>, %i1: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %y = hpvm.tensor.map %i0, %i1 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  ^bb0(%e0: f32, %e1: f32):
    %m = arith.mulf %e0, %e1 : f32
    hpvm.tensor.yield %m : f32
  }
  hpvm.return %y : tensor<1x2x4x4xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.create_node @conv : !hpvm.node
  %s = hpvm.create_node @s : !hpvm.node
  %y = hpvm.create_node @y : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.edge %c[0] -> %s[0] one_to_one
  hpvm.edge %s[0] -> %y[0] one_to_one
  hpvm.edge %c[0] -> %y[1] one_to_one
    hpvm.bind_out %y[0] -> 0
}

// -----

// The bias add's result used a third time: refused (it must survive).
// CHECK-LABEL: hpvm.internal @root(
// CHECK: hpvm.create_node @conv_bias
// CHECK: hpvm.create_node @s
// CHECK: hpvm.create_node @y
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.leaf @s(%a: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %s = hpvm.tensor.sigmoid %a : tensor<1x2x4x4xf32>
  hpvm.return %s : tensor<1x2x4x4xf32>
}
hpvm.leaf @y(%i0: tensor<1x2x4x4xf32>, %i1: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %y = hpvm.tensor.map %i0, %i1 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  ^bb0(%e0: f32, %e1: f32):
    %m = arith.mulf %e0, %e1 : f32
    hpvm.tensor.yield %m : f32
  }
  hpvm.return %y : tensor<1x2x4x4xf32>
}
hpvm.leaf @z(%a: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %r = hpvm.tensor.relu %a : tensor<1x2x4x4xf32>
  hpvm.return %r : tensor<1x2x4x4xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.create_node @conv : !hpvm.node
  // expected-remark @+1 {{not fused with @s and @y (an elementwise op, then one of its input and result): its result also feeds @z (input 0)}}
  %a = hpvm.create_node @bias : !hpvm.node
  %s = hpvm.create_node @s : !hpvm.node
  %y = hpvm.create_node @y : !hpvm.node
  %z = hpvm.create_node @z : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.bind_in %b -> %a[1] : tensor<1x2x1x1xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one
  hpvm.edge %a[0] -> %s[0] one_to_one
  hpvm.edge %a[0] -> %y[0] one_to_one
  hpvm.edge %s[0] -> %y[1] one_to_one
  hpvm.edge %a[0] -> %z[0] one_to_one
  hpvm.bind_out %y[0] -> 0
}

// -----

// The product has another input: refused.
// CHECK-LABEL: hpvm.internal @root(
// CHECK: hpvm.create_node @conv_bias
// CHECK: hpvm.create_node @s
// CHECK: hpvm.create_node @y
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.leaf @s(%a: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %s = hpvm.tensor.sigmoid %a : tensor<1x2x4x4xf32>
  hpvm.return %s : tensor<1x2x4x4xf32>
}
hpvm.leaf @y(%i0: tensor<1x2x4x4xf32>, %i1: tensor<1x2x4x4xf32>, %i2: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %y = hpvm.tensor.map %i0, %i1, %i2 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  ^bb0(%e0: f32, %e1: f32, %e2: f32):
    %m = arith.mulf %e0, %e1 : f32
    %m2 = arith.mulf %m, %e2 : f32
    hpvm.tensor.yield %m2 : f32
  }
  hpvm.return %y : tensor<1x2x4x4xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>, %t: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.create_node @conv : !hpvm.node
  // expected-remark @+1 {{not fused with @s and @y (an elementwise op, then one of its input and result): @y has another input}}
  %a = hpvm.create_node @bias : !hpvm.node
  %s = hpvm.create_node @s : !hpvm.node
  %y = hpvm.create_node @y : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.bind_in %b -> %a[1] : tensor<1x2x1x1xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one
  hpvm.edge %a[0] -> %s[0] one_to_one
  hpvm.edge %a[0] -> %y[0] one_to_one
  hpvm.edge %s[0] -> %y[1] one_to_one
  hpvm.bind_in %t -> %y[2] : tensor<1x2x4x4xf32>
    hpvm.bind_out %y[0] -> 0
}

// -----

// The sigmoid's result is also an output of the graph: refused.
// CHECK-LABEL: hpvm.internal @root(
// CHECK: hpvm.create_node @conv_bias
// CHECK: hpvm.create_node @s
// CHECK: hpvm.create_node @y
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.leaf @s(%a: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %s = hpvm.tensor.sigmoid %a : tensor<1x2x4x4xf32>
  hpvm.return %s : tensor<1x2x4x4xf32>
}
hpvm.leaf @y(%i0: tensor<1x2x4x4xf32>, %i1: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) {
  %y = hpvm.tensor.map %i0, %i1 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  ^bb0(%e0: f32, %e1: f32):
    %m = arith.mulf %e0, %e1 : f32
    hpvm.tensor.yield %m : f32
  }
  hpvm.return %y : tensor<1x2x4x4xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %c = hpvm.create_node @conv : !hpvm.node
  // expected-remark @+1 {{not fused with @s and @y (an elementwise op, then one of its input and result): the result of @s is also an output of @root (bind_out)}}
  %a = hpvm.create_node @bias : !hpvm.node
  %s = hpvm.create_node @s : !hpvm.node
  %y = hpvm.create_node @y : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.bind_in %b -> %a[1] : tensor<1x2x1x1xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one
  hpvm.edge %a[0] -> %s[0] one_to_one
  hpvm.edge %a[0] -> %y[0] one_to_one
  hpvm.edge %s[0] -> %y[1] one_to_one
  hpvm.bind_out %y[0] -> 0
  hpvm.bind_out %s[0] -> 1
}

// -----

// Nodes hinted for a device: the GPU backends take chains, not diamonds.
// CHECK-LABEL: hpvm.internal @root(
// CHECK: hpvm.create_node @conv_bias
// CHECK: hpvm.create_node @s
// CHECK: hpvm.create_node @y
hpvm.leaf @conv(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>) attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]} {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}
hpvm.leaf @bias(%c: tensor<1x2x4x4xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]} {
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %a : tensor<1x2x4x4xf32>
}
hpvm.leaf @s(%a: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]} {
  %s = hpvm.tensor.sigmoid %a : tensor<1x2x4x4xf32>
  hpvm.return %s : tensor<1x2x4x4xf32>
}
hpvm.leaf @y(%i0: tensor<1x2x4x4xf32>, %i1: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>) attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]} {
  %y = hpvm.tensor.map %i0, %i1 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  ^bb0(%e0: f32, %e1: f32):
    %m = arith.mulf %e0, %e1 : f32
    hpvm.tensor.yield %m : f32
  }
  hpvm.return %y : tensor<1x2x4x4xf32>
}
hpvm.internal @root(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  %c = hpvm.create_node @conv : !hpvm.node
  // expected-remark @+1 {{not fused with @s and @y (an elementwise op, then one of its input and result): the nodes are hinted for a device (a diamond is fused for the CPU only)}}
  %a = hpvm.create_node @bias : !hpvm.node
  %s = hpvm.create_node @s : !hpvm.node
  %y = hpvm.create_node @y : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %w -> %c[1] : tensor<2x1x3x3xf32>
  hpvm.bind_in %b -> %a[1] : tensor<1x2x1x1xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one
  hpvm.edge %a[0] -> %s[0] one_to_one
  hpvm.edge %a[0] -> %y[0] one_to_one
  hpvm.edge %s[0] -> %y[1] one_to_one
    hpvm.bind_out %y[0] -> 0
}
