// hpvm-translate --hpvm-to-dot: internal nodes are clusters with in/out ports,
// leaves are boxes with their grid and targets, edge kinds are styled.
// RUN: hpvm-translate --hpvm-to-dot %s | FileCheck %s
// RUN: hpvm-translate --hpvm-to-dot %s | FileCheck %s --check-prefix=ROOTS

hpvm.leaf @producer(%a: memref<?xf32>) -> (f32) attributes {hpvm.targets = [#hpvm.target<gpu>, #hpvm.target<cpu>]} {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<?xf32>
  hpvm.return %v : f32
}
hpvm.leaf @consumer(%x: f32) -> (f32) {
  hpvm.return %x : f32
}
hpvm.internal @inner(%x: f32) -> (f32) {
  %c8 = arith.constant 8 : index
  %l = hpvm.create_node @consumer [%c8, %c8] : !hpvm.node
  hpvm.bind_in %x -> %l[0] : f32
  hpvm.bind_out %l[0] -> 0
}
hpvm.internal @root(%a: memref<?xf32>, %n: index) -> (f32) {
  %p = hpvm.create_node @producer [%n] : !hpvm.node
  %q = hpvm.create_node @consumer [%n] : !hpvm.node
  %i = hpvm.create_node @inner : !hpvm.node
  hpvm.bind_in %a -> %p[0] : memref<?xf32>
  hpvm.edge %p[0] -> %q[0] one_to_one
  hpvm.edge %q[0] -> %i[0] all_to_all streaming
  hpvm.bind_out %i[0] -> 0
}
// A second, unlaunched graph is drawn too.
hpvm.leaf @alone() {
  hpvm.return
}

// CHECK-LABEL: digraph hpvm {
// CHECK: subgraph [[ROOT:cluster_[0-9]+]] {
// CHECK-NEXT: label="@root (cpu)"
// CHECK-NEXT: [[ROOT_IN:in[0-9]+]] [shape=invhouse
// CHECK-NEXT: [[ROOT_OUT:out[0-9]+]] [shape=house
// CHECK-NEXT: [[P:leaf[0-9]+]] [{{.*}}label="@producer [?]\ngpu,cpu"];
// CHECK-NEXT: [[Q:leaf[0-9]+]] [{{.*}}label="@consumer [?]\ncpu"];
// CHECK-NEXT: subgraph [[INNER:cluster_[0-9]+]] {
// CHECK-NEXT: label="@inner (cpu)"
// CHECK-NEXT: [[INNER_IN:in[0-9]+]] [shape=invhouse
// CHECK-NEXT: [[INNER_OUT:out[0-9]+]] [shape=house
// CHECK-NEXT: [[L:leaf[0-9]+]] [{{.*}}label="@consumer [8 x 8]\ncpu"];
// CHECK-NEXT: [[INNER_IN]] -> [[L]] [style=dotted, label="0->0"];
// CHECK-NEXT: [[L]] -> [[INNER_OUT]] [style=dotted, label="0->0"];
// CHECK-NEXT: }
// CHECK-NEXT: [[P]] -> [[Q]] [label="0->0"];
// CHECK-NEXT: [[Q]] -> [[INNER_IN]] [label="0->0", style="bold,dashed", color=blue];
// CHECK-NEXT: [[ROOT_IN]] -> [[P]] [style=dotted, label="0->0"];
// CHECK-NEXT: [[INNER_OUT]] -> [[ROOT_OUT]] [style=dotted, label="0->0"];
// CHECK-NEXT: }

// Roots are the nodes nobody instantiates: @root and @alone, each drawn once.
// ROOTS-COUNT-2: subgraph cluster_
// ROOTS-NOT: subgraph cluster_
// ROOTS: label="@alone\ncpu"
// ROOTS-NOT: label="@producer
