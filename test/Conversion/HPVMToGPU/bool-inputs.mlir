// Boolean inputs (C's bool parameters are i1 in LLVM IR): OpenCL kernels
// take no bool, so the kernel takes a byte and truncates it where it starts,
// and the host passes the boolean zero-extended to a byte.
// RUN: hpvm-opt %s --convert-hpvm-to-gpu | FileCheck %s
// RUN: rm -rf %t && mkdir %t && hpvm-opt %s --convert-hpvm-to-gpu --hpvm-embed-kernels="devices=opencl,cuda cubins= dump-dir=%t" -o /dev/null
// RUN: spirv-val --target-env opencl2.1 %t/hpvm_kernels.spv
// RUN: hpvm-opt %s --convert-hpvm-to-gpu --hpvm-embed-kernels="devices=opencl" --convert-hpvm-to-cpu | FileCheck %s --check-prefix=HOST

// CHECK-LABEL: hpvm.leaf @negate
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@negate
// CHECK: gpu.func @negate(%{{.*}}: memref<?xf32>, %[[BYTE:.*]]: i8, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64) kernel
// CHECK-NEXT: %[[FLAG:.*]] = arith.trunci %[[BYTE]] : i8 to i1
// CHECK: arith.select %[[FLAG]]
hpvm.leaf @negate(%m: memref<?xf32>, %flag: i1) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %i = hpvm.instance_id x : index
  %v = memref.load %m[%i] : memref<?xf32>
  %n = arith.negf %v : f32
  %r = arith.select %flag, %n, %v : f32
  memref.store %r, %m[%i] : memref<?xf32>
  hpvm.return
}

// The value parameter: one byte, the boolean zero-extended.
// HOST: %[[WIDE:.*]] = llvm.zext %{{.*}} : i1 to i8
// HOST: llvm.store %[[WIDE]], %{{.*}} : i8, !llvm.ptr
// HOST: llvm.call @hpvm_rt_kernel_run
hpvm.internal @root(%m: memref<?xf32>, %n: index, %flag: i1) {
  %l = hpvm.create_node @negate [%n] : !hpvm.node
  hpvm.bind_in %m -> %l[0] : memref<?xf32>
  hpvm.bind_in %flag -> %l[1] : i1
}
func.func @run(%m: memref<?xf32>, %n: index, %flag: i1) {
  %g = hpvm.launch @root(%m, %n, %flag) : (memref<?xf32>, index, i1) -> !hpvm.graph
  hpvm.wait %g
  return
}
