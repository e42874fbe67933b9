// Tiles with allocation nodes: the tile's memory becomes the work-group's.
// The kernel takes one work-group pointer (address space 3) per allocation
// after its other parameters; every thread recomputes the allocation nodes'
// outputs. OpenCL keeps the pointers as __local arguments, CUDA turns them
// into offsets in the launch's dynamic shared memory, and the host passes
// each allocation's bytes per work-group as a WORKGROUP parameter (kind 2).
// RUN: hpvm-opt %s --convert-hpvm-to-gpu | FileCheck %s
// RUN: rm -rf %t && mkdir %t && hpvm-opt %s --convert-hpvm-to-gpu --hpvm-embed-kernels="devices=opencl,cuda dump-dir=%t" -o /dev/null
// RUN: spirv-val --target-env opencl2.1 %t/hpvm_kernels.spv
// RUN: spirv-dis %t/hpvm_kernels.spv | FileCheck %s --check-prefix=SPIRV
// RUN: FileCheck %s --check-prefix=PTX < %t/hpvm_kernels.ptx
// RUN: hpvm-opt %s --convert-hpvm-to-gpu --hpvm-embed-kernels="devices=opencl" --convert-hpvm-to-cpu | FileCheck %s --check-prefix=HOST

// Memrefs: a static one and one sized by the tile's input %n. The
// allocation leaves are parts of the tile kernels, not kernels.
// CHECK-LABEL: hpvm.leaf @scratch_alloc
// CHECK-NOT: hpvm.kernel
// CHECK-SAME: {
// CHECK-LABEL: hpvm.internal @scratch_tiles
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@scratch_tiles
hpvm.leaf @scratch_alloc(%n: index) -> (memref<64xf32>, memref<?x4xi16>) {
  %s = hpvm.alloc() : memref<64xf32>
  %d = hpvm.alloc(%n) : memref<?x4xi16>
  hpvm.return %s, %d : memref<64xf32>, memref<?x4xi16>
}
hpvm.leaf @scratch_lane(%m: memref<?xf32>, %s: memref<64xf32>,
                        %d: memref<?x4xi16>)
    attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %i = hpvm.instance_id x : index
  %v = memref.load %m[%i] : memref<?xf32>
  memref.store %v, %s[%i] : memref<64xf32>
  %c0 = arith.constant 0 : index
  %h = arith.constant 7 : i16
  memref.store %h, %d[%i, %c0] : memref<?x4xi16>
  hpvm.barrier
  %w = memref.load %s[%c0] : memref<64xf32>
  memref.store %w, %m[%i] : memref<?xf32>
  hpvm.return
}
// Hinting the instances is enough: the tile is their kernel.
hpvm.internal @scratch_tiles(%m: memref<?xf32>, %n: index) {
  %c64 = arith.constant 64 : index
  %a = hpvm.create_node @scratch_alloc : !hpvm.node
  %l = hpvm.create_node @scratch_lane [%c64] : !hpvm.node
  hpvm.bind_in %n -> %a[0] : index
  hpvm.bind_in %m -> %l[0] : memref<?xf32>
  hpvm.edge %a[0] -> %l[1] all_to_all
  hpvm.edge %a[1] -> %l[2] all_to_all
}

// HPVM-C's allocation nodes: `__hpvm__malloc(bytes)` with the bytes from an
// input, passed on next to the pointer.
// CHECK-LABEL: hpvm.internal @byte_tiles
// CHECK-SAME: hpvm.kernel = @hpvm_kernels::@byte_tiles
hpvm.leaf @byte_alloc(%bytes: i64) -> (!llvm.ptr, i64) {
  %n = arith.index_cast %bytes : i64 to index
  %p = hpvm.alloc(%n) : !llvm.ptr
  hpvm.return %p, %bytes : !llvm.ptr, i64
}
hpvm.leaf @byte_lane(%out: !llvm.ptr, %s: !llvm.ptr, %bytes: i64) {
  %i = hpvm.instance_id x : index
  %j = arith.index_cast %i : index to i64
  %q = llvm.getelementptr %s[%j] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %f = llvm.mlir.constant(1.0 : f32) : f32
  llvm.store %f, %q : f32, !llvm.ptr
  hpvm.barrier
  %v = llvm.load %s : !llvm.ptr -> f32
  %r = llvm.getelementptr %out[%j] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %v, %r : f32, !llvm.ptr
  hpvm.return
}
hpvm.internal @byte_tiles(%out: !llvm.ptr, %bytes: i64)
    attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %c32 = arith.constant 32 : index
  %a = hpvm.create_node @byte_alloc : !hpvm.node
  %l = hpvm.create_node @byte_lane [%c32] : !hpvm.node
  hpvm.bind_in %bytes -> %a[0] : i64
  hpvm.bind_in %out -> %l[0] : !llvm.ptr
  hpvm.edge %a[0] -> %l[1] all_to_all
  hpvm.edge %a[1] -> %l[2] all_to_all
}

hpvm.internal @root(%m: memref<?xf32>, %n: index, %tiles: index) {
  %t = hpvm.create_node @scratch_tiles [%tiles] : !hpvm.node
  hpvm.bind_in %m -> %t[0] : memref<?xf32>
  hpvm.bind_in %n -> %t[1] : index
}
func.func @run(%m: memref<?xf32>, %n: index, %tiles: index) {
  %g = hpvm.launch @root(%m, %n, %tiles) : (memref<?xf32>, index, index) -> !hpvm.graph
  hpvm.wait %g
  return
}

// CHECK-LABEL: gpu.func @scratch_tiles
// CHECK-SAME: (%{{.*}}: memref<?xf32>, %[[N:.*]]: index, %[[S0:.*]]: !llvm.ptr<3>, %[[S1:.*]]: !llvm.ptr<3>) kernel
// The memrefs are descriptors over the work-group pointers, in address
// space 3, with row-major strides.
// CHECK: llvm.insertvalue %[[S0]]
// CHECK: %[[SCRATCH:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr<3>, ptr<3>, i64, array<1 x i64>, array<1 x i64>)> to memref<64xf32, 3>
// CHECK: llvm.insertvalue %[[S1]]
// CHECK: %[[ROWS:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK: llvm.insertvalue %[[ROWS]], %{{.*}}[3, 0]
// CHECK: %[[ROWS_BYTES:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<?x4xi16, 3>
// CHECK: memref.store %{{.*}}, %[[SCRATCH]][%{{.*}}] : memref<64xf32, 3>
// CHECK: memref.store %{{.*}}, %[[ROWS_BYTES]][%{{.*}}, %{{.*}}] : memref<?x4xi16, 3>
// CHECK: gpu.barrier

// CHECK-LABEL: gpu.func @byte_tiles
// CHECK-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: i64, %[[BS:.*]]: !llvm.ptr<3>) kernel
// CHECK: %[[BP:.*]] = llvm.addrspacecast %[[BS]] : !llvm.ptr<3> to !llvm.ptr
// CHECK: llvm.getelementptr %[[BP]]

// OpenCL: __local (Workgroup) pointer parameters.
// SPIRV: OpTypePointer Workgroup
// SPIRV: OpFunctionParameter %{{.*}}

// CUDA: one dynamic shared array; the pointers are offsets into it.
// PTX: .extern .shared .align 16 .b8 __hpvm_dynamic_shared[];
// PTX-LABEL: .visible .entry scratch_tiles(
// PTX: mov.b64 %{{.*}}, __hpvm_dynamic_shared;
// PTX: st.shared.

// The host computes the bytes per work-group from the tile's inputs
// (64 x 4 bytes, and %n x 4 x 2 bytes) and passes them after the others.
// HOST-LABEL: func.func private @__hpvm_tile_memory_scratch_tiles(
// HOST-SAME: %{{.*}}: memref<?xf32>, %[[HN:.*]]: index) -> (index, index)
// HOST: %[[C4:.*]] = arith.constant 4 : index
// HOST: %[[C64:.*]] = arith.constant 64 : index
// HOST: %[[STATIC:.*]] = arith.muli %[[C4]], %[[C64]] : index
// HOST: %[[C2:.*]] = arith.constant 2 : index
// HOST: %[[ROW:.*]] = arith.muli %[[C2]], %[[HN]] : index
// HOST: %[[FOUR:.*]] = arith.constant 4 : index
// HOST: %[[DYNAMIC:.*]] = arith.muli %[[ROW]], %[[FOUR]] : index
// HOST: return %[[STATIC]], %[[DYNAMIC]] : index, index
// HOST-LABEL: func.func private @__hpvm_internal_root
// HOST: %[[BYTES:.*]]:2 = call @__hpvm_tile_memory_scratch_tiles(
// Parameters 6 and 7 (after the memref's five fields and %n) have kind 2.
// HOST: %[[KIND:.*]] = llvm.mlir.constant(2 : i32) : i32
// HOST-NEXT: %[[SLOT:.*]] = llvm.getelementptr %{{.*}}[0, 6, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<8 x struct<(i32, i32, i64, ptr, ptr)>>
// HOST-NEXT: llvm.store %[[KIND]], %[[SLOT]]
// HOST: %[[KIND7:.*]] = llvm.mlir.constant(2 : i32) : i32
// HOST-NEXT: %[[SLOT7:.*]] = llvm.getelementptr %{{.*}}[0, 7, 0]
// HOST-NEXT: llvm.store %[[KIND7]], %[[SLOT7]]
// HOST: llvm.call @hpvm_rt_kernel_run
