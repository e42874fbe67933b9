// A grid of tiles whose only child is the tile's leaf runs as one
// parallel-for over the combined space (tiles x tile per dimension), not one
// runtime call per tile; the leaf sees its tile through the frame.
// RUN: hpvm-opt %s --convert-hpvm-to-cpu | FileCheck %s
// RUN: hpvm-opt %s --convert-hpvm-to-cpu=collapse-grids=false | FileCheck %s --check-prefix=NESTED
// RUN: hpvm-opt %s --convert-hpvm-to-cpu=collapse-grids=false | not grep __hpvm_collapsed

hpvm.leaf @point(%a: memref<?x?xf32>) {
  %lx = hpvm.instance_id x : index
  %ly = hpvm.instance_id y : index
  %gx = hpvm.instance_id x level 1 : index
  %gy = hpvm.instance_id y level 1 : index
  %nx = hpvm.num_instances x : index
  %ny = hpvm.num_instances y : index
  %i0 = arith.muli %gx, %nx : index
  %i = arith.addi %i0, %lx : index
  %j0 = arith.muli %gy, %ny : index
  %j = arith.addi %j0, %ly : index
  %v = memref.load %a[%j, %i] : memref<?x?xf32>
  %w = arith.addf %v, %v : f32
  memref.store %w, %a[%j, %i] : memref<?x?xf32>
  hpvm.return
}

// The tile extents come from the tile node's inputs.
hpvm.internal @tile(%a: memref<?x?xf32>, %bx: index, %by: index) {
  %two = arith.constant 2 : index
  %bx2 = arith.muli %bx, %two : index
  %n = hpvm.create_node @point [%bx2, %by] : !hpvm.node
  hpvm.bind_in %a -> %n[0] : memref<?x?xf32>
}

hpvm.internal @root(%a: memref<?x?xf32>, %bx: index, %by: index,
                    %gx: index, %gy: index) {
  %t = hpvm.create_node @tile [%gx, %gy] : !hpvm.node
  hpvm.bind_in %a -> %t[0] : memref<?x?xf32>
  hpvm.bind_in %bx -> %t[1] : index
  hpvm.bind_in %by -> %t[2] : index
}

// CHECK-LABEL: func.func private @__hpvm_internal_root
// The collapsed grid is one CPU run of the leaf: traced (and timed) once.
// CHECK:         llvm.call @hpvm_rt_trace_node(
// CHECK:         %[[TWO:.*]] = arith.constant 2 : index
// CHECK:         %[[BX2:.*]] = arith.muli %{{.*}}, %[[TWO]] : index
// CHECK:         %[[TX:.*]] = arith.index_cast %[[BX2]] : index to i64
// CHECK:         %[[EX:.*]] = llvm.mul %{{.*}}, %[[TX]] : i64
// CHECK:         llvm.store %[[EX]]
// CHECK:         %[[BODY:.*]] = llvm.mlir.addressof @__hpvm_collapsed_tile_point
// CHECK:         llvm.call @hpvm_rt_parallel_for(%{{.*}}, %{{.*}}, %[[BODY]], %{{.*}})
// CHECK-NOT:     hpvm_rt_parallel_for
// CHECK:         %[[POINT:.*]] = llvm.mlir.addressof @__hpvm_node_point
// CHECK-NEXT:    llvm.call @hpvm_rt_trace_node_done(%[[POINT]])
// CHECK-NOT:     hpvm_rt_parallel_for
// CHECK:         return
// The tile node's run function is never called: no second parallel-for.
// CHECK-LABEL: llvm.func internal @__hpvm_collapsed_tile_point
// CHECK:         scf.for %[[CZ:.*]] =
// CHECK:           arith.divui %[[CZ]]
// CHECK:           scf.for %[[CY:.*]] =
// CHECK:           %[[GY:.*]] = arith.divui %[[CY]], %[[TY:.*]] : index
// CHECK:           %[[LY:.*]] = arith.subi %[[CY]], %{{.*}} : index
// CHECK:           llvm.store
// CHECK:           %[[FIRST:.*]] = arith.divui %{{.*}}, %[[TXI:.*]] : index
// CHECK:           %[[LAST:.*]] = arith.ceildivui %{{.*}}, %[[TXI]] : index
// CHECK:           scf.for %[[GX:.*]] = %[[FIRST]] to %[[LAST]]
// CHECK:             arith.maxsi
// CHECK:             arith.minsi
// CHECK:             scf.for %[[LX:.*]] =
// CHECK:               func.call @__hpvm_leaf_point(%{{.*}}, %[[LX]], %[[LY]], %{{.*}}, %[[TXI]], %[[TY]], %{{.*}}, %{{.*}})
// CHECK-NOT:   llvm.func internal @__hpvm_range_tile

// NESTED-DAG: llvm.func internal @__hpvm_range_tile_2
// NESTED-DAG: llvm.func internal @__hpvm_range_point_2
