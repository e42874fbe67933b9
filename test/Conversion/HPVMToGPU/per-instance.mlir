// Values per instance between replicated siblings (one_to_one edges) on
// kernels: a port that carries one value per instance becomes a pointer to
// the array of them (element x + nx * (y + ny * z), as the CPU backend lays
// them out); the producer's every instance stores its element, the consumer
// loads its own where the leaf starts. The leaf records the masks (inputs,
// outputs) so that the host passes the arrays only to a kernel built for them.
// An output that is an input passed on, the same in every instance (here the
// buffer %x, bound from the parent), is one value, not an array, on both ends.
// RUN: hpvm-opt %s --convert-hpvm-to-gpu | FileCheck %s
// RUN: rm -rf %t && mkdir %t && hpvm-opt %s --convert-hpvm-to-gpu --hpvm-embed-kernels="devices=opencl,cuda dump-dir=%t" -o /dev/null
// RUN: spirv-val --target-env opencl2.1 %t/hpvm_kernels.spv
// RUN: hpvm-opt %s --convert-hpvm-to-gpu --hpvm-embed-kernels="devices=opencl" --convert-hpvm-to-cpu | FileCheck %s --check-prefix=HOST

// CHECK-LABEL: hpvm.leaf @measure
// CHECK-SAME: hpvm.kernel_per_instance = array<i64: 0, 3>
// CHECK-LABEL: hpvm.leaf @combine
// CHECK-SAME: hpvm.kernel_per_instance = array<i64: 3, 0>

// The producer: after the outputs struct, one array per output per instance.
// CHECK-LABEL: gpu.func @measure(
// CHECK-SAME: %[[X:.*]]: !llvm.ptr, %{{.*}}: i64, %[[NX:.*]]: i64, %[[NY:.*]]: i64, %{{.*}}: i64, %[[OUTS:.*]]: !llvm.ptr, %[[VALUES:.*]]: !llvm.ptr, %[[INDICES:.*]]: !llvm.ptr) kernel
// CHECK: %[[LINEAR:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[V:.*]] = llvm.load
// CHECK: %[[VE:.*]] = llvm.getelementptr %[[VALUES]][%[[LINEAR]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.store %[[V]], %[[VE]] : f32, !llvm.ptr
// CHECK: %[[IE:.*]] = llvm.getelementptr %[[INDICES]][%[[LINEAR]]] : (!llvm.ptr, i64) -> !llvm.ptr, i64
// CHECK-NEXT: llvm.store %{{.*}}, %[[IE]] : i64, !llvm.ptr
// CHECK: scf.if
// CHECK: gpu.return

// The consumer: its inputs per instance are the arrays.
// CHECK-LABEL: gpu.func @combine(
// CHECK-SAME: %[[VALUES:.*]]: !llvm.ptr, %[[INDICES:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64) kernel
// CHECK: %[[LINEAR:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK-NEXT: %[[VE:.*]] = llvm.getelementptr %[[VALUES]][%[[LINEAR]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: %[[V:.*]] = llvm.load %[[VE]] : !llvm.ptr -> f32
// CHECK-NEXT: %[[IE:.*]] = llvm.getelementptr %[[INDICES]][%[[LINEAR]]] : (!llvm.ptr, i64) -> !llvm.ptr, i64
// CHECK-NEXT: %[[I64:.*]] = llvm.load %[[IE]] : !llvm.ptr -> i64
// CHECK-NEXT: arith.index_cast %[[I64]] : i64 to index
// CHECK: arith.addf %[[V]]

// The host allocates the producer's arrays before the launch and passes them
// to the consumer's kernel (or to whichever CPU version runs).
// Two arrays: the passed-on pointer is none.
// HOST-COUNT-2: llvm.call @malloc
// HOST-NOT: llvm.call @malloc
// HOST: llvm.call @hpvm_rt_kernel_run
// HOST: llvm.call @hpvm_rt_kernel_run
// HOST: llvm.call @free
// HOST: llvm.call @free
hpvm.leaf @measure(%x: !llvm.ptr, %bytes: i64) -> (f32, index, !llvm.ptr) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %i = hpvm.instance_id x : index
  %i64 = arith.index_cast %i : index to i64
  %p = llvm.getelementptr %x[%i64] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %v = llvm.load %p : !llvm.ptr -> f32
  hpvm.return %v, %i, %x : f32, index, !llvm.ptr
}
hpvm.leaf @combine(%v: f32, %k: index, %out: !llvm.ptr, %bytes: i64, %x: !llvm.ptr) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %i = hpvm.instance_id x : index
  %i64 = arith.index_cast %i : index to i64
  %k64 = arith.index_cast %k : index to i64
  %kf = arith.sitofp %k64 : i64 to f32
  %s = arith.addf %v, %kf : f32
  %p = llvm.getelementptr %out[%i64] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %s, %p : f32, !llvm.ptr
  hpvm.return
}
hpvm.internal @root(%x: !llvm.ptr, %bytes: i64, %out: !llvm.ptr, %obytes: i64, %n: index) {
  %m = hpvm.create_node @measure [%n] : !hpvm.node
  %c = hpvm.create_node @combine [%n] : !hpvm.node
  hpvm.bind_in %x -> %m[0] : !llvm.ptr
  hpvm.bind_in %bytes -> %m[1] : i64
  hpvm.edge %m[0] -> %c[0] one_to_one
  hpvm.edge %m[1] -> %c[1] one_to_one
  hpvm.bind_in %out -> %c[2] : !llvm.ptr
  hpvm.bind_in %obytes -> %c[3] : i64
  hpvm.edge %m[2] -> %c[4] one_to_one
}
