// The kernel extraction: each GPU-hinted node of a kernel shape becomes a
// gpu.func in gpu.module @hpvm_kernels and names it in `hpvm.kernel`.
// RUN: hpvm-opt %s --convert-hpvm-to-gpu | FileCheck %s
// Every kernel here compiles for both devices; the SPIR-V validates.
// RUN: rm -rf %t && mkdir %t && hpvm-opt %s --convert-hpvm-to-gpu --hpvm-embed-kernels="devices=opencl,cuda dump-dir=%t" -o /dev/null
// RUN: spirv-val --target-env opencl2.1 %t/hpvm_kernels.spv

// A leaf over a grid: one thread per instance, guarded against the grid's
// extents (partial work-groups); ids are block_id * block_dim + thread_id.
// CHECK-LABEL: hpvm.leaf @saxpy
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@saxpy
hpvm.leaf @saxpy(%x: memref<?xf32> {hpvm.access = #hpvm.access<in>},
                 %y: memref<?xf32> {hpvm.access = #hpvm.access<inout>}, %a: f32)
    attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %i = hpvm.instance_id x : index
  %n = hpvm.num_instances x : index
  %last = arith.subi %n, %i : index
  %u = memref.load %x[%i] : memref<?xf32>
  %v = memref.load %y[%last] : memref<?xf32>
  %p = arith.mulf %a, %u : f32
  %s = arith.addf %p, %v : f32
  memref.store %s, %y[%i] : memref<?xf32>
  hpvm.return
}

// A tile: an internal node whose only child is a replicated leaf bound to its
// inputs. Work-groups are its instances, threads the leaf's; the barrier is a
// work-group barrier.
// CHECK-LABEL: hpvm.internal @tiles
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@tiles
hpvm.leaf @tile_leaf(%m: memref<?x?xf32>, %k: index) {
  %tx = hpvm.instance_id x : index
  %ty = hpvm.instance_id y : index
  %bx = hpvm.instance_id x level 1 : index
  %gy = hpvm.num_instances y level 1 : index
  %w = hpvm.num_instances x : index
  %c = arith.muli %bx, %w : index
  %col = arith.addi %c, %tx : index
  %v = memref.load %m[%ty, %col] : memref<?x?xf32>
  hpvm.barrier
  %s = arith.index_cast %gy : index to i64
  %f = arith.sitofp %s : i64 to f32
  %r = arith.addf %v, %f : f32
  memref.store %r, %m[%ty, %col] : memref<?x?xf32>
  hpvm.return
}
hpvm.internal @tiles(%m: memref<?x?xf32>, %k: index)
    attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]} {
  %c16 = arith.constant 16 : index
  %t = hpvm.create_node @tile_leaf [%c16, %k] : !hpvm.node
  hpvm.bind_in %m -> %t[0] : memref<?x?xf32>
  hpvm.bind_in %k -> %t[1] : index
}

// An imported HPVM-C leaf: pointers, branches and a helper, copied along.
// CHECK-LABEL: hpvm.leaf @clamp_leaf
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@clamp_leaf
llvm.func internal @clamp(%v: f32) -> f32 {
  %zero = llvm.mlir.constant(0.0 : f32) : f32
  %lt = llvm.fcmp "olt" %v, %zero : f32
  %r = llvm.select %lt, %zero, %v : i1, f32
  llvm.return %r : f32
}
hpvm.leaf @clamp_leaf(%p: !llvm.ptr {hpvm.access = #hpvm.access<inout>}, %bytes: i64)
    attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %i = hpvm.instance_id x : index
  %ii = arith.index_cast %i : index to i64
  %a = llvm.getelementptr inbounds %p[%ii] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %v = llvm.load %a : !llvm.ptr -> f32
  %zero = llvm.mlir.constant(0 : i64) : i64
  %two = llvm.mlir.constant(2 : i64) : i64
  %even = llvm.urem %ii, %two : i64
  %isEven = llvm.icmp "eq" %even, %zero : i64
  llvm.cond_br %isEven, ^clamp, ^done
^clamp:
  %c = llvm.call @clamp(%v) : (f32) -> f32
  llvm.store %c, %a : f32, !llvm.ptr
  llvm.br ^done
^done:
  hpvm.return
}

// A launched root runs once: its child's grid is no work-group, so the root
// is no tile kernel; its GPU-hinted leaf is a kernel of its own.
// CHECK-LABEL: hpvm.leaf @fill
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@fill
// CHECK-LABEL: hpvm.internal @launched
// CHECK-NOT: hpvm.kernel
// CHECK-SAME: {
hpvm.leaf @fill(%m: memref<?xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %i = hpvm.instance_id x : index
  %z = arith.constant 0.0 : f32
  memref.store %z, %m[%i] : memref<?xf32>
  hpvm.return
}
hpvm.internal @launched(%m: memref<?xf32>, %n: index)
    attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %f = hpvm.create_node @fill [%n] : !hpvm.node
  hpvm.bind_in %m -> %f[0] : memref<?xf32>
}
func.func @host(%m: memref<?xf32>, %n: index) {
  %g = hpvm.launch @launched(%m, %n) : (memref<?xf32>, index) -> !hpvm.graph
  hpvm.wait %g
  return
}

// A constant table travels with the kernels.
// CHECK-LABEL: hpvm.leaf @lookup
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@lookup
llvm.mlir.global internal constant @weights(dense<[0.5, 2.0]> : tensor<2xf32>) : !llvm.array<2 x f32>
hpvm.leaf @lookup(%p: !llvm.ptr) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %i = hpvm.instance_id x : index
  %ii = arith.index_cast %i : index to i64
  %table = llvm.mlir.addressof @weights : !llvm.ptr
  %w = llvm.getelementptr inbounds %table[%ii] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %v = llvm.load %w : !llvm.ptr -> f32
  %a = llvm.getelementptr inbounds %p[%ii] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %v, %a : f32, !llvm.ptr
  hpvm.return
}

// Outputs (equal in every instance): the first thread stores them through
// a pointer to { i64, f32 } after the extents.
// CHECK-LABEL: hpvm.leaf @sizes
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@sizes
hpvm.leaf @sizes(%m: memref<?xf32>, %f: f32) -> (index, f32)
    attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %i = hpvm.instance_id x : index
  memref.store %f, %m[%i] : memref<?xf32>
  %c0 = arith.constant 0 : index
  %n = memref.dim %m, %c0 : memref<?xf32>
  hpvm.return %n, %f : index, f32
}

// A tile whose leaf's output is bound out: the first thread of the first
// work-group stores it.
// CHECK-LABEL: hpvm.internal @sized_tiles
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@sized_tiles
hpvm.leaf @sized_lane(%m: memref<?xf32>) -> (index) {
  %i = hpvm.instance_id x : index
  %t = hpvm.instance_id x level 1 : index
  %w = hpvm.num_instances x : index
  %b = arith.muli %t, %w : index
  %g = arith.addi %b, %i : index
  %z = arith.constant 0.0 : f32
  memref.store %z, %m[%g] : memref<?xf32>
  hpvm.return %w : index
}
hpvm.internal @sized_tiles(%m: memref<?xf32>) -> (index)
    attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %c32 = arith.constant 32 : index
  %l = hpvm.create_node @sized_lane [%c32] : !hpvm.node
  hpvm.bind_in %m -> %l[0] : memref<?xf32>
  hpvm.bind_out %l[0] -> 0
}

// C math functions become math ops (float and double versions).
// CHECK-LABEL: hpvm.leaf @norms
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@norms
llvm.func @sqrtf(f32) -> f32
llvm.func @pow(f64, f64) -> f64
hpvm.leaf @norms(%p: !llvm.ptr, %q: !llvm.ptr) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %v = llvm.load %p : !llvm.ptr -> f32
  %r = llvm.call @sqrtf(%v) : (f32) -> f32
  llvm.store %r, %p : f32, !llvm.ptr
  %d = llvm.load %q : !llvm.ptr -> f64
  %e = llvm.call @pow(%d, %d) : (f64, f64) -> f64
  llvm.store %e, %q : f64, !llvm.ptr
  hpvm.return
}

// CPU-only nodes are left alone.
// CHECK-LABEL: hpvm.leaf @cpu_only
// CHECK-NOT: hpvm.kernel
hpvm.leaf @cpu_only(%m: memref<?xf32>) {
  hpvm.return
}

// CHECK-LABEL: gpu.module @hpvm_kernels
// The helper and the table, private to the kernel module.
// CHECK-DAG: llvm.func internal @clamp
// CHECK-DAG: llvm.mlir.global internal constant @weights

// No extents and no guard: the launch is exactly tiles x tile.
// CHECK-LABEL: gpu.func @tiles
// CHECK-SAME: (%[[M:.*]]: memref<?x?xf32>, %{{.*}}: index) kernel
// CHECK: %[[TX:.*]] = gpu.thread_id x
// CHECK: %[[BX:.*]] = gpu.block_id x
// CHECK: %[[BDX:.*]] = gpu.block_dim x
// CHECK: %[[TY:.*]] = gpu.thread_id y
// CHECK: %[[GDY:.*]] = gpu.grid_dim y
// CHECK: cf.br
// CHECK: arith.muli %[[BX]], %[[BDX]]
// CHECK: memref.load %[[M]][%[[TY]],
// CHECK: gpu.barrier
// CHECK: arith.index_cast %[[GDY]]
// CHECK: gpu.return

// CHECK-LABEL: gpu.func @sized_tiles
// CHECK-SAME: (%{{.*}}: memref<?xf32>, %[[TOUT:.*]]: !llvm.ptr) kernel
// Both levels' ids are 0 in the thread that stores.
// CHECK-COUNT-6: arith.cmpi eq
// CHECK: scf.if
// CHECK: llvm.getelementptr %[[TOUT]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i64)>

// CHECK-LABEL: gpu.func @saxpy
// CHECK-SAME: (%[[X:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?xf32>, %[[A:.*]]: f32, %[[NX:.*]]: i64, %[[NY:.*]]: i64, %[[NZ:.*]]: i64) kernel
// CHECK: %[[T:.*]] = gpu.thread_id x
// CHECK: %[[B:.*]] = gpu.block_id x
// CHECK: %[[D:.*]] = gpu.block_dim x
// CHECK: %[[FIRST:.*]] = arith.muli %[[B]], %[[D]]
// CHECK: %[[ID:.*]] = arith.addi %[[FIRST]], %[[T]]
// CHECK: %[[EXTENT:.*]] = arith.index_cast %[[NX]] : i64 to index
// CHECK: arith.cmpi ult, %[[ID]], %[[EXTENT]]
// CHECK: gpu.thread_id y
// CHECK: gpu.thread_id z
// CHECK: cf.cond_br %{{.*}}, ^[[BODY:.*]], ^[[EXIT:.*]]
// CHECK: ^[[BODY]]:
// CHECK: arith.subi %[[EXTENT]], %[[ID]]
// CHECK: memref.load %[[X]][%[[ID]]]
// CHECK: memref.store %{{.*}}, %[[Y]][%[[ID]]]
// CHECK: gpu.return
// CHECK: ^[[EXIT]]:
// CHECK-NEXT: gpu.return

// CHECK-LABEL: gpu.func @clamp_leaf
// CHECK-SAME: (%[[P:.*]]: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64) kernel
// CHECK: llvm.getelementptr inbounds %[[P]]
// CHECK: llvm.cond_br
// CHECK: llvm.call @clamp
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @fill
// CHECK-LABEL: gpu.func @lookup
// CHECK: llvm.mlir.addressof @weights
// CHECK-LABEL: gpu.func @sizes
// CHECK-SAME: %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %[[OUT:.*]]: !llvm.ptr) kernel
// CHECK: arith.cmpi eq
// CHECK: arith.cmpi eq
// CHECK: arith.cmpi eq
// CHECK-NEXT: %[[FIRST:.*]] = arith.andi
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK: %[[N:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[F0:.*]] = llvm.getelementptr %[[OUT]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i64, f32)>
// CHECK: llvm.store %[[N]], %[[F0]]
// CHECK: %[[F1:.*]] = llvm.getelementptr %[[OUT]][0, 1]
// CHECK: llvm.store %{{.*}}, %[[F1]] : f32, !llvm.ptr
// CHECK: }
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @norms
// CHECK: math.sqrt %{{.*}} : f32
// CHECK: math.powf %{{.*}}, %{{.*}} : f64
// CHECK-NOT: llvm.call
// CHECK: gpu.return
// CHECK-NOT: hpvm.
