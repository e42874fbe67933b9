// RUN: hpvm-opt --hpvm-block-tensor-layout --split-input-file %s | FileCheck %s
// RUN: hpvm-opt --hpvm-block-tensor-layout="tensor-leaves=false" --split-input-file %s | FileCheck %s --check-prefix=DEVICE

// A small CNN as the ONNX importer writes it: a stem of 3 channels (read
// NCHW, written in blocks), a bias add and ReLU in blocks (the bias rewritten
// in place), a 3x3 convolution and a residual add in blocks, a pool in
// blocks, then a global pool whose small result is converted before the
// flatten and the product, which need NCHW.

// CHECK-LABEL: hpvm.leaf @stem(
// CHECK-SAME: %{{.*}}: tensor<1x3x16x16xf32>) -> tensor<1x2x16x16x16xf32>
// CHECK: hpvm.tensor.conv2d %{{.*}}, %{{.*}} {padding = [1, 1], result_block = 16 : i64}
// CHECK-SAME: -> tensor<1x2x16x16x16xf32>
hpvm.leaf @stem(%a0: tensor<1x3x16x16xf32>) -> (tensor<1x32x16x16xf32>) {
  %w = arith.constant dense<0.5> : tensor<32x3x3x3xf32>
  %v = hpvm.tensor.conv2d %a0, %w {padding = [1, 1], strides = [1, 1]} : (tensor<1x3x16x16xf32>, tensor<32x3x3x3xf32>) -> tensor<1x32x16x16xf32>
  hpvm.return %v : tensor<1x32x16x16xf32>
}
// CHECK-LABEL: hpvm.leaf @bias(
// CHECK-SAME: tensor<1x2x16x16x16xf32>) -> tensor<1x2x16x16x16xf32>
// CHECK: %[[B:.*]] = arith.constant dense<{{\[\[\[\[\[}}0.000000e+00, 1.000000e+00{{.*}}1.500000e+01]]], {{\[\[\[}}1.600000e+01{{.*}}> : tensor<1x2x1x1x16xf32>
// CHECK-NOT: tensor<1x32x1x1xf32>
// CHECK: hpvm.tensor.add %{{.*}}, %[[B]] : (tensor<1x2x16x16x16xf32>, tensor<1x2x1x1x16xf32>) -> tensor<1x2x16x16x16xf32>
hpvm.leaf @bias(%a0: tensor<1x32x16x16xf32>) -> (tensor<1x32x16x16xf32>) {
  %b = arith.constant dense<[[[[0.0]], [[1.0]], [[2.0]], [[3.0]], [[4.0]], [[5.0]], [[6.0]], [[7.0]], [[8.0]], [[9.0]], [[10.0]], [[11.0]], [[12.0]], [[13.0]], [[14.0]], [[15.0]], [[16.0]], [[17.0]], [[18.0]], [[19.0]], [[20.0]], [[21.0]], [[22.0]], [[23.0]], [[24.0]], [[25.0]], [[26.0]], [[27.0]], [[28.0]], [[29.0]], [[30.0]], [[31.0]]]]> : tensor<1x32x1x1xf32>
  %v = hpvm.tensor.add %a0, %b : (tensor<1x32x16x16xf32>, tensor<1x32x1x1xf32>) -> tensor<1x32x16x16xf32>
  hpvm.return %v : tensor<1x32x16x16xf32>
}
// CHECK-LABEL: hpvm.leaf @relu(
// CHECK: hpvm.tensor.relu %{{.*}} : tensor<1x2x16x16x16xf32>
hpvm.leaf @relu(%a0: tensor<1x32x16x16xf32>) -> (tensor<1x32x16x16xf32>) {
  %v = hpvm.tensor.relu %a0 : tensor<1x32x16x16xf32>
  hpvm.return %v : tensor<1x32x16x16xf32>
}
// The input arrives in blocks: read as it is.
// CHECK-LABEL: hpvm.leaf @conv3(
// CHECK: hpvm.tensor.conv2d %{{.*}}, %{{.*}} {padding = [1, 1], result_block = 16 : i64} : (tensor<1x2x16x16x16xf32>, tensor<32x32x3x3xf32>) -> tensor<1x2x16x16x16xf32>
hpvm.leaf @conv3(%a0: tensor<1x32x16x16xf32>) -> (tensor<1x32x16x16xf32>) {
  %w = arith.constant dense<0.25> : tensor<32x32x3x3xf32>
  %v = hpvm.tensor.conv2d %a0, %w {padding = [1, 1], strides = [1, 1]} : (tensor<1x32x16x16xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x16x16xf32>
  hpvm.return %v : tensor<1x32x16x16xf32>
}
// CHECK-LABEL: hpvm.leaf @residual(
// CHECK: hpvm.tensor.add %{{.*}}, %{{.*}} : (tensor<1x2x16x16x16xf32>, tensor<1x2x16x16x16xf32>) -> tensor<1x2x16x16x16xf32>
hpvm.leaf @residual(%a0: tensor<1x32x16x16xf32>, %a1: tensor<1x32x16x16xf32>) -> (tensor<1x32x16x16xf32>) {
  %v = hpvm.tensor.add %a0, %a1 : (tensor<1x32x16x16xf32>, tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  hpvm.return %v : tensor<1x32x16x16xf32>
}
// CHECK-LABEL: hpvm.leaf @maxpool(
// CHECK: hpvm.tensor.pool max %{{.*}} {{.*}} : tensor<1x2x16x16x16xf32> -> tensor<1x2x8x8x16xf32>
hpvm.leaf @maxpool(%a0: tensor<1x32x16x16xf32>) -> (tensor<1x32x8x8xf32>) {
  %v = hpvm.tensor.pool max %a0 {window = [2, 2], strides = [2, 2], padding = [0, 0]} : tensor<1x32x16x16xf32> -> tensor<1x32x8x8xf32>
  hpvm.return %v : tensor<1x32x8x8xf32>
}
// The global pool in blocks, its result converted (not wanted in blocks).
// CHECK-LABEL: hpvm.leaf @mean_pool(
// CHECK-SAME: tensor<1x2x8x8x16xf32>) -> tensor<1x32x1x1xf32>
// CHECK: %[[P:.*]] = hpvm.tensor.pool mean %{{.*}} {{.*}} : tensor<1x2x8x8x16xf32> -> tensor<1x2x1x1x16xf32>
// CHECK: %[[N:.*]] = hpvm.tensor.from_blocked %[[P]] : tensor<1x2x1x1x16xf32> -> tensor<1x32x1x1xf32>
// CHECK: hpvm.return %[[N]]
hpvm.leaf @mean_pool(%a0: tensor<1x32x8x8xf32>) -> (tensor<1x32x1x1xf32>) {
  %v = hpvm.tensor.pool mean %a0 {window = [8, 8], strides = [1, 1], padding = [0, 0]} : tensor<1x32x8x8xf32> -> tensor<1x32x1x1xf32>
  hpvm.return %v : tensor<1x32x1x1xf32>
}
// CHECK-LABEL: hpvm.leaf @flatten(
// CHECK-SAME: tensor<1x32x1x1xf32>) -> tensor<1x32xf32>
hpvm.leaf @flatten(%a0: tensor<1x32x1x1xf32>) -> (tensor<1x32xf32>) {
  %v = tensor.collapse_shape %a0 [[0], [1, 2, 3]] : tensor<1x32x1x1xf32> into tensor<1x32xf32>
  hpvm.return %v : tensor<1x32xf32>
}
hpvm.internal @root(%in: tensor<1x3x16x16xf32>) -> (tensor<1x32xf32>) {
  %stem = hpvm.create_node @stem : !hpvm.node
  %bias = hpvm.create_node @bias : !hpvm.node
  %relu = hpvm.create_node @relu : !hpvm.node
  %conv3 = hpvm.create_node @conv3 : !hpvm.node
  %residual = hpvm.create_node @residual : !hpvm.node
  %maxpool = hpvm.create_node @maxpool : !hpvm.node
  %mean_pool = hpvm.create_node @mean_pool : !hpvm.node
  %flatten = hpvm.create_node @flatten : !hpvm.node
  hpvm.bind_in %in -> %stem[0] : tensor<1x3x16x16xf32>
  hpvm.edge %stem[0] -> %bias[0] one_to_one
  hpvm.edge %bias[0] -> %relu[0] one_to_one
  hpvm.edge %relu[0] -> %conv3[0] one_to_one
  hpvm.edge %conv3[0] -> %residual[0] one_to_one
  hpvm.edge %relu[0] -> %residual[1] one_to_one
  hpvm.edge %residual[0] -> %maxpool[0] one_to_one
  hpvm.edge %maxpool[0] -> %mean_pool[0] one_to_one
  hpvm.edge %mean_pool[0] -> %flatten[0] one_to_one
  hpvm.bind_out %flatten[0] -> 0
}

// -----

// A convolution whose result only an op that needs NCHW reads (a bound-out
// output) writes NCHW; one whose 24 filters blocks of 16 do not divide writes
// NCHW and its consumer reads NCHW.

// CHECK-LABEL: hpvm.leaf @out(
// CHECK-NOT: result_block
// CHECK: -> tensor<1x32x8x8xf32>
hpvm.leaf @out(%a0: tensor<1x16x8x8xf32>) -> (tensor<1x32x8x8xf32>) {
  %w = arith.constant dense<0.5> : tensor<32x16x1x1xf32>
  %v = hpvm.tensor.conv2d %a0, %w : (tensor<1x16x8x8xf32>, tensor<32x16x1x1xf32>) -> tensor<1x32x8x8xf32>
  hpvm.return %v : tensor<1x32x8x8xf32>
}
// CHECK-LABEL: hpvm.leaf @odd(
// CHECK-NOT: result_block
// CHECK: -> tensor<1x24x8x8xf32>
hpvm.leaf @odd(%a0: tensor<1x16x8x8xf32>) -> (tensor<1x24x8x8xf32>) {
  %w = arith.constant dense<0.5> : tensor<24x16x1x1xf32>
  %v = hpvm.tensor.conv2d %a0, %w : (tensor<1x16x8x8xf32>, tensor<24x16x1x1xf32>) -> tensor<1x24x8x8xf32>
  hpvm.return %v : tensor<1x24x8x8xf32>
}
// CHECK-LABEL: hpvm.leaf @after_odd(
// CHECK-SAME: tensor<1x24x8x8xf32>) -> tensor<1x32x8x8xf32>
hpvm.leaf @after_odd(%a0: tensor<1x24x8x8xf32>) -> (tensor<1x32x8x8xf32>) {
  %w = arith.constant dense<0.5> : tensor<32x24x1x1xf32>
  %v = hpvm.tensor.conv2d %a0, %w : (tensor<1x24x8x8xf32>, tensor<32x24x1x1xf32>) -> tensor<1x32x8x8xf32>
  hpvm.return %v : tensor<1x32x8x8xf32>
}
hpvm.internal @root2(%in: tensor<1x16x8x8xf32>) -> (tensor<1x32x8x8xf32>, tensor<1x32x8x8xf32>) {
  %out = hpvm.create_node @out : !hpvm.node
  %odd = hpvm.create_node @odd : !hpvm.node
  %after = hpvm.create_node @after_odd : !hpvm.node
  hpvm.bind_in %in -> %out[0] : tensor<1x16x8x8xf32>
  hpvm.bind_in %in -> %odd[0] : tensor<1x16x8x8xf32>
  hpvm.edge %odd[0] -> %after[0] one_to_one
  hpvm.bind_out %out[0] -> 0
  hpvm.bind_out %after[0] -> 1
}

// -----

// A value wanted in blocks by one consumer and read NCHW by another: the
// output leaves blocked and the NCHW reader converts it; a depthwise
// convolution reads and writes blocks; a convolution whose result meets an
// NCHW image in an add that is bound out reads blocks and writes NCHW, its
// filter a constant or not (the runtime packs one that is not on each call).

// CHECK-LABEL: hpvm.leaf @expand(
// CHECK: result_block = 16
hpvm.leaf @expand(%a0: tensor<1x16x8x8xf32>) -> (tensor<1x32x8x8xf32>) {
  %w = arith.constant dense<0.5> : tensor<32x16x1x1xf32>
  %v = hpvm.tensor.conv2d %a0, %w : (tensor<1x16x8x8xf32>, tensor<32x16x1x1xf32>) -> tensor<1x32x8x8xf32>
  hpvm.return %v : tensor<1x32x8x8xf32>
}
// CHECK-LABEL: hpvm.leaf @depthwise(
// CHECK: hpvm.tensor.conv2d {{.*}}groups = 32 : i64, {{.*}}result_block = 16 : i64{{.*}} : (tensor<1x2x8x8x16xf32>, tensor<32x1x3x3xf32>) -> tensor<1x2x8x8x16xf32>
hpvm.leaf @depthwise(%a0: tensor<1x32x8x8xf32>) -> (tensor<1x32x8x8xf32>) {
  %w = arith.constant dense<0.5> : tensor<32x1x3x3xf32>
  %v = hpvm.tensor.conv2d %a0, %w {padding = [1, 1], groups = 32} : (tensor<1x32x8x8xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x8x8xf32>
  hpvm.return %v : tensor<1x32x8x8xf32>
}
// CHECK-LABEL: hpvm.leaf @project(
// CHECK-NOT: result_block
// CHECK: hpvm.tensor.conv2d {{.*}} : (tensor<1x2x8x8x16xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x8x8xf32>
hpvm.leaf @project(%a0: tensor<1x32x8x8xf32>) -> (tensor<1x16x8x8xf32>) {
  %w = arith.constant dense<0.5> : tensor<16x32x1x1xf32>
  %v = hpvm.tensor.conv2d %a0, %w : (tensor<1x32x8x8xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x8x8xf32>
  hpvm.return %v : tensor<1x16x8x8xf32>
}
// CHECK-LABEL: hpvm.leaf @variable(
// CHECK-SAME: %[[X:.*]]: tensor<1x2x8x8x16xf32>, %[[W:.*]]: tensor<16x32x1x1xf32>) -> tensor<1x16x8x8xf32>
// CHECK-NOT: from_blocked
// CHECK: hpvm.tensor.conv2d %[[X]], %[[W]] : (tensor<1x2x8x8x16xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x8x8xf32>
hpvm.leaf @variable(%a0: tensor<1x32x8x8xf32>, %w: tensor<16x32x1x1xf32>) -> (tensor<1x16x8x8xf32>) {
  %v = hpvm.tensor.conv2d %a0, %w : (tensor<1x32x8x8xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x8x8xf32>
  hpvm.return %v : tensor<1x16x8x8xf32>
}
// CHECK-LABEL: hpvm.leaf @sum(
// CHECK-SAME: tensor<1x16x8x8xf32>, %{{.*}}: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
// CHECK-NEXT: hpvm.tensor.add {{.*}} : (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
hpvm.leaf @sum(%a0: tensor<1x16x8x8xf32>, %a1: tensor<1x16x8x8xf32>) -> (tensor<1x16x8x8xf32>) {
  %v = hpvm.tensor.add %a0, %a1 : (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  hpvm.return %v : tensor<1x16x8x8xf32>
}
hpvm.internal @root3(%in: tensor<1x16x8x8xf32>, %w: tensor<16x32x1x1xf32>) -> (tensor<1x16x8x8xf32>) {
  %expand = hpvm.create_node @expand : !hpvm.node
  %depthwise = hpvm.create_node @depthwise : !hpvm.node
  %project = hpvm.create_node @project : !hpvm.node
  %variable = hpvm.create_node @variable : !hpvm.node
  %sum = hpvm.create_node @sum : !hpvm.node
  hpvm.bind_in %in -> %expand[0] : tensor<1x16x8x8xf32>
  hpvm.bind_in %w -> %variable[1] : tensor<16x32x1x1xf32>
  hpvm.edge %expand[0] -> %depthwise[0] one_to_one
  hpvm.edge %depthwise[0] -> %project[0] one_to_one
  hpvm.edge %depthwise[0] -> %variable[0] one_to_one
  hpvm.edge %project[0] -> %sum[0] one_to_one
  hpvm.edge %variable[0] -> %sum[1] one_to_one
  hpvm.bind_out %sum[0] -> 0
}

// -----

// A tensor of rank 5 of the program's own is not an image in blocks: the
// unsqueeze reads its input from blocks, and its rank-5 result is its own.

// CHECK-LABEL: hpvm.leaf @conv(
// CHECK: result_block = 16
hpvm.leaf @conv(%a0: tensor<1x16x4x4xf32>) -> (tensor<1x32x4x4xf32>) {
  %w = arith.constant dense<0.5> : tensor<32x16x1x1xf32>
  %v = hpvm.tensor.conv2d %a0, %w : (tensor<1x16x4x4xf32>, tensor<32x16x1x1xf32>) -> tensor<1x32x4x4xf32>
  hpvm.return %v : tensor<1x32x4x4xf32>
}
// CHECK-LABEL: hpvm.leaf @act(
// CHECK-SAME: tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
hpvm.leaf @act(%a0: tensor<1x32x4x4xf32>) -> (tensor<1x32x4x4xf32>) {
  %v = hpvm.tensor.relu %a0 : tensor<1x32x4x4xf32>
  hpvm.return %v : tensor<1x32x4x4xf32>
}
// CHECK-LABEL: hpvm.leaf @conv2(
// CHECK-SAME: tensor<1x2x4x4x16xf32>) -> tensor<1x16x4x4xf32>
hpvm.leaf @conv2(%a0: tensor<1x32x4x4xf32>) -> (tensor<1x16x4x4xf32>) {
  %w = arith.constant dense<0.5> : tensor<16x32x1x1xf32>
  %v = hpvm.tensor.conv2d %a0, %w : (tensor<1x32x4x4xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x4x4xf32>
  hpvm.return %v : tensor<1x16x4x4xf32>
}
// CHECK-LABEL: hpvm.leaf @unsqueeze(
// CHECK-SAME: tensor<1x2x4x4x16xf32>) -> tensor<1x32x4x4x1xf32>
// CHECK: %[[N:.*]] = hpvm.tensor.from_blocked
// CHECK: %[[E:.*]] = tensor.expand_shape %[[N]]
// CHECK-NEXT: hpvm.return %[[E]] : tensor<1x32x4x4x1xf32>
hpvm.leaf @unsqueeze(%a0: tensor<1x32x4x4xf32>) -> (tensor<1x32x4x4x1xf32>) {
  %v = tensor.expand_shape %a0 [[0], [1], [2], [3, 4]] output_shape [1, 32, 4, 4, 1] : tensor<1x32x4x4xf32> into tensor<1x32x4x4x1xf32>
  hpvm.return %v : tensor<1x32x4x4x1xf32>
}
hpvm.internal @root4(%in: tensor<1x16x4x4xf32>) -> (tensor<1x32x4x4x1xf32>, tensor<1x16x4x4xf32>) {
  %conv = hpvm.create_node @conv : !hpvm.node
  %act = hpvm.create_node @act : !hpvm.node
  %conv2 = hpvm.create_node @conv2 : !hpvm.node
  %unsqueeze = hpvm.create_node @unsqueeze : !hpvm.node
  hpvm.bind_in %in -> %conv[0] : tensor<1x16x4x4xf32>
  hpvm.edge %conv[0] -> %act[0] one_to_one
  hpvm.edge %act[0] -> %conv2[0] one_to_one
  hpvm.edge %act[0] -> %unsqueeze[0] one_to_one
  hpvm.bind_out %unsqueeze[0] -> 0
  hpvm.bind_out %conv2[0] -> 1
}

// -----

// The shape of the release's HPVM-C programs: leaves of the tensor target,
// one op each, the filters, biases and statistics passed in by the host. The
// convolutions write blocks (their filters packed on each call), the bias
// is converted to blocks, the batch normalization computes in blocks with
// its statistics as they are, and the pool's result leaves in NCHW. Where a
// device takes the tensor leaves (tensor-leaves=false) nothing changes.

// CHECK-LABEL: hpvm.leaf @tconv(
// CHECK-SAME: %{{.*}}: tensor<2x16x8x8xf32>, %[[W:.*]]: tensor<32x16x3x3xf32>) -> tensor<2x2x8x8x16xf32>
// CHECK: hpvm.tensor.conv2d %{{.*}}, %[[W]] {padding = [1, 1], result_block = 16 : i64}
// DEVICE-LABEL: hpvm.leaf @tconv(
// DEVICE-NOT: result_block
// DEVICE: hpvm.return
hpvm.leaf @tconv(%x: tensor<2x16x8x8xf32>, %w: tensor<32x16x3x3xf32>) -> (tensor<2x32x8x8xf32>) attributes {hpvm.targets = [#hpvm.target<tensor>]} {
  %v = hpvm.tensor.conv2d %x, %w {padding = [1, 1], strides = [1, 1]} : (tensor<2x16x8x8xf32>, tensor<32x16x3x3xf32>) -> tensor<2x32x8x8xf32>
  hpvm.return %v : tensor<2x32x8x8xf32>
}
// CHECK-LABEL: hpvm.leaf @tbias(
// CHECK-SAME: %[[X:.*]]: tensor<2x2x8x8x16xf32>, %[[B:.*]]: tensor<1x32x1x1xf32>) -> tensor<2x2x8x8x16xf32>
// CHECK: %[[BB:.*]] = hpvm.tensor.to_blocked %[[B]] {block = 16 : i64} : tensor<1x32x1x1xf32> -> tensor<1x2x1x1x16xf32>
// CHECK: hpvm.tensor.add %[[X]], %[[BB]] : (tensor<2x2x8x8x16xf32>, tensor<1x2x1x1x16xf32>) -> tensor<2x2x8x8x16xf32>
hpvm.leaf @tbias(%x: tensor<2x32x8x8xf32>, %b: tensor<1x32x1x1xf32>) -> (tensor<2x32x8x8xf32>) attributes {hpvm.targets = [#hpvm.target<tensor>]} {
  %v = hpvm.tensor.add %x, %b : (tensor<2x32x8x8xf32>, tensor<1x32x1x1xf32>) -> tensor<2x32x8x8xf32>
  hpvm.return %v : tensor<2x32x8x8xf32>
}
// CHECK-LABEL: hpvm.leaf @tnorm(
// CHECK-SAME: %[[X:.*]]: tensor<2x2x8x8x16xf32>, %[[G:.*]]: tensor<32xf32>, %{{.*}}: tensor<1x32x1x1xf32>) -> tensor<2x2x8x8x16xf32>
// CHECK: hpvm.tensor.batchnorm %[[X]], %[[G]], %{{.*}} : (tensor<2x2x8x8x16xf32>, tensor<32xf32>, tensor<1x32x1x1xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x2x8x8x16xf32>
hpvm.leaf @tnorm(%x: tensor<2x32x8x8xf32>, %g: tensor<32xf32>, %b: tensor<1x32x1x1xf32>) -> (tensor<2x32x8x8xf32>) attributes {hpvm.targets = [#hpvm.target<tensor>]} {
  %v = hpvm.tensor.batchnorm %x, %g, %b, %g, %g {epsilon = 1.0e-3} : (tensor<2x32x8x8xf32>, tensor<32xf32>, tensor<1x32x1x1xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x32x8x8xf32>
  hpvm.return %v : tensor<2x32x8x8xf32>
}
// CHECK-LABEL: hpvm.leaf @trelu(
// CHECK: hpvm.tensor.relu %{{.*}} : tensor<2x2x8x8x16xf32>
hpvm.leaf @trelu(%x: tensor<2x32x8x8xf32>) -> (tensor<2x32x8x8xf32>) attributes {hpvm.targets = [#hpvm.target<tensor>]} {
  %v = hpvm.tensor.relu %x : tensor<2x32x8x8xf32>
  hpvm.return %v : tensor<2x32x8x8xf32>
}
// A depthwise convolution of a filter the host passes in.
// CHECK-LABEL: hpvm.leaf @tdepthwise(
// CHECK: hpvm.tensor.conv2d {{.*}}groups = 32 : i64, {{.*}}result_block = 16 : i64{{.*}} : (tensor<2x2x8x8x16xf32>, tensor<32x1x3x3xf32>) -> tensor<2x2x8x8x16xf32>
hpvm.leaf @tdepthwise(%x: tensor<2x32x8x8xf32>, %w: tensor<32x1x3x3xf32>) -> (tensor<2x32x8x8xf32>) attributes {hpvm.targets = [#hpvm.target<tensor>]} {
  %v = hpvm.tensor.conv2d %x, %w {padding = [1, 1], groups = 32} : (tensor<2x32x8x8xf32>, tensor<32x1x3x3xf32>) -> tensor<2x32x8x8xf32>
  hpvm.return %v : tensor<2x32x8x8xf32>
}
// CHECK-LABEL: hpvm.leaf @tpool(
// CHECK-SAME: tensor<2x2x8x8x16xf32>) -> tensor<2x32x4x4xf32>
// CHECK: %[[P:.*]] = hpvm.tensor.pool max {{.*}} : tensor<2x2x8x8x16xf32> -> tensor<2x2x4x4x16xf32>
// CHECK: hpvm.tensor.from_blocked %[[P]]
hpvm.leaf @tpool(%x: tensor<2x32x8x8xf32>) -> (tensor<2x32x4x4xf32>) attributes {hpvm.targets = [#hpvm.target<tensor>]} {
  %v = hpvm.tensor.pool max %x {window = [2, 2], strides = [2, 2], padding = [0, 0]} : tensor<2x32x8x8xf32> -> tensor<2x32x4x4xf32>
  hpvm.return %v : tensor<2x32x4x4xf32>
}
hpvm.internal @troot(%in: tensor<2x16x8x8xf32>, %w: tensor<32x16x3x3xf32>, %b: tensor<1x32x1x1xf32>, %g: tensor<32xf32>, %d: tensor<32x1x3x3xf32>) -> (tensor<2x32x4x4xf32>) {
  %conv = hpvm.create_node @tconv : !hpvm.node
  %bias = hpvm.create_node @tbias : !hpvm.node
  %norm = hpvm.create_node @tnorm : !hpvm.node
  %relu = hpvm.create_node @trelu : !hpvm.node
  %dw = hpvm.create_node @tdepthwise : !hpvm.node
  %pool = hpvm.create_node @tpool : !hpvm.node
  hpvm.bind_in %in -> %conv[0] : tensor<2x16x8x8xf32>
  hpvm.bind_in %w -> %conv[1] : tensor<32x16x3x3xf32>
  hpvm.bind_in %b -> %bias[1] : tensor<1x32x1x1xf32>
  hpvm.bind_in %g -> %norm[1] : tensor<32xf32>
  hpvm.bind_in %b -> %norm[2] : tensor<1x32x1x1xf32>
  hpvm.bind_in %d -> %dw[1] : tensor<32x1x3x3xf32>
  hpvm.edge %conv[0] -> %bias[0] one_to_one
  hpvm.edge %bias[0] -> %norm[0] one_to_one
  hpvm.edge %norm[0] -> %relu[0] one_to_one
  hpvm.edge %relu[0] -> %dw[0] one_to_one
  hpvm.edge %dw[0] -> %pool[0] one_to_one
  hpvm.bind_out %pool[0] -> 0
}

// -----

// One block of filters over a window larger than 1 x 1 stays NCHW (the NCHW
// kernel runs it along the planes' rows, faster); over 1 x 1 it writes
// blocks, which the next convolution reads.

// CHECK-LABEL: hpvm.leaf @narrow3(
// CHECK-SAME: -> tensor<2x16x8x8xf32>
// CHECK-NOT: result_block
// CHECK: hpvm.return
hpvm.leaf @narrow3(%x: tensor<2x16x8x8xf32>) -> (tensor<2x16x8x8xf32>) {
  %w = arith.constant dense<0.5> : tensor<16x16x3x3xf32>
  %v = hpvm.tensor.conv2d %x, %w {padding = [1, 1], strides = [1, 1]} : (tensor<2x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<2x16x8x8xf32>
  hpvm.return %v : tensor<2x16x8x8xf32>
}
// CHECK-LABEL: hpvm.leaf @narrow1(
// CHECK-SAME: %{{.*}}: tensor<2x16x8x8xf32>) -> tensor<2x1x8x8x16xf32>
// CHECK: result_block = 16
hpvm.leaf @narrow1(%x: tensor<2x16x8x8xf32>) -> (tensor<2x16x8x8xf32>) {
  %w = arith.constant dense<0.5> : tensor<16x16x1x1xf32>
  %v = hpvm.tensor.conv2d %x, %w : (tensor<2x16x8x8xf32>, tensor<16x16x1x1xf32>) -> tensor<2x16x8x8xf32>
  hpvm.return %v : tensor<2x16x8x8xf32>
}
// CHECK-LABEL: hpvm.leaf @widen(
// CHECK: hpvm.tensor.conv2d {{.*}} : (tensor<2x1x8x8x16xf32>, tensor<32x16x3x3xf32>) -> tensor<2x32x8x8xf32>
hpvm.leaf @widen(%x: tensor<2x16x8x8xf32>) -> (tensor<2x32x8x8xf32>) {
  %w = arith.constant dense<0.5> : tensor<32x16x3x3xf32>
  %v = hpvm.tensor.conv2d %x, %w {padding = [1, 1], strides = [1, 1]} : (tensor<2x16x8x8xf32>, tensor<32x16x3x3xf32>) -> tensor<2x32x8x8xf32>
  hpvm.return %v : tensor<2x32x8x8xf32>
}
hpvm.internal @nroot(%in: tensor<2x16x8x8xf32>) -> (tensor<2x32x8x8xf32>) {
  %a = hpvm.create_node @narrow3 : !hpvm.node
  %b = hpvm.create_node @narrow1 : !hpvm.node
  %c = hpvm.create_node @widen : !hpvm.node
  hpvm.bind_in %in -> %a[0] : tensor<2x16x8x8xf32>
  hpvm.edge %a[0] -> %b[0] one_to_one
  hpvm.edge %b[0] -> %c[0] one_to_one
  hpvm.bind_out %c[0] -> 0
}
