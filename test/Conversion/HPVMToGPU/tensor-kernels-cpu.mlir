// Tensor leaves hinted for a device that cannot become kernels of one thread
// per output element say why and keep their CPU version (no hpvm.kernel).
// RUN: hpvm-opt %s --convert-hpvm-to-gpu --split-input-file -verify-diagnostics | FileCheck %s
// CHECK-NOT: hpvm.kernel

// A convolution of a convolution: every tap would compute the inner one again.
// expected-warning @+1 {{runs on the CPU: no GPU kernel, because its 'hpvm.tensor.conv2d' reads the result of a reduction (a kernel would compute it again for every use)}}
hpvm.leaf @twice(%x: tensor<1x1x8x8xf32>, %w: tensor<1x1x3x3xf32>) -> (tensor<1x1x4x4xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %a = hpvm.tensor.conv2d %x, %w : (tensor<1x1x8x8xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x6x6xf32>
  %b = hpvm.tensor.conv2d %a, %w : (tensor<1x1x6x6xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32>
  hpvm.return %b : tensor<1x1x4x4xf32>
}

// -----

// A softmax of a product reads the whole row of it for each element.
// expected-warning @+1 {{because its 'hpvm.tensor.softmax' reads the result of a reduction}}
hpvm.leaf @head(%x: tensor<2x16xf32>, %m: tensor<16x10xf32>) -> (tensor<2x10xf32>) attributes {hpvm.targets = [#hpvm.target<spirv>]} {
  %y = hpvm.tensor.mul %x, %m : (tensor<2x16xf32>, tensor<16x10xf32>) -> tensor<2x10xf32>
  %s = hpvm.tensor.softmax %y : tensor<2x10xf32>
  hpvm.return %s : tensor<2x10xf32>
}

// -----

// Overlapping pool windows over a convolution: 3x3 windows of stride 1 hold
// an element 9 times.
// expected-warning @+1 {{because its 'hpvm.tensor.pool' reads the result of a reduction in up to 9 overlapping windows (a kernel would compute it again for every window; at most 4)}}
hpvm.leaf @wide(%x: tensor<1x1x8x8xf32>, %w: tensor<1x1x3x3xf32>) -> (tensor<1x1x4x4xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %a = hpvm.tensor.conv2d %x, %w : (tensor<1x1x8x8xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x6x6xf32>
  %p = hpvm.tensor.pool max %a {window = [3, 3], strides = [1, 1]} : tensor<1x1x6x6xf32> -> tensor<1x1x4x4xf32>
  hpvm.return %p : tensor<1x1x4x4xf32>
}

// -----

// A perforated convolution whose values feed a pool: a kernel interpolates
// the leaf's output only (its bias add and activation included).
// expected-warning @+1 {{because its 'hpvm.tensor.conv2d' has a perforation knob and its result is not the leaf's one output after a bias add and an activation (a kernel interpolates the leaf's output)}}
hpvm.leaf @knob(%x: tensor<1x1x8x8xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<1x2x3x3xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %c = hpvm.tensor.conv2d %x, %w {hpvm.knob = #hpvm.knob<perforate_rows, rate = 2, offset = 1>} : (tensor<1x1x8x8xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x6x6xf32>
  %p = hpvm.tensor.pool max %c {window = [2, 2], strides = [2, 2]} : tensor<1x2x6x6xf32> -> tensor<1x2x3x3xf32>
  hpvm.return %p : tensor<1x2x3x3xf32>
}

// -----

// Two perforated convolutions in one leaf.
// expected-warning @+1 {{because it has two perforated convolutions (a kernel interpolates its one output)}}
hpvm.leaf @knobs(%x: tensor<1x1x8x8xf32>, %w: tensor<1x1x3x3xf32>) -> (tensor<1x1x6x6xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %c = hpvm.tensor.conv2d %x, %w {hpvm.knob = #hpvm.knob<perforate_rows, rate = 2, offset = 1>} : (tensor<1x1x8x8xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x6x6xf32>
  %d = hpvm.tensor.conv2d %x, %w {hpvm.knob = #hpvm.knob<perforate_cols, rate = 2, offset = 0>} : (tensor<1x1x8x8xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x6x6xf32>
  %s = hpvm.tensor.add %c, %d : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  hpvm.return %s : tensor<1x1x6x6xf32>
}

// -----

// A tensor node runs as one instance.
// expected-warning @+1 {{because it is created with a grid (a tensor node runs as one instance)}}
hpvm.leaf @replicated(%x: tensor<4xf32>) -> (tensor<4xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %r = hpvm.tensor.relu %x : tensor<4xf32>
  hpvm.return %r : tensor<4xf32>
}
// The grid around it is no tile kernel either.
// expected-warning @+1 {{runs on the CPU: no GPU kernel, because an input of type that kernels do not take (input 0)}}
hpvm.internal @grid(%x: tensor<4xf32>, %n: index) -> () {
  %node = hpvm.create_node @replicated [%n] : !hpvm.node
  hpvm.bind_in %x -> %node[0] : tensor<4xf32>
}

// -----

// Ops other than tensor ops, reshapes and constants.
// expected-warning @+1 {{because it computes with 'tensor.extract_slice' (tensor ops only)}}
hpvm.leaf @slice(%x: tensor<8xf32>) -> (tensor<4xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %s = tensor.extract_slice %x[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %r = hpvm.tensor.relu %s : tensor<4xf32>
  hpvm.return %r : tensor<4xf32>
}

// -----

// A scalar input a tensor op reads (a reduction's start).
// expected-warning @+1 {{because its tensor ops read its scalar input 1}}
hpvm.leaf @start(%x: tensor<4x8xf32>, %init: f32) -> (tensor<4xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %s = hpvm.tensor.reduce %x, %init axis 1 : (tensor<4x8xf32>, f32) -> tensor<4xf32> {
  ^bb0(%acc: f32, %e: f32):
    %t = arith.addf %acc, %e : f32
    hpvm.tensor.yield %t : f32
  }
  hpvm.return %s : tensor<4xf32>
}

// -----

// A scalar output computed from an input.
// expected-warning @+1 {{because its scalar output 1 is computed (tensor kernels return constants and inputs)}}
hpvm.leaf @bytes(%x: tensor<4xf32>, %n: i64) -> (tensor<4xf32>, i64) attributes {hpvm.targets = [#hpvm.target<tensor>]} {
  %two = arith.constant 2 : i64
  %m = arith.muli %two, %two : i64
  %r = hpvm.tensor.relu %x : tensor<4xf32>
  hpvm.return %r, %m : tensor<4xf32>, i64
}

// -----

// Dynamically shaped tensors.
// expected-warning @+1 {{because its input 0 is a tensor<?xf32> (tensor kernels take statically shaped float tensors)}}
hpvm.leaf @dynamic(%x: tensor<?xf32>) -> (tensor<?xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %r = hpvm.tensor.relu %x : tensor<?xf32>
  hpvm.return %r : tensor<?xf32>
}

// -----

// Each add uses the last value twice: its element would be built 2^13 times.
// expected-warning @+1 {{because its element would take more than 4096 ops (values used more than once are computed again for each use)}}
hpvm.leaf @doubling(%v0: tensor<4xf32>) -> (tensor<4xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %v1 = hpvm.tensor.add %v0, %v0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %v2 = hpvm.tensor.add %v1, %v1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %v3 = hpvm.tensor.add %v2, %v2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %v4 = hpvm.tensor.add %v3, %v3 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %v5 = hpvm.tensor.add %v4, %v4 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %v6 = hpvm.tensor.add %v5, %v5 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %v7 = hpvm.tensor.add %v6, %v6 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %v8 = hpvm.tensor.add %v7, %v7 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %v9 = hpvm.tensor.add %v8, %v8 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %v10 = hpvm.tensor.add %v9, %v9 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %v11 = hpvm.tensor.add %v10, %v10 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %v12 = hpvm.tensor.add %v11, %v11 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %v13 = hpvm.tensor.add %v12, %v12 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  hpvm.return %v13 : tensor<4xf32>
}

// -----

// A body of several blocks.
// expected-warning @+1 {{because its body has more than one block}}
hpvm.leaf @blocks(%x: tensor<4xf32>) -> (tensor<4xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  cf.br ^next
^next:
  %r = hpvm.tensor.relu %x : tensor<4xf32>
  hpvm.return %r : tensor<4xf32>
}

// -----

// The same doubling under a convolution, 40 deep: each value is judged once
// (elementwise or not), and the element's size is counted, not built.
// expected-warning @+1 {{because its element would take more than 4096 ops}}
hpvm.leaf @deep(%v0: tensor<1x1x6x6xf32>, %w: tensor<1x1x3x3xf32>) -> (tensor<1x1x4x4xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %v1 = hpvm.tensor.add %v0, %v0 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v2 = hpvm.tensor.add %v1, %v1 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v3 = hpvm.tensor.add %v2, %v2 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v4 = hpvm.tensor.add %v3, %v3 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v5 = hpvm.tensor.add %v4, %v4 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v6 = hpvm.tensor.add %v5, %v5 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v7 = hpvm.tensor.add %v6, %v6 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v8 = hpvm.tensor.add %v7, %v7 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v9 = hpvm.tensor.add %v8, %v8 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v10 = hpvm.tensor.add %v9, %v9 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v11 = hpvm.tensor.add %v10, %v10 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v12 = hpvm.tensor.add %v11, %v11 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v13 = hpvm.tensor.add %v12, %v12 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v14 = hpvm.tensor.add %v13, %v13 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v15 = hpvm.tensor.add %v14, %v14 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v16 = hpvm.tensor.add %v15, %v15 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v17 = hpvm.tensor.add %v16, %v16 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v18 = hpvm.tensor.add %v17, %v17 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v19 = hpvm.tensor.add %v18, %v18 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v20 = hpvm.tensor.add %v19, %v19 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v21 = hpvm.tensor.add %v20, %v20 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v22 = hpvm.tensor.add %v21, %v21 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v23 = hpvm.tensor.add %v22, %v22 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v24 = hpvm.tensor.add %v23, %v23 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v25 = hpvm.tensor.add %v24, %v24 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v26 = hpvm.tensor.add %v25, %v25 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v27 = hpvm.tensor.add %v26, %v26 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v28 = hpvm.tensor.add %v27, %v27 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v29 = hpvm.tensor.add %v28, %v28 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v30 = hpvm.tensor.add %v29, %v29 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v31 = hpvm.tensor.add %v30, %v30 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v32 = hpvm.tensor.add %v31, %v31 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v33 = hpvm.tensor.add %v32, %v32 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v34 = hpvm.tensor.add %v33, %v33 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v35 = hpvm.tensor.add %v34, %v34 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v36 = hpvm.tensor.add %v35, %v35 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v37 = hpvm.tensor.add %v36, %v36 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v38 = hpvm.tensor.add %v37, %v37 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v39 = hpvm.tensor.add %v38, %v38 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %v40 = hpvm.tensor.add %v39, %v39 : (tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  %c = hpvm.tensor.conv2d %v40, %w : (tensor<1x1x6x6xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32>
  hpvm.return %c : tensor<1x1x4x4xf32>
}
