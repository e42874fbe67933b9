// Tensor leaves hinted for a device (gpu, spirv, or ApproxHPVM's tensor
// target) become kernels of one thread per output element: each op's element
// is built where its consumer reads it, so a fused conv + bias + relu + pool
// is one kernel with no intermediate tensor; weights become memref.globals the
// host passes (hpvm.tensor_kernel), scalars of HPVM-C's pointer/size
// convention travel as values and come back through the outputs struct.
// RUN: hpvm-opt %s --convert-hpvm-to-gpu | FileCheck %s
// RUN: rm -rf %t && mkdir %t && hpvm-opt %s --convert-hpvm-to-gpu --hpvm-embed-kernels="devices=opencl,cuda cubins= dump-dir=%t" -o /dev/null
// RUN: spirv-val --target-env opencl2.1 %t/hpvm_kernels.spv
// RUN: hpvm-opt %s --convert-hpvm-to-gpu --hpvm-embed-kernels="devices=opencl" --convert-hpvm-tensor-to-linalg --convert-hpvm-to-cpu | FileCheck %s --check-prefix=HOST

// CHECK: memref.global "private" constant @__hpvm_tensor_constant_layer_0 : memref<2x1x3x3xf32> = dense<{{.*}}> {alignment = 64 : i64}
// CHECK-LABEL: hpvm.leaf @layer(
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@layer
// CHECK-SAME: hpvm.tensor_kernel = [@__hpvm_tensor_constant_layer_0]
hpvm.leaf @layer(%x: tensor<1x1x6x6xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x3x3xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %w = arith.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]], [[[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]]]]> : tensor<2x1x3x3xf32>
  %c = hpvm.tensor.conv2d %x, %w {padding = [1, 1], strides = [1, 1]} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x6x6xf32>
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x6x6xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x6x6xf32>
  %r = hpvm.tensor.relu %a : tensor<1x2x6x6xf32>
  %p = hpvm.tensor.pool max %r {window = [3, 3], strides = [2, 2], padding = [1, 1]} : tensor<1x2x6x6xf32> -> tensor<1x2x3x3xf32>
  hpvm.return %p : tensor<1x2x3x3xf32>
}

// A dense layer: product, bias, tanh, and the byte count HPVM-C returns
// beside each tensor.
// CHECK-LABEL: hpvm.leaf @head(
// CHECK-SAME: hpvm.tensor_kernel = []
hpvm.leaf @head(%f: tensor<2x16xf32>, %bytes: i64, %m: tensor<16x10xf32>, %mb: tensor<1x10xf32>) -> (tensor<2x10xf32>, i64) attributes {hpvm.targets = [#hpvm.target<tensor>]} {
  %zero = llvm.mlir.constant(0 : i64) : i64
  %y = hpvm.tensor.mul %f, %m : (tensor<2x16xf32>, tensor<16x10xf32>) -> tensor<2x10xf32>
  %a = hpvm.tensor.add %y, %mb : (tensor<2x10xf32>, tensor<1x10xf32>) -> tensor<2x10xf32>
  %s = hpvm.tensor.tanh %a : tensor<2x10xf32>
  hpvm.return %s, %zero : tensor<2x10xf32>, i64
}

// A product with the fp16 knob, its bias and relu: operands rounded to half
// precision as they are read (in f32 integer arithmetic: 10 fraction bits to
// nearest even, multiples of 2^-24 below 2^-14, infinity from 65520), summed
// in f32, the result rounded once where it is stored.
// CHECK-LABEL: hpvm.leaf @half(
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@half
hpvm.leaf @half(%f: tensor<2x16xf32>, %m: tensor<16x10xf32>, %mb: tensor<1x10xf32>) -> (tensor<2x10xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %y = hpvm.tensor.mul %f, %m {hpvm.knob = #hpvm.knob<fp16>} : (tensor<2x16xf32>, tensor<16x10xf32>) -> tensor<2x10xf32>
  %a = hpvm.tensor.add %y, %mb : (tensor<2x10xf32>, tensor<1x10xf32>) -> tensor<2x10xf32>
  %r = hpvm.tensor.relu %a : tensor<2x10xf32>
  hpvm.return %r : tensor<2x10xf32>
}

// Filter sampling: the taps k = (c * 3 + r) * 3 + s with k mod 2 = 1 are
// skipped (the loop runs over the 9 kept ones of 18), the kept weights are
// scaled by 2 / (2 - 1).
// CHECK-LABEL: hpvm.leaf @sampled(
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@sampled
hpvm.leaf @sampled(%x: tensor<1x2x6x6xf32>, %w: tensor<2x2x3x3xf32>) -> (tensor<1x2x4x4xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %c = hpvm.tensor.conv2d %x, %w {hpvm.knob = #hpvm.knob<sample_filter, rate = 2, offset = 1>} : (tensor<1x2x6x6xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  hpvm.return %c : tensor<1x2x4x4xf32>
}

// Row perforation (rate 2, offset 1): a thread per run of 8 rows of one
// column (1 x 2 x 1 x 6 threads); rows 0, 2, 4 computed, 1 and 3 the mean of
// their neighbours, 5 (the last) a copy of row 4.
// CHECK-LABEL: hpvm.leaf @perforated(
// CHECK-SAME: hpvm.tensor_launch = array<i64: 12, 0>
hpvm.leaf @perforated(%x: tensor<1x1x6x6xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> (tensor<1x2x6x6xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %c = hpvm.tensor.conv2d %x, %w {padding = [1, 1], hpvm.knob = #hpvm.knob<perforate_rows, rate = 2, offset = 1>} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x6x6xf32>
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x6x6xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x6x6xf32>
  %r = hpvm.tensor.relu %a : tensor<1x2x6x6xf32>
  hpvm.return %r : tensor<1x2x6x6xf32>
}

// A global average pool of a convolution: one window, each element read once.
// CHECK-LABEL: hpvm.leaf @global(
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@global
hpvm.leaf @global(%x: tensor<1x2x7x7xf32>, %w: tensor<4x2x1x1xf32>) -> (tensor<1x4x1x1xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %c = hpvm.tensor.conv2d %x, %w : (tensor<1x2x7x7xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x7x7xf32>
  %p = hpvm.tensor.pool mean %c {window = [7, 7], strides = [1, 1]} : tensor<1x4x7x7xf32> -> tensor<1x4x1x1xf32>
  hpvm.return %p : tensor<1x4x1x1xf32>
}

// A ceil_mode pool (padded after the image only): its windows over the end
// of the image check their bounds (the gpu.func's checks below).
// CHECK-LABEL: hpvm.leaf @ceil_pool(
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@ceil_pool
hpvm.leaf @ceil_pool(%x: tensor<1x2x8x8xf32>) -> (tensor<1x2x4x4xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %p = hpvm.tensor.pool max %x {window = [3, 3], strides = [2, 2], padding_end = [1, 1]} : tensor<1x2x8x8xf32> -> tensor<1x2x4x4xf32>
  hpvm.return %p : tensor<1x2x4x4xf32>
}

// Not hinted: no kernel.
// CHECK-LABEL: hpvm.leaf @host_only(
// CHECK-NOT: hpvm.kernel
hpvm.leaf @host_only(%x: tensor<2x10xf32>) -> (tensor<2x10xf32>) {
  %t = hpvm.tensor.softmax %x : tensor<2x10xf32>
  hpvm.return %t : tensor<2x10xf32>
}

hpvm.internal @net(%x: tensor<1x1x6x6xf32>, %b: tensor<1x2x1x1xf32>, %f: tensor<2x16xf32>, %bytes: i64, %m: tensor<16x10xf32>, %mb: tensor<1x10xf32>) -> (tensor<1x2x3x3xf32>, tensor<2x10xf32>) {
  %l = hpvm.create_node @layer : !hpvm.node
  hpvm.bind_in %x -> %l[0] : tensor<1x1x6x6xf32>
  hpvm.bind_in %b -> %l[1] : tensor<1x2x1x1xf32>
  %h = hpvm.create_node @head : !hpvm.node
  hpvm.bind_in %f -> %h[0] : tensor<2x16xf32>
  hpvm.bind_in %bytes -> %h[1] : i64
  hpvm.bind_in %m -> %h[2] : tensor<16x10xf32>
  hpvm.bind_in %mb -> %h[3] : tensor<1x10xf32>
  %t = hpvm.create_node @host_only : !hpvm.node
  hpvm.edge %h[0] -> %t[0] one_to_one
  hpvm.bind_out %l[0] -> 0
  hpvm.bind_out %t[0] -> 1
}

func.func @run(%x: memref<1x1x6x6xf32>, %b: memref<1x2x1x1xf32>, %f: memref<2x16xf32>, %m: memref<16x10xf32>, %mb: memref<1x10xf32>, %o1: memref<1x2x3x3xf32>, %o2: memref<2x10xf32>) {
  %tx = bufferization.to_tensor %x restrict : memref<1x1x6x6xf32> to tensor<1x1x6x6xf32>
  %tb = bufferization.to_tensor %b restrict : memref<1x2x1x1xf32> to tensor<1x2x1x1xf32>
  %tf = bufferization.to_tensor %f restrict : memref<2x16xf32> to tensor<2x16xf32>
  %tm = bufferization.to_tensor %m restrict : memref<16x10xf32> to tensor<16x10xf32>
  %tmb = bufferization.to_tensor %mb restrict : memref<1x10xf32> to tensor<1x10xf32>
  %bytes = arith.constant 128 : i64
  %g = hpvm.launch @net(%tx, %tb, %tf, %bytes, %tm, %tmb) : (tensor<1x1x6x6xf32>, tensor<1x2x1x1xf32>, tensor<2x16xf32>, i64, tensor<16x10xf32>, tensor<1x10xf32>) -> !hpvm.graph
  %r:2 = hpvm.wait %g : tensor<1x2x3x3xf32>, tensor<2x10xf32>
  bufferization.materialize_in_destination %r#0 in restrict writable %o1 : (tensor<1x2x3x3xf32>, memref<1x2x3x3xf32>) -> ()
  bufferization.materialize_in_destination %r#1 in restrict writable %o2 : (tensor<2x10xf32>, memref<2x10xf32>) -> ()
  return
}

// The layer's kernel: inputs, the weights, the output, the grid; one thread
// per element of the 1x2x3x3 output, its indices row-major.
// CHECK-LABEL: gpu.func @layer(
// CHECK-SAME: %[[X:[^:]+]]: memref<1x1x6x6xf32>, %[[B:[^:]+]]: memref<1x2x1x1xf32>, %[[W:[^:]+]]: memref<2x1x3x3xf32>, %[[OUT:[^:]+]]: memref<1x2x3x3xf32>, %[[N:[^:]+]]: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64) kernel
// CHECK: %[[ID:.*]] = arith.addi
// CHECK: %[[COUNT:.*]] = arith.index_cast %[[N]] : i64 to index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[ID]], %[[COUNT]]
// CHECK: scf.if %[[IN]] {
// The pool's window (3x3, -inf outside the image), then the convolution's
// taps (zero outside), the bias and relu per element.
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.if
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load %[[X]]
// CHECK: memref.load %[[W]]
// CHECK: arith.mulf
// CHECK: memref.load %[[B]]
// CHECK: arith.maximumf
// CHECK: arith.maximumf
// CHECK: memref.store %{{.*}}, %[[OUT]]
// CHECK: gpu.return

// The head's kernel: the byte count as a value, a pointer to the struct of
// the scalar outputs last; the first thread stores the constant there.
// CHECK-LABEL: gpu.func @head(
// CHECK-SAME: memref<2x16xf32>, %{{[^:]+}}: i64, %{{[^:]+}}: memref<16x10xf32>, %{{[^:]+}}: memref<1x10xf32>, %{{[^:]+}}: memref<2x10xf32>, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %[[SCALARS:[^:]+]]: !llvm.ptr) kernel
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: memref.store
// CHECK: arith.cmpi eq
// CHECK: llvm.getelementptr %[[SCALARS]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i64)>
// CHECK: llvm.store

// CHECK-LABEL: gpu.func @half(
// CHECK: scf.for
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.constant 4095 : i32
// CHECK: arith.constant -8192 : i32
// CHECK: arith.constant 5.000000e-01 : f32
// CHECK: arith.constant 6.10351563E-5 : f32
// CHECK: arith.constant 6.552000e+04 : f32
// CHECK: arith.constant 0x7F800000 : f32
// CHECK: arith.mulf
// CHECK: scf.yield
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: arith.constant -8192 : i32
// CHECK: arith.constant 6.552000e+04 : f32
// CHECK: memref.store

// CHECK-LABEL: gpu.func @sampled(
// CHECK: %[[SCALE:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: %[[KEPT:.*]] = arith.constant 9 : index
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %[[KEPT]] step
// The j-th kept tap: 2 (j / 1) + (j mod 1), plus 1 from the offset on.
// CHECK: %[[CYCLE:.*]] = arith.divui %[[J]]
// CHECK: %[[M:.*]] = arith.remui %[[J]]
// CHECK: %[[PAST:.*]] = arith.cmpi uge, %[[M]]
// CHECK: arith.select %[[PAST]]
// CHECK: memref.load %arg0
// CHECK: %[[W:.*]] = memref.load %arg1
// CHECK: %[[SCALED:.*]] = arith.mulf %[[W]], %[[SCALE]]
// CHECK: %[[PRODUCT:.*]] = arith.mulf %{{.*}}, %[[SCALED]]
// CHECK: arith.addf %{{.*}}, %[[PRODUCT]] : f32
// CHECK-NOT: arith.select
// CHECK: scf.yield

// CHECK-LABEL: gpu.func @perforated(
// The kept rows 0, 2, 4, 6 of the run and row 8, which its row 7 needs
// (each a convolution, its bias, relu; rows past the image: not computed).
// CHECK-COUNT-5: arith.maximumf
// CHECK: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: arith.addf
// CHECK: arith.mulf %[[HALF]]
// CHECK: arith.select
// CHECK: arith.select
// CHECK: memref.store
// CHECK: gpu.return

// The ceil_mode pool's taps: rows and columns below 8 are read, the others
// are -inf (the last windows' third row and column).
// CHECK-LABEL: gpu.func @ceil_pool(
// CHECK: %[[LOWEST:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK: arith.cmpi slt, %{{.*}}, %[[EIGHT]] : index
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK: memref.load
// CHECK: } else {
// CHECK: scf.yield %[[LOWEST]] : f32
// CHECK: arith.maximumf
// CHECK: gpu.return

// The host: the output allocated before the launch (the kernel writes every
// element), the weights' global passed in, and where no device ran, the
// buffer freed and the CPU version run (its own output then).
// HOST-LABEL: func.func @run(
// HOST: %[[OUT:.*]] = memref.alloc() : memref<1x2x3x3xf32>
// HOST: memref.get_global @__hpvm_tensor_constant_layer_0 : memref<2x1x3x3xf32>
// HOST: llvm.call @hpvm_rt_kernel_run(
// HOST: scf.if %{{.*}} -> (memref<1x2x3x3xf32>) {
// HOST-NEXT: memref.dealloc %[[OUT]] : memref<1x2x3x3xf32>
// HOST: call @hpvm_rt_tensor_conv2d_f32(
// HOST: } else {
// HOST-NEXT: scf.yield %[[OUT]] : memref<1x2x3x3xf32>
// HOST: llvm.call @hpvm_rt_kernel_run(
// HOST: scf.if %{{.*}} -> (memref<2x10xf32>, i64) {
