// hpvm-assign-targets refusals: nodes without an available target, internal
// nodes whose children cannot follow them, and bad options.
// RUN: hpvm-opt %s --split-input-file --hpvm-assign-targets="available=cpu,gpu" --verify-diagnostics
// RUN: not hpvm-opt %s --split-input-file --hpvm-assign-targets="available=cpu,fpga" 2>&1 | FileCheck %s --check-prefix=BACKEND
// RUN: not hpvm-opt %s --split-input-file --hpvm-assign-targets="policy=fastest" 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: not hpvm-opt %s --split-input-file --hpvm-assign-targets="fallback=fpga" 2>&1 | FileCheck %s --check-prefix=FALLBACK
// RUN: not hpvm-opt %s --split-input-file --hpvm-assign-targets="fallback=gpu" 2>&1 | FileCheck %s --check-prefix=UNAVAILABLE
// BACKEND: error: hpvm-assign-targets: unknown backend 'fpga' in 'available'; expected one of cpu, vector, gpu, spirv (or opencl), tensor
// POLICY: error: hpvm-assign-targets: unknown policy 'fastest'; expected one of first, prefer-gpu, prefer-cpu, all
// FALLBACK: error: hpvm-assign-targets: unknown fallback target 'fpga'; expected one of cpu, vector, gpu, spirv (or opencl), tensor
// UNAVAILABLE: error: hpvm-assign-targets: fallback target 'gpu' is not an available backend (available: [cpu])

// A leaf none of whose hints is built in.
// expected-error @+1 {{node @conv: none of its target hints [tensor, spirv] is an available backend (available: [cpu, gpu]) (a 'fallback' target would be used instead)}}
hpvm.leaf @conv() attributes {hpvm.targets = [#hpvm.target<tensor>, #hpvm.target<spirv>]} {
  hpvm.return
}

// -----

// An internal node that may only be GPU code, with a child that cannot.
hpvm.leaf @host_only() {
  hpvm.return
}
// expected-error @+1 {{node @kernel: none of its available targets [gpu] can be followed by all its children: @host_only can be compiled only for [cpu] (a 'fallback' target would be used instead)}}
hpvm.internal @kernel() attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %h = hpvm.create_node @host_only : !hpvm.node
}

// -----

// The failure of a child is reported once, at the child.
// expected-error @+1 {{node @tensor_leaf: none of its target hints [tensor] is an available backend}}
hpvm.leaf @tensor_leaf() attributes {hpvm.targets = [#hpvm.target<tensor>]} {
  hpvm.return
}
hpvm.internal @root() {
  %t = hpvm.create_node @tensor_leaf : !hpvm.node
}
