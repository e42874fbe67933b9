// A tensor leaf whose output is a convolution of one group or a product of
// matrices, followed by elementwise ops, computes it in work-group tiles: 256
// threads per 64 x 64 block of the output, the operands staged through
// work-group memory 16 terms at a time (two !llvm.ptr<3> parameters, last),
// each thread's 4 x 4 sums in registers, the epilogue where each is stored.
// The leaf's hpvm.tensor_launch gives the host the launch: threads,
// work-group size, the bytes of each slice (16 x 65 and 16 x 64 floats).
// RUN: hpvm-opt %s --convert-hpvm-to-gpu | FileCheck %s
// RUN: hpvm-opt %s --convert-hpvm-to-gpu="tensor-tiles=always" | FileCheck %s --check-prefix=ALWAYS
// RUN: hpvm-opt %s --convert-hpvm-to-gpu="tensor-tiles=never" | FileCheck %s --check-prefix=NEVER
// RUN: not hpvm-opt %s --convert-hpvm-to-gpu="tensor-tiles=sometimes" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: rm -rf %t && mkdir %t && hpvm-opt %s --convert-hpvm-to-gpu="tensor-tiles=always" --hpvm-embed-kernels="devices=opencl,cuda cubins= dump-dir=%t" -o /dev/null
// RUN: spirv-val --target-env opencl2.1 %t/hpvm_kernels.spv
// RUN: FileCheck %s --input-file=%t/hpvm_kernels.ptx --check-prefix=PTX
// RUN: hpvm-opt %s --convert-hpvm-to-gpu --hpvm-embed-kernels="devices=opencl" --convert-hpvm-tensor-to-linalg --convert-hpvm-to-cpu | FileCheck %s --check-prefix=HOST

// BAD: convert-hpvm-to-gpu: tensor-tiles expects auto, always or never, found 'sometimes'
// NEVER-NOT: hpvm.tensor_launch

// A convolution (64 filters x 100 pixels, 144 terms), bias, relu: two
// work-groups (one of 64 rows, two of 64 columns).
// CHECK-LABEL: hpvm.leaf @conv(
// CHECK-SAME: hpvm.tensor_launch = array<i64: 512, 256, 4160, 4096>
hpvm.leaf @conv(%x: tensor<1x16x10x10xf32>, %w: tensor<64x16x3x3xf32>, %b: tensor<1x64x1x1xf32>) -> (tensor<1x64x10x10xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %c = hpvm.tensor.conv2d %x, %w {padding = [1, 1], strides = [1, 1]} : (tensor<1x16x10x10xf32>, tensor<64x16x3x3xf32>) -> tensor<1x64x10x10xf32>
  %a = hpvm.tensor.add %c, %b : (tensor<1x64x10x10xf32>, tensor<1x64x1x1xf32>) -> tensor<1x64x10x10xf32>
  %r = hpvm.tensor.relu %a : tensor<1x64x10x10xf32>
  hpvm.return %r : tensor<1x64x10x10xf32>
}

// A small product: too few rows for a tile unless tiles are forced (one
// work-group per 64 x 64 block of each of the 3 batches).
// CHECK-LABEL: hpvm.leaf @small(
// CHECK-NOT: hpvm.tensor_launch
// CHECK-SAME: {
// ALWAYS-LABEL: hpvm.leaf @small(
// ALWAYS-SAME: hpvm.tensor_launch = array<i64: 1536, 256, 4160, 4096>
hpvm.leaf @small(%f: tensor<3x10x40xf32>, %m: tensor<3x40x70xf32>) -> (tensor<3x10x70xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %y = hpvm.tensor.mul %f, %m : (tensor<3x10x40xf32>, tensor<3x40x70xf32>) -> tensor<3x10x70xf32>
  hpvm.return %y : tensor<3x10x70xf32>
}

// Never tiled: a grouped convolution, one read through a reshape, two tensor
// outputs.
// ALWAYS-LABEL: hpvm.leaf @grouped(
// ALWAYS-NOT: hpvm.tensor_launch
// ALWAYS-SAME: {
hpvm.leaf @grouped(%x: tensor<1x64x8x8xf32>, %w: tensor<64x32x3x3xf32>) -> (tensor<1x64x6x6xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %c = hpvm.tensor.conv2d %x, %w {groups = 2 : i64} : (tensor<1x64x8x8xf32>, tensor<64x32x3x3xf32>) -> tensor<1x64x6x6xf32>
  hpvm.return %c : tensor<1x64x6x6xf32>
}
// A convolution feeding a pool: the tile's columns are the taps of 16 pooled
// pixels (2 x 2 windows), 25 pooled pixels in two column tiles; a third
// work-group memory parameter, 64 x 65 floats, holds the tile's values.
// CHECK-LABEL: hpvm.leaf @pooled(
// CHECK-SAME: hpvm.tensor_launch = array<i64: 512, 256, 4160, 4096, 16640>
hpvm.leaf @pooled(%x: tensor<1x16x10x10xf32>, %w: tensor<64x16x3x3xf32>) -> (tensor<1x64x5x5xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %c = hpvm.tensor.conv2d %x, %w {padding = [1, 1]} : (tensor<1x16x10x10xf32>, tensor<64x16x3x3xf32>) -> tensor<1x64x10x10xf32>
  %p = hpvm.tensor.pool max %c {window = [2, 2], strides = [2, 2]} : tensor<1x64x10x10xf32> -> tensor<1x64x5x5xf32>
  hpvm.return %p : tensor<1x64x5x5xf32>
}
// Overlapping 3 x 3 windows with padding (7 pooled pixels of 9 taps per tile:
// 63 of the 64 columns), bias and tanh before the mean pool, relu after it.
// 2 x 5 x 4 = 40 pooled pixels: 6 column tiles.
// CHECK-LABEL: hpvm.leaf @meanpool(
// CHECK-SAME: hpvm.tensor_launch = array<i64: 1536, 256, 4160, 4096, 16640>
hpvm.leaf @meanpool(%x: tensor<2x70x10x8xf32>, %w: tensor<36x70x3x3xf32>, %b: tensor<1x36x1x1xf32>) -> (tensor<2x36x5x4xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %c = hpvm.tensor.conv2d %x, %w {padding = [1, 1]} : (tensor<2x70x10x8xf32>, tensor<36x70x3x3xf32>) -> tensor<2x36x10x8xf32>
  %a = hpvm.tensor.add %c, %b : (tensor<2x36x10x8xf32>, tensor<1x36x1x1xf32>) -> tensor<2x36x10x8xf32>
  %t = hpvm.tensor.tanh %a : tensor<2x36x10x8xf32>
  %p = hpvm.tensor.pool mean %t {window = [3, 3], strides = [2, 2], padding = [1, 1]} : tensor<2x36x10x8xf32> -> tensor<2x36x5x4xf32>
  %r = hpvm.tensor.relu %p : tensor<2x36x5x4xf32>
  hpvm.return %r : tensor<2x36x5x4xf32>
}
// ALWAYS-LABEL: hpvm.leaf @flattened(
// ALWAYS-NOT: hpvm.tensor_launch
// ALWAYS-SAME: {
hpvm.leaf @flattened(%f: tensor<64x40xf32>, %m: tensor<40x70xf32>) -> (tensor<4480xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %y = hpvm.tensor.mul %f, %m : (tensor<64x40xf32>, tensor<40x70xf32>) -> tensor<64x70xf32>
  %flat = tensor.collapse_shape %y [[0, 1]] : tensor<64x70xf32> into tensor<4480xf32>
  hpvm.return %flat : tensor<4480xf32>
}
// ALWAYS-LABEL: hpvm.leaf @two(
// ALWAYS-NOT: hpvm.tensor_launch
// ALWAYS-SAME: {
hpvm.leaf @two(%f: tensor<64x40xf32>, %m: tensor<40x70xf32>) -> (tensor<64x70xf32>, tensor<64x70xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %y = hpvm.tensor.mul %f, %m : (tensor<64x40xf32>, tensor<40x70xf32>) -> tensor<64x70xf32>
  %r = hpvm.tensor.relu %y : tensor<64x70xf32>
  hpvm.return %y, %r : tensor<64x70xf32>, tensor<64x70xf32>
}

// The convolution's kernel: the usual parameters, then the two slices.
// CHECK-LABEL: gpu.func @conv(
// CHECK-SAME: %[[X:[^:]+]]: memref<1x16x10x10xf32>, %[[W:[^:]+]]: memref<64x16x3x3xf32>, %[[B:[^:]+]]: memref<1x64x1x1xf32>, %[[OUT:[^:]+]]: memref<1x64x10x10xf32>, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %[[LHS:[^:]+]]: !llvm.ptr<3>, %[[RHS:[^:]+]]: !llvm.ptr<3>) kernel
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: builtin.unrealized_conversion_cast %{{.*}} to memref<16x65xf32, 3>
// CHECK: builtin.unrealized_conversion_cast %{{.*}} to memref<16x64xf32, 3>
// The depth loop: 144 terms, 16 at a time, 16 sums carried.
// CHECK: %[[C144:.*]] = arith.constant 144 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C144]] step %{{.*}} iter_args(
// Each thread loads 4 weights (filters past the last: zero) ...
// CHECK: scf.if
// CHECK: memref.load %[[W]]
// CHECK: memref.store %{{.*}} : memref<16x65xf32, 3>
// ... and 4 window elements of the image (padding: zero).
// CHECK: memref.load %[[X]]
// CHECK: memref.store %{{.*}} : memref<16x64xf32, 3>
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK-COUNT-16: arith.addf
// CHECK: scf.yield
// CHECK: gpu.barrier
// The epilogue: bias, relu, the store, per element of the thread.
// CHECK: scf.if
// CHECK: memref.load %[[B]]
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: memref.store %{{.*}}, %[[OUT]]
// CHECK-NOT: gpu.func
// CHECK: gpu.return

// The pooled kernel: the slices and the tile's values; after the depth loop
// every tap's value goes to work-group memory (16 per thread), then a
// barrier, then each thread folds the 2 x 2 windows of its pooled pixels
// (64 rows x 16 pixels over 256 threads: 4 each) from there and stores them.
// CHECK-LABEL: gpu.func @pooled(
// CHECK-SAME: %[[POUT:[^:]+]]: memref<1x64x5x5xf32>, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: !llvm.ptr<3>, %{{[^:]+}}: !llvm.ptr<3>, %{{[^:]+}}: !llvm.ptr<3>) kernel
// CHECK: %[[STAGED:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<64x65xf32, 3>
// CHECK-COUNT-16: memref.store %{{.*}}, %[[STAGED]]
// CHECK: gpu.barrier
// CHECK-COUNT-4: memref.store %{{.*}}, %[[POUT]]
// CHECK-NOT: gpu.func
// CHECK: gpu.return

// PTX: .maxntid 256, 1, 1
// PTX: bar.sync

// The host: 256 threads per work-group, 2 work-groups, the slices as
// work-group memory parameters (kind 2) of 4160 and 4096 bytes.
// HOST-LABEL: func.func @run(
// HOST-DAG: llvm.mlir.constant(512 : i64)
// HOST-DAG: llvm.mlir.constant(256 : i64)
// HOST-DAG: llvm.mlir.constant(4160 : i64)
// HOST-DAG: llvm.mlir.constant(4096 : i64)
// HOST: llvm.call @hpvm_rt_kernel_run(
func.func @run(%x: memref<1x16x10x10xf32>, %w: memref<64x16x3x3xf32>, %b: memref<1x64x1x1xf32>, %o: memref<1x64x10x10xf32>) {
  %tx = bufferization.to_tensor %x restrict : memref<1x16x10x10xf32> to tensor<1x16x10x10xf32>
  %tw = bufferization.to_tensor %w restrict : memref<64x16x3x3xf32> to tensor<64x16x3x3xf32>
  %tb = bufferization.to_tensor %b restrict : memref<1x64x1x1xf32> to tensor<1x64x1x1xf32>
  %g = hpvm.launch @net(%tx, %tw, %tb) : (tensor<1x16x10x10xf32>, tensor<64x16x3x3xf32>, tensor<1x64x1x1xf32>) -> !hpvm.graph
  %r = hpvm.wait %g : tensor<1x64x10x10xf32>
  bufferization.materialize_in_destination %r in restrict writable %o : (tensor<1x64x10x10xf32>, memref<1x64x10x10xf32>) -> ()
  return
}

hpvm.internal @net(%x: tensor<1x16x10x10xf32>, %w: tensor<64x16x3x3xf32>, %b: tensor<1x64x1x1xf32>) -> (tensor<1x64x10x10xf32>) {
  %l = hpvm.create_node @conv : !hpvm.node
  hpvm.bind_in %x -> %l[0] : tensor<1x16x10x10xf32>
  hpvm.bind_in %w -> %l[1] : tensor<64x16x3x3xf32>
  hpvm.bind_in %b -> %l[2] : tensor<1x64x1x1xf32>
  hpvm.bind_out %l[0] -> 0
}
