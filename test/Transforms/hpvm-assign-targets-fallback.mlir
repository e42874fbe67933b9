// hpvm-assign-targets with a fallback: nodes without an available hint get
// the fallback target with a warning, unless an internal node's children
// cannot follow it.
// RUN: hpvm-opt %s --split-input-file --hpvm-assign-targets="fallback=cpu" --verify-diagnostics | FileCheck %s
// RUN: not hpvm-opt %s --split-input-file --hpvm-assign-targets="available=gpu,cpu fallback=gpu" 2> %t.err | FileCheck %s --check-prefix=GPU-OUT
// RUN: FileCheck %s --check-prefix=GPU < %t.err
// GPU-OUT: hpvm.leaf @conv() attributes {hpvm.targets = [#hpvm.target<gpu>]}
// GPU: warning: node @conv: none of its target hints [tensor] is an available backend (available: [gpu, cpu]); falling back to gpu
// GPU: error: node @library_graph: none of its target hints [tensor] is an available backend (available: [gpu, cpu]), and the fallback target 'gpu' cannot be followed by its child @host_only

// CHECK-LABEL: hpvm.leaf @conv() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// CHECK-LABEL: hpvm.internal @root() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// expected-warning @+1 {{node @conv: none of its target hints [tensor] is an available backend}}
hpvm.leaf @conv() attributes {hpvm.targets = [#hpvm.target<tensor>]} {
  hpvm.return
}
hpvm.internal @root() {
  %c = hpvm.create_node @conv : !hpvm.node
}

// -----

// CHECK-LABEL: hpvm.internal @library_graph() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// expected-warning @+1 {{node @library_graph: none of its target hints [tensor] is an available backend (available: [cpu]); falling back to cpu}}
hpvm.internal @library_graph() attributes {hpvm.targets = [#hpvm.target<tensor>]} {
  %h = hpvm.create_node @host_only : !hpvm.node
}
hpvm.leaf @host_only() {
  hpvm.return
}
