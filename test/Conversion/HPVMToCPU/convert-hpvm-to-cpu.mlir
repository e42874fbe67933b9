// convert-hpvm-to-cpu: leaves become instance functions, internal nodes run
// functions, replicated children runtime parallel-fors, host ops runtime calls.
// RUN: hpvm-opt %s --convert-hpvm-to-cpu | FileCheck %s
// The whole pipeline reaches the llvm dialect with no casts left.
// RUN: hpvm-opt %s --hpvm-lower-to-llvm-pipeline | FileCheck %s --check-prefix=LLVM
// LLVM-NOT: unrealized_conversion_cast
// LLVM-NOT: {{^ *(%[^ ]+ = )?"?hpvm\.}}
// LLVM: llvm.func @_mlir_ciface_host

// CHECK-NOT: hpvm.leaf
// CHECK-NOT: hpvm.internal

hpvm.leaf @scale(%data: memref<?x?xf32>) -> (f32) {
  %x = hpvm.instance_id x : index
  %y = hpvm.instance_id y : index
  %ty = hpvm.instance_id x level 1 : index
  %nx = hpvm.num_instances x : index
  %v = memref.load %data[%y, %x] : memref<?x?xf32>
  %t = arith.index_cast %ty : index to i64
  %n = arith.index_cast %nx : index to i64
  %s = arith.addi %t, %n : i64
  %f = arith.sitofp %s : i64 to f32
  %r = arith.addf %v, %f : f32
  memref.store %r, %data[%y, %x] : memref<?x?xf32>
  hpvm.return %r : f32
}

hpvm.leaf @sink(%v: f32) -> (f32) {
  hpvm.return %v : f32
}

// CHECK-LABEL: func.func private @__hpvm_internal_tile(
// CHECK-SAME: %[[TDATA:[^:]*]]: memref<?x?xf32>, %[[TFRAME:[^:]*]]: !llvm.ptr) -> f32
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// Each CPU run of a leaf starts with hpvm_rt_trace_node and ends with
// hpvm_rt_trace_node_done (HPVM_PROFILE times what lies between).
// CHECK: %[[SCALE:.*]] = llvm.mlir.addressof @__hpvm_node_scale
// CHECK: llvm.call @hpvm_rt_trace_node(%[[SCALE]], %{{.*}})
// The replicated leaf runs through the runtime with its range function...
// CHECK: %[[BODY:.*]] = llvm.mlir.addressof @__hpvm_range_scale_2
// CHECK: %[[STATUS:.*]] = llvm.call @hpvm_rt_parallel_for(%{{.*}}, %{{.*}}, %[[BODY]], %{{.*}})
// CHECK: llvm.call @hpvm_rt_check_at(%[[STATUS]], %{{.*}})
// CHECK-NEXT: %[[SCALED:.*]] = llvm.mlir.addressof @__hpvm_node_scale
// CHECK-NEXT: llvm.call @hpvm_rt_trace_node_done(%[[SCALED]])
// ...then its output, published by instance (0, 0), feeds the single-instance
// sink directly, inlined here (its only caller): the sink returns its input.
// CHECK: %[[OUT:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK: %[[SINK:.*]] = llvm.mlir.addressof @__hpvm_node_sink
// CHECK: llvm.call @hpvm_rt_trace_node(%[[SINK]], %{{.*}})
// CHECK-NOT: call @__hpvm_leaf_sink
// CHECK: %[[SUNK:.*]] = llvm.mlir.addressof @__hpvm_node_sink
// CHECK-NEXT: llvm.call @hpvm_rt_trace_node_done(%[[SUNK]])
// CHECK: return %[[OUT]] : f32
hpvm.internal @tile(%data: memref<?x?xf32>) -> (f32) {
  %c4 = arith.constant 4 : index
  %s = hpvm.create_node @scale [%c4, %c4] : !hpvm.node
  %k = hpvm.create_node @sink : !hpvm.node
  hpvm.bind_in %data -> %s[0] : memref<?x?xf32>
  hpvm.edge %s[0] -> %k[0] all_to_all
  hpvm.bind_out %k[0] -> 0
}

// CHECK-LABEL: func.func private @__hpvm_internal_root(
// CHECK: llvm.mlir.addressof @__hpvm_range_tile_1
// CHECK: llvm.call @hpvm_rt_parallel_for
hpvm.internal @root(%data: memref<?x?xf32>, %tiles: index) -> (f32) {
  %t = hpvm.create_node @tile [%tiles] : !hpvm.node
  hpvm.bind_in %data -> %t[0] : memref<?x?xf32>
  hpvm.bind_out %t[0] -> 0
}

// Host code: the tracker and the launch become runtime calls; wait reads the
// outputs from the launch block and frees it.
// CHECK-LABEL: func.func @host(
// CHECK-SAME: attributes {llvm.emit_c_interface}
// CHECK: llvm.call @hpvm_rt_track(
// CHECK: %[[BLOCK:.*]] = llvm.call @malloc(
// CHECK: %[[ENTRY:.*]] = llvm.mlir.addressof @__hpvm_entry_root
// CHECK: llvm.call @hpvm_rt_launch(%[[ENTRY]], %[[BLOCK]], %{{.*}})
// CHECK: %[[HANDLE:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call @hpvm_rt_wait(%[[HANDLE]])
// CHECK: %[[RESULT:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK: llvm.call @free(%[[BLOCK]])
// CHECK: llvm.call @hpvm_rt_request_host(
// CHECK: llvm.call @hpvm_rt_untrack(
// CHECK: return %[[RESULT]] : f32
func.func @host(%data: memref<?x?xf32>, %tiles: index) -> f32 {
  hpvm.track %data : memref<?x?xf32>
  %g = hpvm.launch @root(%data, %tiles) : (memref<?x?xf32>, index) -> !hpvm.graph
  %r = hpvm.wait %g : f32
  hpvm.request %data : memref<?x?xf32>
  hpvm.untrack %data : memref<?x?xf32>
  return %r : f32
}

// The range function of a 2-D leaf: two loops, y outside x, over the box,
// and the leaf's body inlined in them (its only caller): level-0 queries are
// the loops' variables and the box's extents, level 1 reads the parent frame
// (the context's field after the inputs).
// CHECK-LABEL: llvm.func internal @__hpvm_range_scale_2(
// CHECK-SAME: %[[CTX:[^:]*]]: !llvm.ptr, %[[BOX:[^:]*]]: !llvm.ptr)
// CHECK: %[[DESC:.*]] = llvm.load %[[CTX]] : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK: %[[DATA:.*]] = builtin.unrealized_conversion_cast %[[DESC]]
// CHECK: %[[FRAMEADDR:.*]] = llvm.getelementptr %[[CTX]][0, 1]
// CHECK: %[[FRAME:.*]] = llvm.load %[[FRAMEADDR]] : !llvm.ptr -> !llvm.ptr
// The box is { i64 begin[3], end[3], extent[3], ... }: x's extent is word 6.
// CHECK: %[[NXADDR:.*]] = llvm.getelementptr %[[BOX]][6] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK: %[[NX64:.*]] = llvm.load %[[NXADDR]] : !llvm.ptr -> i64
// CHECK: %[[NX:.*]] = arith.index_cast %[[NX64]] : i64 to index
// CHECK: scf.for %[[RY:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[RX:.*]] = %{{.*}} to %{{.*}} step
// The parent's x id is the frame's first word.
// CHECK: %[[TY:.*]] = llvm.load %[[FRAME]] : !llvm.ptr -> i64
// CHECK: memref.load %[[DATA]][%[[RY]], %[[RX]]]
// CHECK: arith.index_cast %[[NX]]
// CHECK-NOT: func.call
// CHECK: scf.if
// CHECK: llvm.return

// The entry of a launched root: one instance without ancestors.
// CHECK-LABEL: llvm.func internal @__hpvm_entry_root(%{{.*}}: !llvm.ptr) -> !llvm.ptr
// CHECK: call @__hpvm_internal_root(
// CHECK: llvm.return
