// A convolution with an approximation knob (hpvm.knob) calls the runtime's
// approximate kernel: the knob (1: perforate rows, 2: columns, 3: sample the
// filter), its rate and offset follow the epilogue's arguments. Without the
// kernels (kernels=false) a knob is an error, never silently exact.
// RUN: hpvm-opt %s --convert-hpvm-tensor-to-linalg --cse | FileCheck %s
// RUN: not hpvm-opt %s --convert-hpvm-tensor-to-linalg=kernels=false 2>&1 | FileCheck %s --check-prefix=LINALG

// CHECK-LABEL: hpvm.leaf @rows(
// CHECK: call @hpvm_rt_tensor_conv2d_approx_f32({{.*}}, %c0_i64, %{{.*}}, %c1_i64, %c2_i64, %c1_i64)
// CHECK-NOT: call @hpvm_rt_tensor_conv2d_f32
// CHECK: hpvm.return
// LINALG: error: 'hpvm.tensor.conv2d' op with #hpvm.knob<perforate_rows, rate = 2, offset = 1> needs the runtime's kernels (f32 operands, convert-hpvm-tensor-to-linalg kernels=true); found kernels=false
hpvm.leaf @rows(%x: tensor<1x2x8x8xf32>, %w: tensor<3x2x3x3xf32>) -> (tensor<1x3x6x6xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {hpvm.knob = #hpvm.knob<perforate_rows, rate = 2, offset = 1>}
      : (tensor<1x2x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
  hpvm.return %c : tensor<1x3x6x6xf32>
}

// The epilogue is still absorbed: bias pointer, relu (1), then the knob.
// CHECK-LABEL: hpvm.leaf @sampled_relu(
// CHECK-NOT: linalg.generic
// CHECK: call @hpvm_rt_tensor_conv2d_approx_f32({{.*}}, %c1_i64, %{{.*}}, %c3_i64, %c4_i64, %c3_i64)
// CHECK-LABEL: hpvm.leaf @columns(
// CHECK: call @hpvm_rt_tensor_conv2d_approx_f32({{.*}}, %c2_i64, %c3_i64, %c0_i64)
hpvm.leaf @sampled_relu(%x: tensor<1x2x8x8xf32>, %w: tensor<3x2x3x3xf32>,
                        %b: tensor<1x3x1x1xf32>) -> (tensor<1x3x6x6xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {hpvm.knob = #hpvm.knob<sample_filter, rate = 4, offset = 3>}
      : (tensor<1x2x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
  %a = hpvm.tensor.add %c, %b : (tensor<1x3x6x6xf32>, tensor<1x3x1x1xf32>) -> tensor<1x3x6x6xf32>
  %r = hpvm.tensor.relu %a : tensor<1x3x6x6xf32>
  hpvm.return %r : tensor<1x3x6x6xf32>
}
hpvm.leaf @columns(%x: tensor<1x2x8x8xf32>, %w: tensor<3x2x3x3xf32>) -> (tensor<1x3x6x6xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {hpvm.knob = #hpvm.knob<perforate_cols, rate = 3, offset = 0>}
      : (tensor<1x2x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
  hpvm.return %c : tensor<1x3x6x6xf32>
}

// Precision knobs on a product: a constant operand is stored in 16 bits at
// compile time (to nearest even: 0.1 is 0x2E66 in fp16, 0x3DCD in bf16; 1e5 is
// beyond fp16's range) and the f32 constant dropped, another operand is rounded
// where the product runs, and the half kernel (format 1: fp16, 2: bf16) takes
// the epilogue as the f32 one does.
// RUN: hpvm-opt %s --convert-hpvm-tensor-to-linalg --cse | FileCheck %s --check-prefix=HALF
// RUN: hpvm-opt %s --convert-hpvm-tensor-to-linalg --cse | FileCheck %s --check-prefix=DROPPED
// HALF-DAG: memref.global "private" constant @__constant_2x2xf16 : memref<2x2xf16> = dense<{{\[}}[1.000000e+00, 9.997550e-02], [0x7C00, 3.140630e+00]]>
// HALF-DAG: memref.global "private" constant @__constant_2x2xbf16 : memref<2x2xbf16> = dense<{{\[}}[1.000000e+00, 1.000980e-01], [9.984000e+04, 3.140630e+00]]>
// HALF-LABEL: hpvm.leaf @fc_fp16(
// HALF: %[[X:.*]] = memref.alloc() : memref<3x2xf16>
// HALF: call @hpvm_rt_tensor_narrow_f32(%{{.*}}, %{{.*}}, %c6_i64, %c1_i64)
// HALF: memref.get_global @__constant_2x2xf16
// HALF: call @hpvm_rt_tensor_matmul_half({{.*}}, %c1_i64, %c3_i64, %c2_i64, %c2_i64, %c1_i64, %{{.*}}, %c1_i64)
// HALF-NOT: call @hpvm_rt_tensor_matmul_f32
// HALF: memref.dealloc %[[X]]
// HALF-LABEL: hpvm.leaf @fc_bf16(
// HALF: call @hpvm_rt_tensor_narrow_f32(%{{.*}}, %{{.*}}, %c6_i64, %c2_i64)
// HALF: memref.get_global @__constant_2x2xbf16
// HALF: call @hpvm_rt_tensor_matmul_half({{.*}}, %c0_i64, %{{.*}}, %c2_i64)
// DROPPED-NOT: @__constant_2x2xf32
// LINALG: error: 'hpvm.tensor.mul' op with #hpvm.knob<fp16> needs the runtime's kernels (f32 operands, convert-hpvm-tensor-to-linalg kernels=true); found kernels=false
hpvm.leaf @fc_fp16(%x: tensor<3x2xf32>) -> (tensor<3x2xf32>) {
  %w = arith.constant dense<[[1.0, 0.1], [1.0e5, 3.14159]]> : tensor<2x2xf32>
  %b = arith.constant dense<[[0.5, -0.5]]> : tensor<1x2xf32>
  %m = hpvm.tensor.mul %x, %w {hpvm.knob = #hpvm.knob<fp16>} : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %a = hpvm.tensor.add %m, %b : (tensor<3x2xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
  %r = hpvm.tensor.relu %a : tensor<3x2xf32>
  hpvm.return %r : tensor<3x2xf32>
}
hpvm.leaf @fc_bf16(%x: tensor<3x2xf32>) -> (tensor<3x2xf32>) {
  %w = arith.constant dense<[[1.0, 0.1], [1.0e5, 3.14159]]> : tensor<2x2xf32>
  %m = hpvm.tensor.mul %x, %w {hpvm.knob = #hpvm.knob<bf16>} : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  hpvm.return %m : tensor<3x2xf32>
}
