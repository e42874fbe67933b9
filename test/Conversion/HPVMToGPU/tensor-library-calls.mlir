// Tensor leaves whose whole computation is one cuDNN / cuBLAS call and the
// epilogue cuDNN does (act?(add?(conv2d | mul))) carry that call
// (hpvm.tensor_library) beside their generated kernel; hpvm-embed-kernels
// makes it the hpvm_rt_tensor_library_call_t their CUDA site points to. The
// parameter indices count the host's parameter array (inputs, constant
// tensors, outputs; a memref is 3 + 2 * rank parameters, a scalar one).
// RUN: hpvm-opt %s --convert-hpvm-to-gpu | FileCheck %s
// RUN: hpvm-opt %s --convert-hpvm-to-gpu --hpvm-embed-kernels="devices=cuda cubins=" | FileCheck %s --check-prefix=SITE
// RUN: hpvm-opt %s --convert-hpvm-to-gpu --hpvm-embed-kernels="devices=opencl" | FileCheck %s --check-prefix=OPENCL

// A grouped, padded, strided convolution of an input by constant weights,
// the bias (an input, added on the left) and relu: x at 0, bias at 11, the
// weights' global at 22, the output at 33.
// CHECK-LABEL: hpvm.leaf @conv(
// CHECK-SAME: hpvm.tensor_library = {activation = "relu", bias = array<i64: 1, 6, 1, 1>, clip = 0.000000e+00 : f64, filter = array<i64: 6, 3, 3>, groups = 2 : i64, op = "conv2d", output = array<i64: 1, 6, 4, 4>, padding = array<i64: 1, 1>, params = array<i32: 0, 22, 11, 33>, scalars = [], scalars_param = -1 : i32, sizes = array<i64: 1, 4, 8, 8>, strides = array<i64: 2, 2>}
hpvm.leaf @conv(%x: tensor<1x4x8x8xf32>, %b: tensor<1x6x1x1xf32>) -> (tensor<1x6x4x4xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %w = arith.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]]], [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]]], [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]]], [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]]], [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]]], [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]]]]> : tensor<6x2x3x3xf32>
  %c = hpvm.tensor.conv2d %x, %w {padding = [1, 1], strides = [2, 2], groups = 2} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x4x4xf32>
  %a = hpvm.tensor.add %b, %c : (tensor<1x6x1x1xf32>, tensor<1x6x4x4xf32>) -> tensor<1x6x4x4xf32>
  %r = hpvm.tensor.relu %a : tensor<1x6x4x4xf32>
  hpvm.return %r : tensor<1x6x4x4xf32>
}

// A batched product after a scalar input (one parameter), bias per column,
// tanh: a at 1, b at 10, the bias at 19, the output at 28.
// CHECK-LABEL: hpvm.leaf @dense(
// CHECK-SAME: hpvm.tensor_library = {activation = "tanh", bias = array<i64: 1, 1, 1, 5>, clip = 0.000000e+00 : f64, filter = array<i64: 0, 0, 0>, groups = 0 : i64, op = "matmul", output = array<i64: 1, 2, 3, 5>, padding = array<i64: 0, 0>, params = array<i32: 1, 10, 19, 28>, scalars = [], scalars_param = -1 : i32, sizes = array<i64: 2, 3, 5, 4>, strides = array<i64: 0, 0>}
hpvm.leaf @dense(%n: i64, %a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %bias: tensor<1x1x5xf32>) -> (tensor<2x3x5xf32>) attributes {hpvm.targets = [#hpvm.target<tensor>]} {
  %y = hpvm.tensor.mul %a, %b : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %s = hpvm.tensor.add %y, %bias : (tensor<2x3x5xf32>, tensor<1x1x5xf32>) -> tensor<2x3x5xf32>
  %t = hpvm.tensor.tanh %s : tensor<2x3x5xf32>
  hpvm.return %t : tensor<2x3x5xf32>
}

// A plain product: no bias (-1), no activation.
// CHECK-LABEL: hpvm.leaf @plain(
// CHECK-SAME: hpvm.tensor_library = {activation = "identity", bias = array<i64: 0, 0, 0, 0>, {{.*}} op = "matmul", output = array<i64: 1, 1, 2, 3>, {{.*}} params = array<i32: 0, 7, -1, 14>, {{.*}} sizes = array<i64: 1, 2, 3, 16>
hpvm.leaf @plain(%a: tensor<2x16xf32>, %b: tensor<16x3xf32>) -> (tensor<2x3xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %y = hpvm.tensor.mul %a, %b : (tensor<2x16xf32>, tensor<16x3xf32>) -> tensor<2x3xf32>
  hpvm.return %y : tensor<2x3xf32>
}

// A convolution and a clipped relu.
// CHECK-LABEL: hpvm.leaf @clipped(
// CHECK-SAME: hpvm.tensor_library = {activation = "clipped_relu", bias = array<i64: 0, 0, 0, 0>, clip = 6.000000e+00 : f64, {{.*}} op = "conv2d", {{.*}} params = array<i32: 0, 11, -1, 22>
hpvm.leaf @clipped(%x: tensor<1x2x6x6xf32>, %w: tensor<2x2x3x3xf32>) -> (tensor<1x2x4x4xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %c = hpvm.tensor.conv2d %x, %w : (tensor<1x2x6x6xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  %r = hpvm.tensor.clipped_relu %c max 6.0 : tensor<1x2x4x4xf32>
  hpvm.return %r : tensor<1x2x4x4xf32>
}

// HPVM-C's convention: each tensor with its byte count, the result with a
// constant 0; the count is one parameter, the constant stored by the runtime
// into the scalar outputs' struct (after the output's 7 parameters and the
// grid's three: 7 + 1 + 7 + 7 + 3 = 25).
// CHECK-LABEL: hpvm.leaf @hpvmc(
// CHECK-SAME: hpvm.tensor_library = {activation = "identity", {{.*}} op = "matmul", {{.*}} params = array<i32: 0, 8, -1, 15>, scalars = [0], scalars_param = 25 : i32,
hpvm.leaf @hpvmc(%a: tensor<2x16xf32>, %bytes: i64, %b: tensor<16x3xf32>) -> (tensor<2x3xf32>, i64) attributes {hpvm.targets = [#hpvm.target<tensor>]} {
  %zero = llvm.mlir.constant(0 : i64) : i64
  %y = hpvm.tensor.mul %a, %b : (tensor<2x16xf32>, tensor<16x3xf32>) -> tensor<2x3xf32>
  hpvm.return %y, %zero : tensor<2x3xf32>, i64
}

// A scalar output that is an input passed on: the kernel only.
// CHECK-LABEL: hpvm.leaf @passed(
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@passed
// CHECK-NOT: hpvm.tensor_library
// CHECK-SAME: {
hpvm.leaf @passed(%a: tensor<2x16xf32>, %bytes: i64, %b: tensor<16x3xf32>) -> (tensor<2x3xf32>, i64) attributes {hpvm.targets = [#hpvm.target<tensor>]} {
  %y = hpvm.tensor.mul %a, %b : (tensor<2x16xf32>, tensor<16x3xf32>) -> tensor<2x3xf32>
  hpvm.return %y, %bytes : tensor<2x3xf32>, i64
}

// A precision knob: the kernel only.
// CHECK-LABEL: hpvm.leaf @half(
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@half
// CHECK-NOT: hpvm.tensor_library
// CHECK-SAME: {
hpvm.leaf @half(%a: tensor<2x16xf32>, %b: tensor<16x3xf32>) -> (tensor<2x3xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %y = hpvm.tensor.mul %a, %b {hpvm.knob = #hpvm.knob<fp16>} : (tensor<2x16xf32>, tensor<16x3xf32>) -> tensor<2x3xf32>
  hpvm.return %y : tensor<2x3xf32>
}

// A sampling knob: the kernel only.
// CHECK-LABEL: hpvm.leaf @sampled(
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@sampled
// CHECK-NOT: hpvm.tensor_library
// CHECK-SAME: {
hpvm.leaf @sampled(%x: tensor<1x2x6x6xf32>, %w: tensor<2x2x3x3xf32>) -> (tensor<1x2x4x4xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %c = hpvm.tensor.conv2d %x, %w {hpvm.knob = #hpvm.knob<sample_filter, rate = 2, offset = 1>} : (tensor<1x2x6x6xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}

// An operand computed in the leaf (relu of the input): the kernel only.
// CHECK-LABEL: hpvm.leaf @computed(
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@computed
// CHECK-NOT: hpvm.tensor_library
// CHECK-SAME: {
hpvm.leaf @computed(%x: tensor<1x2x6x6xf32>, %w: tensor<2x2x3x3xf32>) -> (tensor<1x2x4x4xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %r = hpvm.tensor.relu %x : tensor<1x2x6x6xf32>
  %c = hpvm.tensor.conv2d %r, %w : (tensor<1x2x6x6xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}

// More than the epilogue (a pool after the activation): the kernel only.
// CHECK-LABEL: hpvm.leaf @pooled(
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@pooled
// CHECK-NOT: hpvm.tensor_library
// CHECK-SAME: {
hpvm.leaf @pooled(%x: tensor<1x2x6x6xf32>, %w: tensor<2x2x3x3xf32>) -> (tensor<1x2x2x2xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %c = hpvm.tensor.conv2d %x, %w : (tensor<1x2x6x6xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  %r = hpvm.tensor.relu %c : tensor<1x2x4x4xf32>
  %p = hpvm.tensor.pool max %r {window = [2, 2], strides = [2, 2]} : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  hpvm.return %p : tensor<1x2x2x2xf32>
}

// The sites: the library call's descriptor after the state; none for leaves
// without one.
// SITE: llvm.mlir.global internal constant @__hpvm_library_conv() {{.*}} : !llvm.struct<(i32, i32, f64, array<4 x i64>, array<3 x i64>, array<2 x i64>, array<2 x i64>, i64, array<4 x i64>, array<4 x i64>, i32, i32, i32, i32, i32, ptr, i64)>
// SITE: llvm.mlir.global internal @__hpvm_site_conv()
// SITE: llvm.mlir.addressof @__hpvm_library_conv
// SITE: llvm.insertvalue {{.*}}[5] : !llvm.struct<(ptr, ptr, ptr, ptr, ptr, ptr)>
// SITE: llvm.mlir.global internal constant @__hpvm_library_hpvmc_scalars() {{.*}} : !llvm.struct<(i64)>
// SITE: llvm.mlir.constant(0 : i64) : i64
// SITE: llvm.mlir.global internal constant @__hpvm_library_hpvmc()
// SITE: llvm.mlir.addressof @__hpvm_library_hpvmc_scalars
// SITE: llvm.mlir.constant(8 : i64) : i64
// SITE: llvm.mlir.global internal @__hpvm_site_half()
// SITE-NOT: __hpvm_library
// SITE: llvm.insertvalue {{.*}}[5] : !llvm.struct<(ptr, ptr, ptr, ptr, ptr, ptr)>
// SITE-NOT: hpvm.tensor_library

// Without a CUDA image there is no use for a descriptor.
// OPENCL-NOT: __hpvm_library
// OPENCL-NOT: hpvm.tensor_library
