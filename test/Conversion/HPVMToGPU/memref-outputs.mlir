// Memref outputs of kernels: stages of a pipeline hand on the buffer they
// wrote (examples/edge_detection.mlir). A device cannot hand a descriptor
// back, but such an output is one of the kernel's memref inputs: the kernel
// stores the index of that input where the output goes, and the host turns
// the index back into the memref it passed.
// RUN: hpvm-opt %s --convert-hpvm-to-gpu | FileCheck %s
// RUN: rm -rf %t && mkdir %t && hpvm-opt %s --convert-hpvm-to-gpu --hpvm-embed-kernels="devices=opencl,cuda dump-dir=%t" -o /dev/null
// RUN: spirv-val --target-env opencl2.1 %t/hpvm_kernels.spv
// RUN: hpvm-opt %s --convert-hpvm-to-gpu --hpvm-embed-kernels="devices=opencl" --convert-hpvm-to-cpu | FileCheck %s --check-prefix=HOST

// The output struct holds the code (i64) where the memref would be; the
// first instance stores 2, the index of %out among the inputs, beside the
// number it also returns.
// CHECK-LABEL: hpvm.leaf @scale
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@scale
// CHECK-LABEL: hpvm.leaf @either
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@either
// CHECK-LABEL: hpvm.internal @pass_tile
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@pass_tile
hpvm.leaf @scale(%in: memref<?xf32> {hpvm.access = #hpvm.access<in>}, %factor: f32,
                 %out: memref<?xf32> {hpvm.access = #hpvm.access<out>})
    -> (memref<?xf32>, f32) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %i = hpvm.instance_id x : index
  %v = memref.load %in[%i] : memref<?xf32>
  %w = arith.mulf %v, %factor : f32
  memref.store %w, %out[%i] : memref<?xf32>
  hpvm.return %out, %factor : memref<?xf32>, f32
}

// Returns in two blocks hand on different inputs: each stores its own code.
hpvm.leaf @either(%a: memref<?xf32>, %b: memref<?xf32>, %first: i32)
    -> (memref<?xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %zero = arith.constant 0 : i32
  %is = arith.cmpi ne, %first, %zero : i32
  cf.cond_br %is, ^a, ^b
^a:
  hpvm.return %a : memref<?xf32>
^b:
  hpvm.return %b : memref<?xf32>
}

// A tile kernel hands on the tile's input its leaf's output is bound from:
// code 1 (%m of @pass_tile), not the leaf's own index 0.
// CHECK-LABEL: gpu.func @pass_tile(
// CHECK-SAME: %[[OUTS:[^:]*]]: !llvm.ptr) kernel
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK: scf.if
// CHECK-NEXT: %[[F:.*]] = llvm.getelementptr %[[OUTS]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i64)>
// CHECK-NEXT: llvm.store %[[ONE]], %[[F]] : i64, !llvm.ptr
// CHECK-LABEL: gpu.func @scale(
// CHECK-SAME: %[[OUTS:[^:]*]]: !llvm.ptr) kernel
// CHECK: %[[TWO:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK: scf.if
// CHECK-NEXT: %[[F0:.*]] = llvm.getelementptr %[[OUTS]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i64, f32)>
// CHECK-NEXT: llvm.store %[[TWO]], %[[F0]] : i64, !llvm.ptr
// CHECK-NEXT: %[[F1:.*]] = llvm.getelementptr %[[OUTS]][0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i64, f32)>
// CHECK-NEXT: llvm.store %{{.*}}, %[[F1]] : f32, !llvm.ptr
// CHECK-LABEL: gpu.func @either(
// CHECK: %[[A:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK: scf.if
// CHECK: llvm.store %[[A]]
// CHECK: %[[B:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK: scf.if
// CHECK: llvm.store %[[B]]
hpvm.leaf @pass_lane(%m: memref<?xf32>) -> (memref<?xf32>)
    attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %i = hpvm.instance_id x : index
  %t = hpvm.instance_id x level 1 : index
  %v = arith.index_cast %t : index to i64
  %f = arith.sitofp %v : i64 to f32
  %c16 = arith.constant 16 : index
  %base = arith.muli %t, %c16 : index
  %j = arith.addi %base, %i : index
  memref.store %f, %m[%j] : memref<?xf32>
  hpvm.return %m : memref<?xf32>
}
hpvm.internal @pass_tile(%n: index, %m: memref<?xf32>) -> (memref<?xf32>) {
  %c16 = arith.constant 16 : index
  %l = hpvm.create_node @pass_lane [%c16] : !hpvm.node
  hpvm.bind_in %m -> %l[0] : memref<?xf32>
  hpvm.bind_out %l[0] -> 0
}

// The host reads the code where the memref would be and picks the input it
// names among the inputs of the output's type (here @scale's: %in, index 0,
// unless the code is 2).
// HOST: llvm.call @hpvm_rt_kernel_run
// HOST: %[[CODE:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// HOST: %[[TWO:.*]] = llvm.mlir.constant(2 : i64) : i64
// HOST-NEXT: %[[IS:.*]] = llvm.icmp "eq" %[[CODE]], %[[TWO]] : i64
// HOST-NEXT: llvm.select %[[IS]], %{{.*}}, %{{.*}} : i1, !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
hpvm.internal @root(%in: memref<?xf32>, %out: memref<?xf32>, %n: index, %factor: f32,
                    %first: i32)
    -> (memref<?xf32>, f32, memref<?xf32>, memref<?xf32>) {
  %s = hpvm.create_node @scale [%n] : !hpvm.node
  hpvm.bind_in %in -> %s[0] : memref<?xf32>
  hpvm.bind_in %factor -> %s[1] : f32
  hpvm.bind_in %out -> %s[2] : memref<?xf32>
  hpvm.bind_out %s[0] -> 0
  hpvm.bind_out %s[1] -> 1
  %e = hpvm.create_node @either [%n] : !hpvm.node
  hpvm.bind_in %in -> %e[0] : memref<?xf32>
  hpvm.bind_in %out -> %e[1] : memref<?xf32>
  hpvm.bind_in %first -> %e[2] : i32
  hpvm.bind_out %e[0] -> 2
  %t = hpvm.create_node @pass_tile [%n] : !hpvm.node
  hpvm.bind_in %n -> %t[0] : index
  hpvm.bind_in %out -> %t[1] : memref<?xf32>
  hpvm.bind_out %t[0] -> 3
}
