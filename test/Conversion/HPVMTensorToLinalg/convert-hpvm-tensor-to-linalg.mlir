// convert-hpvm-tensor-to-linalg: every tensor op becomes linalg on tensors
// (first RUN); by default node interfaces then become memrefs and leaves and
// host code are bufferized (second RUN).
// The linalg forms of conv2d and mul are checked with kernels=false; the third
// RUN checks the default: f32 convolutions and products call the runtime's kernels.
// RUN: hpvm-opt %s --convert-hpvm-tensor-to-linalg="bufferize-graphs=false kernels=false" | FileCheck %s
// RUN: hpvm-opt %s --convert-hpvm-tensor-to-linalg=kernels=false | FileCheck %s --check-prefix=BUF
// RUN: hpvm-opt %s --convert-hpvm-tensor-to-linalg --cse | FileCheck %s --check-prefix=KERN

// The kernels are declared once, at the start of the module, as RuntimeABI.h says.
// KERN-DAG: llvm.func @hpvm_rt_tensor_conv2d_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, f64)
// KERN-DAG: llvm.func @hpvm_rt_tensor_matmul_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, f64)
// KERN-LABEL: hpvm.leaf @conv(
// KERN-SAME: %[[X:.*]]: memref<1x2x8x8xf32> {hpvm.access = #hpvm.access<in>}, %[[W:.*]]: memref<3x2x3x3xf32>
// KERN: memref.extract_aligned_pointer_as_index %[[X]]
// KERN: memref.extract_aligned_pointer_as_index %[[W]]
// KERN: %[[NOBIAS:.*]] = llvm.mlir.zero : !llvm.ptr
// KERN: %[[OUT:.*]] = memref.alloc() : memref<1x3x4x6xf32>
// KERN: memref.extract_aligned_pointer_as_index %[[OUT]]
// input, filter, bias, output; n, c, h, w, f, kh, kw, oh, ow, padding, strides,
// groups; activation (0: identity) and its bound:
// KERN: call @hpvm_rt_tensor_conv2d_f32(%{{.*}}, %{{.*}}, %[[NOBIAS]], %{{.*}}, %c1_i64, %c2_i64, %c8_i64, %c8_i64, %c3_i64, %c3_i64, %c3_i64, %c4_i64, %c6_i64, %c1_i64, %c0_i64, %c2_i64, %c1_i64, %c1_i64, %c0_i64, %{{.*}})
// KERN: hpvm.return %[[OUT]]
// KERN-LABEL: hpvm.leaf @grouped(
// KERN: call @hpvm_rt_tensor_conv2d_f32({{.*}}, %c2_i64, %c0_i64, %{{.*}})
// The bias add and the clipped relu after the product are the kernel's
// epilogue: the bias buffer goes to the call, activation 2 with its bound 6.
// KERN-LABEL: hpvm.leaf @dense(
// KERN-SAME: %[[B:arg2]]: memref<1x4xf32>
// KERN-NOT: linalg.generic
// KERN: %[[BP:.*]] = memref.extract_aligned_pointer_as_index %[[B]]
// KERN: %[[SIX:.*]] = arith.constant 6.000000e+00 : f64
// KERN: %[[Y:.*]] = memref.alloc() : memref<2x4xf32>
// KERN: call @hpvm_rt_tensor_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c1_i64, %c2_i64, %c4_i64, %c3_i64, %c2_i64, %[[SIX]])
// KERN-NOT: linalg.generic
// KERN: hpvm.return %[[Y]]
// KERN-LABEL: hpvm.leaf @batched(
// KERN: call @hpvm_rt_tensor_matmul_f32({{.*}}, %c5_i64, %c2_i64, %c4_i64, %c3_i64, %c0_i64, %{{.*}})
// Pools: input, output; kind (0 max, 2 mean), n, c, h, w, window, strides,
// padding, oh, ow.
// KERN-LABEL: hpvm.leaf @pools(
// KERN: call @hpvm_rt_tensor_pool_f32(%{{.*}}, %{{.*}}, %c0_i64, %c1_i64, %c2_i64, %c6_i64, %c6_i64, %c2_i64, %c2_i64, %c2_i64, %c2_i64, %c0_i64, %c0_i64, %c3_i64, %c3_i64)
// KERN: call @hpvm_rt_tensor_pool_f32
// KERN: call @hpvm_rt_tensor_pool_f32(%{{.*}}, %{{.*}}, %c2_i64,
// KERN-NOT: linalg.generic
// KERN: hpvm.return
// A ceil_mode pool: the begin padding (0) and the output's size, 4 x 4.
// KERN-LABEL: hpvm.leaf @ceil_pool(
// KERN: call @hpvm_rt_tensor_pool_f32(%{{.*}}, %{{.*}}, %c0_i64, %c1_i64, %c2_i64, %c8_i64, %c8_i64, %c3_i64, %c3_i64, %c2_i64, %c2_i64, %c0_i64, %c0_i64, %c4_i64, %c4_i64)
// A result used twice, or added to a tensor that is not one value per filter,
// keeps its add and activation as generics.
// KERN-LABEL: hpvm.leaf @not_fused(
// KERN: %[[NONE:.*]] = llvm.mlir.zero : !llvm.ptr
// KERN: call @hpvm_rt_tensor_conv2d_f32(%{{.*}}, %{{.*}}, %[[NONE]], {{.*}}, %c0_i64, %{{.*}})
// KERN: linalg.generic
// KERN: arith.addf
// KERN: linalg.generic
// KERN: arith.maximumf
// Other element types keep the linalg lowering.
// KERN-LABEL: hpvm.leaf @double_product(
// KERN-NOT: call @hpvm_rt
// KERN: linalg.matmul

// The maps of the grouped and depthwise convolutions (@grouped, @depthwise).
// CHECK-DAG: #[[$GIN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d1 floordiv 2) * 2 + d4, d2 * 2 + d5, d3 + d6)>
// CHECK-DAG: #[[$GW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
// CHECK-DAG: #[[$DIN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d3 + d6)>
// The reductions of @softmax_rows: the axis is loop 2, the rows before it loop 3.
// CHECK-DAG: #[[$ROWS_IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
// CHECK-DAG: #[[$ROWS_OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>

// CHECK-LABEL: hpvm.leaf @conv(
// The input is padded by a generic that selects 0 outside it.
// CHECK: %[[PAD:.*]] = linalg.generic
// CHECK: linalg.index 2
// CHECK: tensor.extract
// CHECK: arith.select
// CHECK: } -> tensor<1x2x10x8xf32>
// CHECK: linalg.fill
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>} ins(%[[PAD]], %arg1 : tensor<1x2x10x8xf32>, tensor<3x2x3x3xf32>)
// CHECK-NOT: hpvm.tensor
// CHECK: hpvm.return
// BUF-LABEL: hpvm.leaf @conv(%arg0: memref<1x2x8x8xf32> {hpvm.access = #hpvm.access<in>}, %arg1: memref<3x2x3x3xf32> {hpvm.access = #hpvm.access<in>}) -> memref<1x3x4x6xf32>
// The padded image is a temporary, freed before the leaf returns; the output
// is not.
// BUF: %[[PADDED:.*]] = memref.alloc() {{.*}} : memref<1x2x10x8xf32>
// BUF: %[[OUT:.*]] = memref.alloc() {{.*}} : memref<1x3x4x6xf32>
// BUF: linalg.conv_2d_nchw_fchw {{.*}} ins(%[[PADDED]], %arg1 : {{.*}}) outs(%[[OUT]] : memref<1x3x4x6xf32>)
// BUF-NEXT: memref.dealloc %[[PADDED]] : memref<1x2x10x8xf32>
// BUF-NEXT: hpvm.return %[[OUT]] : memref<1x3x4x6xf32>
hpvm.leaf @conv(%x: tensor<1x2x8x8xf32>, %w: tensor<3x2x3x3xf32>) -> (tensor<1x3x4x6xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [1, 0], strides = [2, 1]}
      : (tensor<1x2x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x4x6xf32>
  hpvm.return %c : tensor<1x3x4x6xf32>
}

// Grouped and depthwise convolutions: one generic reading input channel
// (f floordiv filters-per-group) * channels-per-group + c.
// CHECK-LABEL: hpvm.leaf @grouped(
// CHECK: linalg.generic {indexing_maps = [#[[$GIN]], #[[$GW]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.conv_2d
hpvm.leaf @grouped(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> (tensor<1x4x3x6xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {groups = 2, strides = [2, 1]}
      : (tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x3x6xf32>
  hpvm.return %c : tensor<1x4x3x6xf32>
}

// CHECK-LABEL: hpvm.leaf @depthwise(
// CHECK: linalg.generic {indexing_maps = [#[[$DIN]], #[[$GW]], #{{.*}}]
hpvm.leaf @depthwise(%x: tensor<1x4x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> (tensor<1x4x6x6xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {groups = 4}
      : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  hpvm.return %c : tensor<1x4x6x6xf32>
}

// The bias add and the activation after the product: one elementwise loop nest.
// CHECK-LABEL: hpvm.leaf @dense(
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<2x3xf32>, tensor<3x4xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[$MAP0:.*]], #[[$MAP1:.*]], #[[$MAP2:.*]]], iterator_types = ["parallel", "parallel"]}
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: linalg.yield
hpvm.leaf @dense(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>, %b: tensor<1x4xf32>) -> (tensor<2x4xf32>) {
  %y = hpvm.tensor.mul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %a = hpvm.tensor.add %y, %b : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  %r = hpvm.tensor.clipped_relu %a max 6.0 : tensor<2x4xf32>
  hpvm.return %r : tensor<2x4xf32>
}

// Batched matrix products are a contraction with a reduction dimension.
// CHECK-LABEL: hpvm.leaf @batched(
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: arith.mulf
// CHECK: arith.addf
hpvm.leaf @batched(%x: tensor<5x2x3xf32>, %w: tensor<5x3x4xf32>) -> (tensor<5x2x4xf32>) {
  %y = hpvm.tensor.mul %x, %w : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
  hpvm.return %y : tensor<5x2x4xf32>
}

// Pooling reduces over the output and the window; a mean divides by its size.
// CHECK-LABEL: hpvm.leaf @pools(
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK: arith.maximumf
// CHECK: arith.constant 0x7F800000 : f32
// CHECK: arith.minimumf
// CHECK: arith.addf
// CHECK: arith.constant 9.000000e+00 : f32
// CHECK: arith.divf
hpvm.leaf @pools(%x: tensor<1x2x6x6xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x2x2xf32>) {
  %max = hpvm.tensor.pool max %x {window = [2, 2], strides = [2, 2]} : tensor<1x2x6x6xf32> -> tensor<1x2x3x3xf32>
  %min = hpvm.tensor.pool min %x {window = [2, 2], strides = [2, 2]} : tensor<1x2x6x6xf32> -> tensor<1x2x3x3xf32>
  %mean = hpvm.tensor.pool mean %x {window = [3, 3], strides = [3, 3], padding = [0, 0]} : tensor<1x2x6x6xf32> -> tensor<1x2x2x2xf32>
  hpvm.return %max, %min, %mean : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x2x2xf32>
}

// A pool padded after the image only (ceil_mode): the padded image has the
// end padding alone (8 + 1 rows); the runtime's kernel takes the begin padding
// (0) and the output's size, 4 x 4 where floor mode gives 3 x 3.
// CHECK-LABEL: hpvm.leaf @ceil_pool(
// CHECK: tensor.empty() : tensor<1x2x9x9xf32>
// CHECK: arith.select %{{.*}}, %{{.*}}, %cst : f32
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x2x9x9xf32>, tensor<3x3xf32>) outs(%{{.*}} : tensor<1x2x4x4xf32>)
hpvm.leaf @ceil_pool(%x: tensor<1x2x8x8xf32>) -> (tensor<1x2x4x4xf32>) {
  %max = hpvm.tensor.pool max %x {window = [3, 3], strides = [2, 2], padding_end = [1, 1]} : tensor<1x2x8x8xf32> -> tensor<1x2x4x4xf32>
  hpvm.return %max : tensor<1x2x4x4xf32>
}

// tanh(x) = 1 - 2 / (exp(2x) + 1), sigmoid(x) = 1 / (1 + exp(-x)); each exp
// as the math dialect's polynomial (range reduction by floor, then fmas),
// which vectorizes where a call of expf does not.
// CHECK-LABEL: hpvm.leaf @activations(
// CHECK-NOT: math.exp
// CHECK: arith.maximumf
// CHECK: arith.mulf
// CHECK: math.floor
// CHECK: math.fma
// CHECK: arith.subf
// CHECK: arith.negf
// CHECK: math.floor
// CHECK: math.fma
// CHECK: arith.divf
// CHECK-LABEL: hpvm.leaf @softmax(
hpvm.leaf @activations(%x: tensor<8xf32>) -> (tensor<8xf32>) {
  %r = hpvm.tensor.relu %x : tensor<8xf32>
  %t = hpvm.tensor.tanh %r : tensor<8xf32>
  %s = hpvm.tensor.sigmoid %t : tensor<8xf32>
  hpvm.return %s : tensor<8xf32>
}

// Softmax: max, exp(x - max), sum, division along the axis.
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK: math.floor
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.addf
// CHECK: arith.divf
hpvm.leaf @softmax(%x: tensor<2x10xf32>) -> (tensor<2x10xf32>) {
  %p = hpvm.tensor.softmax %x {axis = 1} : tensor<2x10xf32>
  hpvm.return %p : tensor<2x10xf32>
}

// Along the last axis of rank >= 3 with outer rows to split (attention's
// scores): the max and the sum loop over the axis outside the rows before it,
// each row still reduced in order; the division as before.
// CHECK-LABEL: hpvm.leaf @softmax_rows(
// CHECK: linalg.generic {indexing_maps = [#[[$ROWS_IN]], #[[$ROWS_OUT]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
// CHECK: arith.maximumf
// The exponentials over the 15 rows of 7, the rows' dimensions merged (each
// operand walks them contiguously; CollapseElementwise).
// CHECK: tensor.collapse_shape %arg0 {{\[}}[0, 1, 2], [3]] : tensor<1x3x5x7xf32> into tensor<15x7xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins({{.*}} : tensor<15x7xf32>, tensor<15xf32>)
// CHECK: math.floor
// CHECK: linalg.generic {indexing_maps = [#[[$ROWS_IN]], #[[$ROWS_OUT]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK-LABEL: hpvm.leaf @softmax_one_batch(
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.maximumf
hpvm.leaf @softmax_rows(%x: tensor<1x3x5x7xf32>) -> (tensor<1x3x5x7xf32>) {
  %p = hpvm.tensor.softmax %x {axis = 3} : tensor<1x3x5x7xf32>
  hpvm.return %p : tensor<1x3x5x7xf32>
}
hpvm.leaf @softmax_one_batch(%x: tensor<1x5x7xf32>) -> (tensor<1x5x7xf32>) {
  %p = hpvm.tensor.softmax %x {axis = 2} : tensor<1x5x7xf32>
  hpvm.return %p : tensor<1x5x7xf32>
}

// CHECK-LABEL: hpvm.leaf @batchnorm(
// CHECK: linalg.generic
// CHECK: math.sqrt
hpvm.leaf @batchnorm(%x: tensor<1x2x3x3xf32>, %g: tensor<2xf32>, %b: tensor<2xf32>,
                     %m: tensor<2xf32>, %v: tensor<1x2x1x1xf32>) -> (tensor<1x2x3x3xf32>) {
  %y = hpvm.tensor.batchnorm %x, %g, %b, %m, %v {epsilon = 1.0e-05}
      : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  hpvm.return %y : tensor<1x2x3x3xf32>
}

// map and reduce keep their regions (the combiner gets the accumulator first).
// CHECK-LABEL: hpvm.leaf @regions(
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[A]], %[[B]] : f32
// CHECK-NEXT: linalg.yield %[[D]] : f32
// CHECK: linalg.fill ins(%arg2 : f32)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK-NEXT: ^bb0(%[[E:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[E]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
hpvm.leaf @regions(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %zero: f32) -> (tensor<4xf32>) {
  %d = hpvm.tensor.map %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: f32, %y: f32):
    %s = arith.subf %x, %y : f32
    hpvm.tensor.yield %s : f32
  }
  %r = hpvm.tensor.reduce %d, %zero axis 1 : (tensor<4x8xf32>, f32) -> tensor<4xf32> {
  ^bb0(%acc: f32, %e: f32):
    %t = arith.addf %acc, %e : f32
    hpvm.tensor.yield %t : f32
  }
  hpvm.return %r : tensor<4xf32>
}

// A batch normalization and its activation: sqrt(variance + epsilon) once per
// channel, then one loop nest over the image (one pass).
// CHECK-LABEL: hpvm.leaf @norm_relu(
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%arg4 : tensor<2xf32>)
// CHECK: math.sqrt
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins({{.*}} : tensor<2x16xf32>,
// CHECK-NOT: math.sqrt
// CHECK: arith.divf
// CHECK-NOT: linalg.generic
// CHECK: arith.maximumf
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: hpvm.return
hpvm.leaf @norm_relu(%x: tensor<1x2x4x4xf32>, %g: tensor<2xf32>, %b: tensor<2xf32>,
                     %m: tensor<2xf32>, %v: tensor<2xf32>) -> (tensor<1x2x4x4xf32>) {
  %n = hpvm.tensor.batchnorm %x, %g, %b, %m, %v {epsilon = 1.0e-03}
      : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %r = hpvm.tensor.relu %n : tensor<1x2x4x4xf32>
  hpvm.return %r : tensor<1x2x4x4xf32>
}

// A map's own exp stays one (only the lowering's exponentials become
// polynomials), even beside a softmax whose exp does.
// CHECK-LABEL: hpvm.leaf @own_exp(
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: math.exp %[[X]] : f32
// CHECK: math.floor
hpvm.leaf @own_exp(%a: tensor<2x4xf32>) -> (tensor<2x4xf32>) {
  %e = hpvm.tensor.map %a : (tensor<2x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%x: f32):
    %y = math.exp %x : f32
    hpvm.tensor.yield %y : f32
  }
  %p = hpvm.tensor.softmax %e {axis = 1} : tensor<2x4xf32>
  hpvm.return %p : tensor<2x4xf32>
}

hpvm.leaf @not_fused(%x: tensor<1x1x4x4xf32>, %w: tensor<2x1x3x3xf32>,
                     %full: tensor<1x2x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %c = hpvm.tensor.conv2d %x, %w : (tensor<1x1x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x2x2xf32>
  %a = hpvm.tensor.add %c, %full : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %r = hpvm.tensor.relu %c : tensor<1x2x2x2xf32>
  hpvm.return %a, %r : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

hpvm.leaf @double_product(%x: tensor<2x3xf64>, %w: tensor<3x4xf64>) -> (tensor<2x4xf64>) {
  %y = hpvm.tensor.mul %x, %w : (tensor<2x3xf64>, tensor<3x4xf64>) -> tensor<2x4xf64>
  hpvm.return %y : tensor<2x4xf64>
}

// Internal nodes and host code on buffers.
// CHECK-LABEL: hpvm.internal @root(%arg0: tensor<8xf32>) -> tensor<8xf32>
// BUF-LABEL: hpvm.internal @root(%arg0: memref<8xf32>) -> memref<8xf32>
// BUF: hpvm.bind_in %arg0 -> %{{.*}}[0] : memref<8xf32>
hpvm.internal @root(%x: tensor<8xf32>) -> (tensor<8xf32>) {
  %n = hpvm.create_node @activations : !hpvm.node
  hpvm.bind_in %x -> %n[0] : tensor<8xf32>
  hpvm.bind_out %n[0] -> 0
}
// BUF-LABEL: func.func @host(%arg0: memref<8xf32>, %arg1: memref<8xf32>)
// BUF-NEXT: %[[G:.*]] = hpvm.launch @root(%arg0) : (memref<8xf32>) -> !hpvm.graph
// BUF-NEXT: %[[R:.*]] = hpvm.wait %[[G]] : memref<8xf32>
// BUF-NEXT: memref.copy %[[R]], %arg1 : memref<8xf32> to memref<8xf32>
// The leaf's fresh output is the host's to free (owned-buffers.mlir). The
// destination is not declared unaliased (no `restrict`), so the output is
// copied into it (with `restrict` the leaf writes there: destination-outputs.mlir).
// BUF-NEXT: memref.dealloc %[[R]] : memref<8xf32>
// BUF-NEXT: return
func.func @host(%in: memref<8xf32>, %out: memref<8xf32>) {
  %t = bufferization.to_tensor %in restrict : memref<8xf32> to tensor<8xf32>
  %g = hpvm.launch @root(%t) : (tensor<8xf32>) -> !hpvm.graph
  %r = hpvm.wait %g : tensor<8xf32>
  bufferization.materialize_in_destination %r in writable %out
      : (tensor<8xf32>, memref<8xf32>) -> ()
  return
}
