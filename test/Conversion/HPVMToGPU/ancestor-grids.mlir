// Grid queries about levels above the kernel's own (above the threads of a
// leaf kernel, above the work-groups of a tile kernel) become i64 parameters
// after the inputs (and a leaf kernel's extents), sorted by level, dimension
// and kind; the host reads them from the frames of the instances that run
// the launch.
// RUN: hpvm-opt %s --convert-hpvm-to-gpu | FileCheck %s
// RUN: rm -rf %t && mkdir %t && hpvm-opt %s --convert-hpvm-to-gpu --hpvm-embed-kernels="devices=opencl,cuda dump-dir=%t" -o /dev/null
// RUN: spirv-val --target-env opencl2.1 %t/hpvm_kernels.spv
// RUN: hpvm-opt %s --convert-hpvm-to-gpu --hpvm-embed-kernels="devices=opencl" --convert-hpvm-to-cpu | FileCheck %s --check-prefix=HOST

// A leaf kernel reading its parent's instance id and extent along x.
// CHECK-LABEL: hpvm.leaf @row
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@row
hpvm.leaf @row(%m: memref<?xindex>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %i = hpvm.instance_id x : index
  %p = hpvm.instance_id x level 1 : index
  %n = hpvm.num_instances x level 1 : index
  %w = hpvm.num_instances x : index
  %b = arith.muli %p, %w : index
  %g = arith.addi %b, %i : index
  memref.store %n, %m[%g] : memref<?xindex>
  hpvm.return
}
hpvm.leaf @other() {
  hpvm.return
}
// Two replicated children: no tile, so @row is a kernel of its own.
hpvm.internal @rows(%m: memref<?xindex>) {
  %c8 = arith.constant 8 : index
  %r = hpvm.create_node @row [%c8] : !hpvm.node
  hpvm.bind_in %m -> %r[0] : memref<?xindex>
  %o = hpvm.create_node @other [%c8] : !hpvm.node
}

// A tile kernel whose leaf reads its grandparent's id along y (level 2).
// CHECK-LABEL: hpvm.internal @tiles
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@tiles
hpvm.leaf @lane(%m: memref<?xindex>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %i = hpvm.instance_id x : index
  %s = hpvm.instance_id y level 2 : index
  memref.store %s, %m[%i] : memref<?xindex>
  hpvm.return
}
hpvm.internal @tiles(%m: memref<?xindex>) {
  %c16 = arith.constant 16 : index
  %l = hpvm.create_node @lane [%c16] : !hpvm.node
  hpvm.bind_in %m -> %l[0] : memref<?xindex>
}
hpvm.internal @slabs(%m: memref<?xindex>, %n: index) {
  %t = hpvm.create_node @tiles [%n] : !hpvm.node
  hpvm.bind_in %m -> %t[0] : memref<?xindex>
}

hpvm.internal @root(%m: memref<?xindex>, %n: index) {
  %r = hpvm.create_node @rows [%n] : !hpvm.node
  hpvm.bind_in %m -> %r[0] : memref<?xindex>
  %s = hpvm.create_node @slabs [%n, %n] : !hpvm.node
  hpvm.bind_in %m -> %s[0] : memref<?xindex>
  hpvm.bind_in %n -> %s[1] : index
}
func.func @run(%m: memref<?xindex>, %n: index) {
  %g = hpvm.launch @root(%m, %n) : (memref<?xindex>, index) -> !hpvm.graph
  hpvm.wait %g
  return
}

// CHECK-LABEL: gpu.func @tiles
// CHECK-SAME: (%{{.*}}: memref<?xindex>, %[[SLAB_Y:.*]]: i64) kernel
// CHECK: %[[S:.*]] = arith.index_cast %[[SLAB_Y]] : i64 to index
// CHECK: memref.store %[[S]]

// The leaf kernel: (memref fields, 3 extents, parent extent x, parent id x):
// the number of instances sorts before the id.
// CHECK-LABEL: gpu.func @row
// CHECK-SAME: (%{{.*}}: memref<?xindex>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %[[PEXT:.*]]: i64, %[[PID:.*]]: i64) kernel
// CHECK-DAG: %[[P:.*]] = arith.index_cast %[[PID]] : i64 to index
// CHECK-DAG: %[[N:.*]] = arith.index_cast %[[PEXT]] : i64 to index
// CHECK: arith.muli %[[P]],
// CHECK: memref.store %[[N]],

// Host: the tile kernel's value comes from the frame of the @slabs instance
// that launches it (a frame is { i64 ids[3], i64 extents[3], ptr parent }:
// word 1 is id y), the leaf kernel's from the frame of @rows' instance
// (extent x, word 3, then id x, the frame's first word), after the leaf
// kernel's extents: 6 and 10 parameters.
// HOST-LABEL: func.func private @__hpvm_internal_slabs
// HOST: llvm.alloca %{{.*}} x !llvm.array<6 x struct<(i32, i32, i64, ptr, ptr)>>
// HOST: llvm.getelementptr %{{.*}}[1] : (!llvm.ptr) -> !llvm.ptr, i64
// HOST: llvm.call @hpvm_rt_kernel_run
// HOST: llvm.alloca %{{.*}} x !llvm.array<10 x struct<(i32, i32, i64, ptr, ptr)>>
// HOST: llvm.getelementptr %[[ROWSFRAME:[0-9]+]][3] : (!llvm.ptr) -> !llvm.ptr, i64
// HOST: llvm.load %[[ROWSFRAME]] : !llvm.ptr -> i64
// HOST: llvm.call @hpvm_rt_kernel_run
