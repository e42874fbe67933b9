// The DFG analysis (DataflowGraph, NodeHierarchy): topological order with
// program-order ties, levels of independent siblings, paths, hierarchy depth
// and the uses of each node at its own and its parent's level.
// RUN: hpvm-opt %s --hpvm-test-print-dfg -o /dev/null | FileCheck %s

hpvm.leaf @src() -> (f32, f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f, %f : f32, f32
}
hpvm.leaf @work(%x: f32) -> (f32) {
  hpvm.return %x : f32
}
hpvm.leaf @join(%a: f32, %b: f32) -> (f32) {
  hpvm.return %a : f32
}
hpvm.leaf @alone() {
  hpvm.return
}

// A diamond src -> {work, work} -> join, plus an independent sibling listed
// first in program order but placed by the order where it is ready.
hpvm.internal @diamond(%n: index) -> (f32) {
  %j = hpvm.create_node @join : !hpvm.node
  %s = hpvm.create_node @src : !hpvm.node
  %a = hpvm.create_node @alone [%n] : !hpvm.node
  %l = hpvm.create_node @work : !hpvm.node
  %r = hpvm.create_node @work : !hpvm.node
  hpvm.edge %s[0] -> %l[0] all_to_all
  hpvm.edge %s[1] -> %r[0] all_to_all
  hpvm.edge %l[0] -> %j[0] all_to_all
  hpvm.edge %r[0] -> %j[1] all_to_all
  hpvm.bind_out %j[0] -> 0
}

// Two levels above @work: @diamond used as a 2-D tile and launched once.
hpvm.internal @outer(%n: index) -> (f32) {
  %c2 = arith.constant 2 : index
  %d = hpvm.create_node @diamond [%c2, %c2] : !hpvm.node
  hpvm.bind_in %n -> %d[0] : index
  hpvm.bind_out %d[0] -> 0
}

func.func @host(%n: index) -> (f32, f32) {
  %g = hpvm.launch @outer(%n) : (index) -> !hpvm.graph
  %r = hpvm.wait %g : f32
  %h = hpvm.launch @diamond(%n) : (index) -> !hpvm.graph
  %q = hpvm.wait %h : f32
  return %r, %q : f32, f32
}

// CHECK: node @src: leaf, depth 1, uses: create_node(rank 0) in @diamond, parents' uses: hpvm.create_node(rank 2) hpvm.launch(rank 0)
// CHECK: node @work: leaf, depth 1, uses: create_node(rank 0) in @diamond create_node(rank 0) in @diamond, parents' uses: hpvm.create_node(rank 2) hpvm.launch(rank 0)
// CHECK: node @alone: leaf, depth 1, uses: create_node(rank 1) in @diamond,
// CHECK: node @diamond: internal, depth 2, uses: create_node(rank 2) in @outer launch, parents' uses: hpvm.launch(rank 0)
// CHECK-NEXT: order: @src @alone @work (child #3) @work (child #4) @join
// CHECK-NEXT: levels: @join=2 @src=0 @alone=0 @work (child #3)=1 @work (child #4)=1
// CHECK-NEXT: paths: @src->@join @src->@work (child #3) @src->@work (child #4) @work (child #3)->@join @work (child #4)->@join
// CHECK: node @outer: internal, depth 3, uses: launch, parents' uses:{{$}}
// CHECK-NEXT: order: @diamond
// CHECK-NEXT: levels: @diamond=0
// CHECK-NEXT: paths:{{$}}
