// hpvm-fuse-nodes: applied cases (independent siblings, one_to_one edges that
// become SSA values) and a refusal, with its reason, for every legality rule.
// RUN: hpvm-opt %s --split-input-file --hpvm-fuse-nodes="pairs=producer:consumer" --verify-diagnostics | FileCheck %s
// RUN: hpvm-opt %s --split-input-file --hpvm-fuse-nodes="greedy=true" | FileCheck %s --check-prefix=GREEDY
// RUN: not hpvm-opt %s --split-input-file --hpvm-fuse-nodes="pairs=producer" 2>&1 | FileCheck %s --check-prefix=BADPAIR
// BADPAIR: error: hpvm-fuse-nodes: expected pairs as producer:consumer, found 'producer'

// A one_to_one edge becomes an SSA value; other inputs, outputs and binds move
// to the fused node.
// CHECK-LABEL: hpvm.leaf @producer_consumer(
// CHECK-SAME: %[[IN:[^:]*]]: memref<?xf32>, %[[OUT:[^:]*]]: memref<?xf32>) -> (f32, i32)
// CHECK: %[[I:.*]] = hpvm.instance_id x : index
// CHECK: %[[V:.*]] = memref.load %[[IN]][%[[I]]]
// CHECK: %[[D:.*]] = arith.addf %[[V]], %[[V]] : f32
// CHECK: %[[J:.*]] = hpvm.instance_id x : index
// CHECK: memref.store %[[D]], %[[OUT]][%[[J]]]
// CHECK: %[[C:.*]] = arith.constant 7 : i32
// CHECK: hpvm.return %[[D]], %[[C]] : f32, i32
// CHECK-LABEL: hpvm.internal @root(
// CHECK: %[[F:.*]] = hpvm.create_node @producer_consumer [%{{.*}}] : !hpvm.node
// CHECK-NEXT: hpvm.bind_in %{{.*}} -> %[[F]][0] : memref<?xf32>
// CHECK-NEXT: hpvm.bind_in %{{.*}} -> %[[F]][1] : memref<?xf32>
// CHECK-NEXT: hpvm.bind_out %[[F]][1] -> 0
// CHECK-NEXT: }
// GREEDY-LABEL: hpvm.internal @root(
// GREEDY: hpvm.create_node @producer_consumer
hpvm.leaf @producer(%in: memref<?xf32>) -> (f32) {
  %i = hpvm.instance_id x : index
  %v = memref.load %in[%i] : memref<?xf32>
  %d = arith.addf %v, %v : f32
  hpvm.return %d : f32
}
hpvm.leaf @consumer(%v: f32, %out: memref<?xf32>) -> (i32) {
  %i = hpvm.instance_id x : index
  memref.store %v, %out[%i] : memref<?xf32>
  %c = arith.constant 7 : i32
  hpvm.return %c : i32
}
hpvm.internal @root(%in: memref<?xf32>, %out: memref<?xf32>, %n: index) -> (i32) {
  %p = hpvm.create_node @producer [%n] : !hpvm.node
  %c = hpvm.create_node @consumer [%n] : !hpvm.node
  hpvm.bind_in %in -> %p[0] : memref<?xf32>
  hpvm.edge %p[0] -> %c[0] one_to_one
  hpvm.bind_in %out -> %c[1] : memref<?xf32>
  hpvm.bind_out %c[0] -> 0
}

// -----

// Independent siblings with equal constant extents are fused.
// CHECK-LABEL: hpvm.internal @independent(
// CHECK: %[[F:.*]] = hpvm.create_node @producer_consumer [%{{.*}}, %{{.*}}] : !hpvm.node
// CHECK-NEXT: hpvm.bind_in %{{.*}} -> %[[F]][0] : memref<?xf32>
// CHECK-NEXT: hpvm.bind_in %{{.*}} -> %[[F]][1] : memref<?xf32>
// CHECK-NEXT: }
hpvm.leaf @producer(%a: memref<?xf32>) {
  hpvm.return
}
hpvm.leaf @consumer(%b: memref<?xf32>) {
  hpvm.return
}
hpvm.internal @independent(%a: memref<?xf32>, %b: memref<?xf32>) {
  %c4 = arith.constant 4 : index
  %four = arith.constant 4 : index
  %p = hpvm.create_node @producer [%c4, %c4] : !hpvm.node
  %c = hpvm.create_node @consumer [%four, %four] : !hpvm.node
  hpvm.bind_in %a -> %p[0] : memref<?xf32>
  hpvm.bind_in %b -> %c[0] : memref<?xf32>
}

// -----

// Refused: all_to_all edge.
// GREEDY-LABEL: hpvm.internal @root(
// GREEDY: hpvm.create_node @producer [
// GREEDY: hpvm.create_node @consumer [
hpvm.leaf @producer() -> (f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f : f32
}
hpvm.leaf @consumer(%v: f32) {
  hpvm.return
}
hpvm.internal @root(%n: index) {
  // expected-remark @+1 {{not fused with @consumer: an all_to_all edge joins them (every consumer instance needs every producer instance)}}
  %p = hpvm.create_node @producer [%n] : !hpvm.node
  %c = hpvm.create_node @consumer [%n] : !hpvm.node
  hpvm.edge %p[0] -> %c[0] all_to_all
}

// -----

// Refused: the grids may differ.
hpvm.leaf @producer() {
  hpvm.return
}
hpvm.leaf @consumer() {
  hpvm.return
}
hpvm.internal @root(%n: index, %m: index) {
  // expected-remark @+1 {{not fused with @consumer: the grids may differ in dimension 0}}
  %p = hpvm.create_node @producer [%n] : !hpvm.node
  %c = hpvm.create_node @consumer [%m] : !hpvm.node
}

// -----

// Refused: different ranks.
hpvm.leaf @producer() {
  hpvm.return
}
hpvm.leaf @consumer() {
  hpvm.return
}
hpvm.internal @root(%n: index) {
  // expected-remark @+1 {{not fused with @consumer: the grids have different ranks}}
  %p = hpvm.create_node @producer [%n] : !hpvm.node
  %c = hpvm.create_node @consumer [%n, %n] : !hpvm.node
}

// -----

// Refused: different targets.
hpvm.leaf @producer() attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  hpvm.return
}
hpvm.leaf @consumer() {
  hpvm.return
}
hpvm.internal @root(%n: index) {
  // expected-remark @+1 {{not fused with @consumer: the nodes have different targets}}
  %p = hpvm.create_node @producer [%n] : !hpvm.node
  %c = hpvm.create_node @consumer [%n] : !hpvm.node
}

// -----

// Refused: a path through a third node (fusing would close a cycle).
hpvm.leaf @producer() -> (f32, f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f, %f : f32, f32
}
hpvm.leaf @middle(%v: f32) -> (f32) {
  hpvm.return %v : f32
}
hpvm.leaf @consumer(%v: f32, %w: f32) {
  hpvm.return
}
hpvm.internal @root(%n: index) {
  // expected-remark @+1 {{not fused with @consumer: a path through another node joins them}}
  %p = hpvm.create_node @producer [%n] : !hpvm.node
  %m = hpvm.create_node @middle [%n] : !hpvm.node
  %c = hpvm.create_node @consumer [%n] : !hpvm.node
  hpvm.edge %p[0] -> %m[0] one_to_one
  hpvm.edge %m[0] -> %c[0] one_to_one
  hpvm.edge %p[1] -> %c[1] one_to_one
}

// -----

// Refused: the consumer is an internal node.
hpvm.leaf @producer() {
  hpvm.return
}
hpvm.leaf @inner() {
  hpvm.return
}
hpvm.internal @consumer() {
  %i = hpvm.create_node @inner : !hpvm.node
}
hpvm.internal @root(%n: index) {
  // expected-remark @+1 {{not fused with @consumer: the consumer is not a leaf}}
  %p = hpvm.create_node @producer [%n] : !hpvm.node
  %c = hpvm.create_node @consumer [%n] : !hpvm.node
}

// -----

// Refused: a barrier (fusion would change which instances it waits for).
hpvm.leaf @producer() {
  hpvm.barrier
  hpvm.return
}
hpvm.leaf @consumer() {
  hpvm.return
}
hpvm.internal @root(%n: index) {
  // expected-remark @+1 {{not fused with @consumer: the producer has a barrier}}
  %p = hpvm.create_node @producer [%n] : !hpvm.node
  %c = hpvm.create_node @consumer [%n] : !hpvm.node
}

// -----

// Refused: the edge goes the other way (consumer -> producer).
hpvm.leaf @producer(%v: f32) {
  hpvm.return
}
hpvm.leaf @consumer() -> (f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f : f32
}
hpvm.internal @root(%n: index) {
  // expected-remark @+1 {{not fused with @consumer: an edge goes from the consumer back to the producer}}
  %p = hpvm.create_node @producer [%n] : !hpvm.node
  %c = hpvm.create_node @consumer [%n] : !hpvm.node
  hpvm.edge %c[0] -> %p[0] one_to_one
}

// -----

// Fan-out: the producer's output feeds the consumer (twice) and a third node;
// the joining edges become one SSA value, the third node is still fed by the
// fused node's output 0, and extents computed twice from one value are equal.
// CHECK-LABEL: hpvm.leaf @producer_consumer(
// CHECK-SAME: %[[IN:[^:]*]]: memref<?xf32>) -> (f32, f32)
// CHECK: %[[D:.*]] = arith.addf
// CHECK: %[[S:.*]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK: hpvm.return %[[D]], %[[S]] : f32, f32
// CHECK-LABEL: hpvm.internal @fan_out(
// CHECK: %[[F:.*]] = hpvm.create_node @producer_consumer [%{{.*}}] : !hpvm.node
// CHECK-NEXT: %[[U:.*]] = hpvm.create_node @user [%{{.*}}] : !hpvm.node
// CHECK-NEXT: hpvm.bind_in %{{.*}} -> %[[F]][0] : memref<?xf32>
// CHECK-NEXT: hpvm.edge %[[F]][0] -> %[[U]][0] one_to_one
// CHECK-NEXT: hpvm.bind_out %[[F]][0] -> 0
// CHECK-NEXT: hpvm.bind_out %[[F]][1] -> 1
// GREEDY-LABEL: hpvm.internal @fan_out(
// GREEDY: hpvm.create_node @producer_consumer
hpvm.leaf @producer(%in: memref<?xf32>) -> (f32) {
  %i = hpvm.instance_id x : index
  %v = memref.load %in[%i] : memref<?xf32>
  %d = arith.addf %v, %v : f32
  hpvm.return %d : f32
}
hpvm.leaf @consumer(%a: f32, %b: f32) -> (f32) {
  %s = arith.mulf %a, %b : f32
  hpvm.return %s : f32
}
hpvm.leaf @user(%a: f32) {
  hpvm.return
}
hpvm.internal @fan_out(%in: memref<?xf32>, %n: i64) -> (f32, f32) {
  %n0 = arith.index_cast %n : i64 to index
  %n1 = arith.index_cast %n : i64 to index
  %n2 = arith.index_cast %n : i64 to index
  %p = hpvm.create_node @producer [%n0] : !hpvm.node
  %c = hpvm.create_node @consumer [%n1] : !hpvm.node
  %u = hpvm.create_node @user [%n2] : !hpvm.node
  hpvm.bind_in %in -> %p[0] : memref<?xf32>
  hpvm.edge %p[0] -> %c[0] one_to_one
  hpvm.edge %p[0] -> %c[1] one_to_one
  hpvm.edge %p[0] -> %u[0] one_to_one
  hpvm.bind_out %p[0] -> 0
  hpvm.bind_out %c[0] -> 1
}

// -----

// C++ leaves (mangled names): the fused leaf is named from their demangled names,
// as the trace shows them. (pairs names the leaves' symbols; greedy fuses them too.)
// GREEDY-LABEL: hpvm.leaf @producer_consumer(
// GREEDY: hpvm.create_node @producer_consumer
hpvm.leaf @_Z8producerPf(%in: memref<?xf32>) -> (f32) {
  %i = hpvm.instance_id x : index
  %v = memref.load %in[%i] : memref<?xf32>
  %d = arith.addf %v, %v : f32
  hpvm.return %d : f32
}
hpvm.leaf @_Z8consumerfPf(%v: f32, %out: memref<?xf32>) -> (i32) {
  %i = hpvm.instance_id x : index
  memref.store %v, %out[%i] : memref<?xf32>
  %c = arith.constant 7 : i32
  hpvm.return %c : i32
}
hpvm.internal @root(%in: memref<?xf32>, %out: memref<?xf32>, %n: index) -> (i32) {
  %p = hpvm.create_node @_Z8producerPf [%n] : !hpvm.node
  %c = hpvm.create_node @_Z8consumerfPf [%n] : !hpvm.node
  hpvm.bind_in %in -> %p[0] : memref<?xf32>
  hpvm.edge %p[0] -> %c[0] one_to_one
  hpvm.bind_in %out -> %c[1] : memref<?xf32>
  hpvm.bind_out %c[0] -> 0
}

