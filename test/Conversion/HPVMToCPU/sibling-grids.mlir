// RUN: hpvm-opt --convert-hpvm-to-cpu %s | FileCheck %s
// RUN: hpvm-opt --convert-hpvm-to-cpu %s | grep -c 'adding a node to the task graph\\00' | FileCheck %s --check-prefix=ONE

// Replicated leaves that are independent siblings become grid nodes of the
// task graph: their range functions go to hpvm_rt_graph_add_grid with the
// node's name and where it is, no task function each. Siblings that read the
// same values share one range context and equal grids one extents array; a
// sibling with an output gets a context of its own (its outputs' slot); one
// with a barrier still runs through a task function (its phases).

hpvm.leaf @first(%a: memref<?xf32>, %n: index) {
  %i = hpvm.instance_id x : index
  %v = memref.load %a[%i] : memref<?xf32>
  memref.store %v, %a[%i] : memref<?xf32>
  hpvm.return
}

hpvm.leaf @second(%a: memref<?xf32>, %n: index) {
  %i = hpvm.instance_id x : index
  %v = memref.load %a[%i] : memref<?xf32>
  %w = arith.addf %v, %v : f32
  memref.store %w, %a[%i] : memref<?xf32>
  hpvm.return
}

hpvm.leaf @sum(%a: memref<?xf32>, %n: index) -> (f32) {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<?xf32>
  hpvm.return %v : f32
}

hpvm.leaf @phased(%a: memref<?xf32>, %n: index) {
  %i = hpvm.instance_id x : index
  %v = memref.load %a[%i] : memref<?xf32>
  hpvm.barrier
  memref.store %v, %a[%i] : memref<?xf32>
  hpvm.return
}

hpvm.internal @root(%a: memref<?xf32>, %n: index) -> (f32) {
  %f = hpvm.create_node @first [%n] : !hpvm.node
  %s = hpvm.create_node @second [%n] : !hpvm.node
  %t = hpvm.create_node @sum [%n] : !hpvm.node
  %p = hpvm.create_node @phased [%n] : !hpvm.node
  hpvm.bind_in %a -> %f[0] : memref<?xf32>
  hpvm.bind_in %n -> %f[1] : index
  hpvm.bind_in %a -> %s[0] : memref<?xf32>
  hpvm.bind_in %n -> %s[1] : index
  hpvm.bind_in %a -> %t[0] : memref<?xf32>
  hpvm.bind_in %n -> %t[1] : index
  hpvm.bind_in %a -> %p[0] : memref<?xf32>
  hpvm.bind_in %n -> %p[1] : index
  hpvm.bind_out %t[0] -> 0
}

// One global per message text, whoever needs it; the message of a failing
// parallel-for names the leaf where it is defined.
// ONE: {{^}}1{{$}}
// CHECK-DAG: llvm.mlir.global internal constant @{{.*}}("{{.*}}sibling-grids.mlir:{{[0-9]+}}:1: running the instances of @first\00")
// CHECK-DAG: llvm.mlir.global internal constant @__hpvm_node_first("first\00")
// CHECK-DAG: llvm.mlir.global internal constant @{{.*}}("{{.*}}: adding a node to the task graph\00")

// CHECK-LABEL: func.func private @__hpvm_internal_root
// CHECK-DAG: %[[SUM_OUT:.*]] = llvm.alloca {{.*}} x !llvm.struct<(f32)>
// CHECK-DAG: %[[EXTENTS:.*]] = llvm.alloca {{.*}} x !llvm.array<1 x i64>
// CHECK: %[[GRAPH:.*]] = llvm.load
// CHECK: %[[FIRST:.*]] = llvm.mlir.addressof @__hpvm_range_first_1
// CHECK: %[[FIRST_NAME:.*]] = llvm.mlir.addressof @__hpvm_node_first
// CHECK: llvm.call @hpvm_rt_graph_add_grid(%[[GRAPH]], %[[FIRST]], %[[FIRST_NAME]], %{{.*}}, %{{.*}}, %[[EXTENTS]], %[[SHARED:[0-9]+]], %{{.*}})
// CHECK: %[[SECOND:.*]] = llvm.mlir.addressof @__hpvm_range_second_1
// CHECK: llvm.call @hpvm_rt_graph_add_grid(%[[GRAPH]], %[[SECOND]], %{{.*}}, %{{.*}}, %{{.*}}, %[[EXTENTS]], %[[SHARED]], %{{.*}})
// CHECK: %[[SLOT:.*]] = llvm.getelementptr %[[OWN:[0-9]+]][0, 3]
// CHECK-NEXT: llvm.store %[[SUM_OUT]], %[[SLOT]] : !llvm.ptr, !llvm.ptr
// CHECK: %[[SUM:.*]] = llvm.mlir.addressof @__hpvm_range_sum_1
// CHECK: llvm.call @hpvm_rt_graph_add_grid(%[[GRAPH]], %[[SUM]], %{{.*}}, %{{.*}}, %{{.*}}, %[[EXTENTS]], %[[OWN]], %{{.*}})
// CHECK: llvm.mlir.addressof @__hpvm_task_phased_1
// CHECK: llvm.call @hpvm_rt_graph_add_node
// CHECK: llvm.call @hpvm_rt_graph_run(%[[GRAPH]])
// CHECK: %[[RESULT:.*]] = llvm.load %[[SUM_OUT]] : !llvm.ptr -> f32
// CHECK: return %[[RESULT]]

// Only the leaf with phases has a task function.
// CHECK-NOT: @__hpvm_task_first
// CHECK-NOT: @__hpvm_task_second
// CHECK-NOT: @__hpvm_task_sum
// CHECK: llvm.func internal @__hpvm_task_phased_1(
// CHECK-NOT: @__hpvm_task_
