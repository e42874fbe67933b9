// Canonicalization of hpvm graphs: children whose outputs nobody uses and that
// have no side effects disappear with the binds and edges into them; extent
// arithmetic folds to constants; everything with an effect stays.
// RUN: hpvm-opt %s --canonicalize --split-input-file | FileCheck %s

// The unused pure leaf and the unused pure consumer of an edge are gone; the
// extent 4 * 2 folds to 8.
// CHECK-LABEL: hpvm.internal @root(
// CHECK-NEXT: %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT: %[[KEEP:.*]] = hpvm.create_node @writes [%[[C8]]] : !hpvm.node
// CHECK-NEXT: hpvm.bind_in %{{.*}} -> %[[KEEP]][0] : memref<?xf32>
// CHECK-NEXT: }
hpvm.leaf @pure(%a: memref<?xf32>) -> (f32) {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<?xf32>
  %d = arith.addf %v, %v : f32
  hpvm.return %d : f32
}
hpvm.leaf @pure_consumer(%x: f32) {
  hpvm.return
}
hpvm.leaf @writes(%a: memref<?xf32>) {
  %i = hpvm.instance_id x : index
  %one = arith.constant 1.0 : f32
  memref.store %one, %a[%i] : memref<?xf32>
  hpvm.return
}
hpvm.internal @root(%a: memref<?xf32>) {
  %c4 = arith.constant 4 : index
  %c2 = arith.constant 2 : index
  %n = arith.muli %c4, %c2 : index
  %p = hpvm.create_node @pure [%n] : !hpvm.node
  %q = hpvm.create_node @pure_consumer [%n] : !hpvm.node
  %w = hpvm.create_node @writes [%n] : !hpvm.node
  hpvm.bind_in %a -> %p[0] : memref<?xf32>
  hpvm.edge %p[0] -> %q[0] one_to_one
  hpvm.bind_in %a -> %w[0] : memref<?xf32>
}

// -----

// Kept: an output that is bound out, an output read by an edge, atomics,
// barriers, calls, and effects inside an internal node.
// CHECK-LABEL: hpvm.internal @kept(
// CHECK-DAG: hpvm.create_node @pure
// CHECK-DAG: hpvm.create_node @reader
// CHECK-DAG: hpvm.create_node @atomic
// CHECK-DAG: hpvm.create_node @sync
// CHECK-DAG: hpvm.create_node @calls
// CHECK-DAG: hpvm.create_node @nested
hpvm.leaf @pure(%x: f32) -> (f32) {
  hpvm.return %x : f32
}
hpvm.leaf @reader(%x: f32) -> (f32) {
  hpvm.return %x : f32
}
hpvm.leaf @atomic(%m: memref<4xi32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %old = memref.atomic_rmw addi %one, %m[%c0] : (i32, memref<4xi32>) -> i32
  hpvm.return
}
hpvm.leaf @sync() {
  hpvm.barrier
  hpvm.return
}
func.func private @log() -> ()
hpvm.leaf @calls() {
  func.call @log() : () -> ()
  hpvm.return
}
hpvm.leaf @store(%m: memref<4xi32>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0 : i32
  memref.store %z, %m[%c0] : memref<4xi32>
  hpvm.return
}
hpvm.internal @nested(%m: memref<4xi32>) {
  %s = hpvm.create_node @store : !hpvm.node
  hpvm.bind_in %m -> %s[0] : memref<4xi32>
}
hpvm.internal @kept(%x: f32, %m: memref<4xi32>) -> (f32) {
  %p = hpvm.create_node @pure : !hpvm.node
  %r = hpvm.create_node @reader : !hpvm.node
  %a = hpvm.create_node @atomic : !hpvm.node
  %s = hpvm.create_node @sync : !hpvm.node
  %c = hpvm.create_node @calls : !hpvm.node
  %n = hpvm.create_node @nested : !hpvm.node
  hpvm.bind_in %x -> %p[0] : f32
  hpvm.edge %p[0] -> %r[0] all_to_all
  hpvm.bind_out %r[0] -> 0
  hpvm.bind_in %m -> %a[0] : memref<4xi32>
  hpvm.bind_in %m -> %n[0] : memref<4xi32>
}
