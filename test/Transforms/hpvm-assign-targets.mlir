// hpvm-assign-targets: hint lists resolved against the available backends
// under every policy; internal nodes follow their children; children of
// device nodes follow their parent; several targets mean runtime dispatch.
// RUN: hpvm-opt %s --split-input-file --hpvm-assign-targets | FileCheck %s --check-prefix=CPU
// RUN: hpvm-opt %s --split-input-file --hpvm-assign-targets="available=cpu,gpu" | FileCheck %s --check-prefix=FIRST
// RUN: hpvm-opt %s --split-input-file --hpvm-assign-targets="available=cpu,gpu policy=prefer-cpu" | FileCheck %s --check-prefix=PCPU
// RUN: hpvm-opt %s --split-input-file --hpvm-assign-targets="available=cpu,gpu policy=prefer-gpu" | FileCheck %s --check-prefix=PGPU
// RUN: hpvm-opt %s --split-input-file --hpvm-assign-targets="available=cpu,gpu policy=all" | FileCheck %s --check-prefix=ALL
// RUN: hpvm-opt %s --split-input-file --hpvm-assign-targets="available=opencl,cpu policy=all" | FileCheck %s --check-prefix=OCL
// Running the pass on its own result changes nothing.
// RUN: hpvm-opt %s --split-input-file --hpvm-assign-targets="available=cpu,gpu policy=all" -o %t.once.mlir
// RUN: hpvm-opt %t.once.mlir --split-input-file --hpvm-assign-targets="available=cpu,gpu policy=all" -o %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

// Leaves under a CPU root: the policy chooses among the available hints, in
// each node's order of preference.
// CPU-LABEL: hpvm.leaf @gpu_first() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// CPU-LABEL: hpvm.leaf @cpu_first() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// CPU-LABEL: hpvm.leaf @unhinted() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// CPU-LABEL: hpvm.leaf @opencl_first() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// CPU-LABEL: hpvm.internal @root(
// CPU-SAME: attributes {hpvm.targets = [#hpvm.target<cpu>]}
// CPU-NOT: hpvm.dispatch
// FIRST-LABEL: hpvm.leaf @gpu_first() attributes {hpvm.targets = [#hpvm.target<gpu>]}
// FIRST-LABEL: hpvm.leaf @cpu_first() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// FIRST-LABEL: hpvm.leaf @unhinted() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// FIRST-LABEL: hpvm.leaf @opencl_first() attributes {hpvm.targets = [#hpvm.target<gpu>]}
// FIRST-NOT: hpvm.dispatch
// PCPU-LABEL: hpvm.leaf @gpu_first() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// PCPU-LABEL: hpvm.leaf @cpu_first() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// PCPU-LABEL: hpvm.leaf @unhinted() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// PCPU-LABEL: hpvm.leaf @opencl_first() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// PCPU-NOT: hpvm.dispatch
// PGPU-LABEL: hpvm.leaf @gpu_first() attributes {hpvm.targets = [#hpvm.target<gpu>]}
// PGPU-LABEL: hpvm.leaf @cpu_first() attributes {hpvm.targets = [#hpvm.target<gpu>]}
// PGPU-LABEL: hpvm.leaf @unhinted() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// PGPU-LABEL: hpvm.leaf @opencl_first() attributes {hpvm.targets = [#hpvm.target<gpu>]}
// PGPU-NOT: hpvm.dispatch
// ALL-LABEL: hpvm.leaf @gpu_first() attributes {hpvm.dispatch, hpvm.targets = [#hpvm.target<gpu>, #hpvm.target<cpu>]}
// ALL-LABEL: hpvm.leaf @cpu_first() attributes {hpvm.dispatch, hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]}
// ALL-LABEL: hpvm.leaf @unhinted() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// ALL-LABEL: hpvm.leaf @opencl_first() attributes {hpvm.dispatch, hpvm.targets = [#hpvm.target<gpu>, #hpvm.target<cpu>]}
// ALL-LABEL: hpvm.internal @root(
// ALL-SAME: attributes {hpvm.targets = [#hpvm.target<cpu>]}
// OCL-LABEL: hpvm.leaf @gpu_first() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// OCL-LABEL: hpvm.leaf @cpu_first() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// OCL-LABEL: hpvm.leaf @unhinted() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// OCL-LABEL: hpvm.leaf @opencl_first() attributes {hpvm.dispatch, hpvm.targets = [#hpvm.target<spirv>, #hpvm.target<cpu>]}
hpvm.leaf @gpu_first() attributes {hpvm.targets = [#hpvm.target<gpu>, #hpvm.target<cpu>]} {
  hpvm.return
}
hpvm.leaf @cpu_first() attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]} {
  hpvm.return
}
hpvm.leaf @unhinted() {
  hpvm.return
}
// Hints that are not available are dropped (tensor never is here, spirv only
// with opencl).
hpvm.leaf @opencl_first() attributes {hpvm.targets = [#hpvm.target<spirv>, #hpvm.target<tensor>, #hpvm.target<gpu>, #hpvm.target<cpu>]} {
  hpvm.return
}
hpvm.internal @root(%n: index) {
  %a = hpvm.create_node @gpu_first [%n] : !hpvm.node
  %b = hpvm.create_node @cpu_first [%n] : !hpvm.node
  %c = hpvm.create_node @unhinted [%n] : !hpvm.node
  %d = hpvm.create_node @opencl_first [%n] : !hpvm.node
}

// -----

// A device internal node takes its children along: the children of a GPU
// tile node are GPU code whatever the policy would pick for them alone.
// CPU-LABEL: hpvm.leaf @body() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// CPU-LABEL: hpvm.internal @tile() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// FIRST-LABEL: hpvm.leaf @body() attributes {hpvm.targets = [#hpvm.target<gpu>]}
// FIRST-LABEL: hpvm.internal @tile() attributes {hpvm.targets = [#hpvm.target<gpu>]}
// PCPU-LABEL: hpvm.leaf @body() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// PCPU-LABEL: hpvm.internal @tile() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// PGPU-LABEL: hpvm.leaf @body() attributes {hpvm.targets = [#hpvm.target<gpu>]}
// PGPU-LABEL: hpvm.internal @tile() attributes {hpvm.targets = [#hpvm.target<gpu>]}
// ALL-LABEL: hpvm.leaf @body() attributes {hpvm.dispatch, hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]}
// ALL-LABEL: hpvm.internal @tile() attributes {hpvm.dispatch, hpvm.targets = [#hpvm.target<gpu>, #hpvm.target<cpu>]}
// ALL-LABEL: hpvm.internal @root(
// ALL-SAME: attributes {hpvm.targets = [#hpvm.target<cpu>]}
hpvm.leaf @body() attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]} {
  hpvm.return
}
hpvm.internal @tile() attributes {hpvm.targets = [#hpvm.target<gpu>, #hpvm.target<cpu>]} {
  %c16 = arith.constant 16 : index
  %b = hpvm.create_node @body [%c16] : !hpvm.node
}
hpvm.internal @root(%n: index) {
  %t = hpvm.create_node @tile [%n] : !hpvm.node
}

// -----

// Refused: an internal node cannot be GPU code when a child cannot; it keeps
// its CPU hint. The stale hpvm.dispatch of a node left with one target goes.
// FIRST-LABEL: hpvm.leaf @cpu_only() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// FIRST-LABEL: hpvm.leaf @either() attributes {hpvm.targets = [#hpvm.target<gpu>]}
// FIRST-LABEL: hpvm.internal @mixed() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// ALL-LABEL: hpvm.leaf @cpu_only() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// ALL-LABEL: hpvm.leaf @either() attributes {hpvm.dispatch, hpvm.targets = [#hpvm.target<gpu>, #hpvm.target<cpu>]}
// ALL-LABEL: hpvm.internal @mixed() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// CPU-LABEL: hpvm.leaf @cpu_only() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// CPU-NOT: hpvm.dispatch
hpvm.leaf @cpu_only() attributes {hpvm.dispatch, hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<tensor>]} {
  hpvm.return
}
hpvm.leaf @either() attributes {hpvm.targets = [#hpvm.target<gpu>, #hpvm.target<cpu>]} {
  hpvm.return
}
hpvm.internal @mixed() attributes {hpvm.targets = [#hpvm.target<gpu>, #hpvm.target<cpu>]} {
  %a = hpvm.create_node @cpu_only : !hpvm.node
  %b = hpvm.create_node @either : !hpvm.node
}

// -----

// A leaf instantiated by a GPU node and by CPU host code keeps the GPU target
// for the first and gets the policy's choice for the second: two targets,
// runtime dispatch (under `first`); when the group is CPU code too, one.
// FIRST-LABEL: hpvm.leaf @shared() attributes {hpvm.dispatch, hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]}
// FIRST-LABEL: hpvm.internal @gpu_group() attributes {hpvm.targets = [#hpvm.target<gpu>]}
// FIRST-LABEL: hpvm.internal @root(
// FIRST-SAME: attributes {hpvm.targets = [#hpvm.target<cpu>]}
// PGPU-LABEL: hpvm.leaf @shared() attributes {hpvm.targets = [#hpvm.target<gpu>]}
// PGPU-LABEL: hpvm.internal @gpu_group() attributes {hpvm.targets = [#hpvm.target<gpu>]}
// PCPU-LABEL: hpvm.leaf @shared() attributes {hpvm.targets = [#hpvm.target<cpu>]}
// PCPU-LABEL: hpvm.internal @gpu_group() attributes {hpvm.targets = [#hpvm.target<cpu>]}
hpvm.leaf @shared() attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]} {
  hpvm.return
}
hpvm.internal @gpu_group() attributes {hpvm.targets = [#hpvm.target<gpu>, #hpvm.target<cpu>]} {
  %s = hpvm.create_node @shared : !hpvm.node
}
hpvm.internal @root() {
  %g = hpvm.create_node @gpu_group : !hpvm.node
  %s = hpvm.create_node @shared : !hpvm.node
}
