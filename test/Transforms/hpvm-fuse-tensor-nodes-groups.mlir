// hpvm-fuse-tensor-nodes, after the chains: the elementwise leaves left are
// fused in groups, a group growing from a sink by every elementwise producer
// whose results go only into the group.
// RUN: hpvm-opt %s --split-input-file --hpvm-fuse-tensor-nodes | FileCheck %s

// GELU as exporters write it: x feeds Div and the first Mul; every result
// but the last stays inside: one leaf, in topological order, taking x once
// per use and the softmax's result; the sink's result is the output.
// CHECK-LABEL: hpvm.leaf @bias_div_erf_one_half_scale(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8xf32>
// CHECK: %[[B:.*]] = hpvm.tensor.add %[[X]]
// CHECK: hpvm.tensor.map %[[B]]
// CHECK: arith.divf
// CHECK: math.erf
// CHECK: arith.addf
// CHECK: hpvm.tensor.map %[[B]],
// CHECK: arith.mulf
// CHECK: %[[R:.*]] = hpvm.tensor.map
// CHECK: hpvm.return %[[R]]
// CHECK-LABEL: hpvm.internal @gelu(
// CHECK-NEXT: hpvm.create_node @soft
// CHECK-NEXT: %[[F:.*]] = hpvm.create_node @bias_div_erf_one_half_scale
// CHECK-NOT: hpvm.create_node
// CHECK: hpvm.edge %{{.*}}[0] -> %[[F]][0] one_to_one
// CHECK-NOT: hpvm.edge
// CHECK: hpvm.bind_out %[[F]][0] -> 0
hpvm.leaf @soft(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  %s = hpvm.tensor.softmax %x : tensor<4x8xf32>
  hpvm.return %s : tensor<4x8xf32>
}
hpvm.leaf @bias(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  %b = arith.constant dense<0.5> : tensor<1x8xf32>
  %r = hpvm.tensor.add %x, %b : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  hpvm.return %r : tensor<4x8xf32>
}
hpvm.leaf @div(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  %r = hpvm.tensor.map %x : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%e: f32):
    %c = arith.constant 1.41421354 : f32
    %d = arith.divf %e, %c : f32
    hpvm.tensor.yield %d : f32
  }
  hpvm.return %r : tensor<4x8xf32>
}
hpvm.leaf @erf(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  %r = hpvm.tensor.map %x : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%e: f32):
    %d = math.erf %e : f32
    hpvm.tensor.yield %d : f32
  }
  hpvm.return %r : tensor<4x8xf32>
}
hpvm.leaf @one(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  %r = hpvm.tensor.map %x : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%e: f32):
    %c = arith.constant 1.0 : f32
    %d = arith.addf %e, %c : f32
    hpvm.tensor.yield %d : f32
  }
  hpvm.return %r : tensor<4x8xf32>
}
hpvm.leaf @half(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  %r = hpvm.tensor.map %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%e: f32, %f: f32):
    %d = arith.mulf %e, %f : f32
    hpvm.tensor.yield %d : f32
  }
  hpvm.return %r : tensor<4x8xf32>
}
hpvm.leaf @scale(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  %r = hpvm.tensor.map %x : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%e: f32):
    %c = arith.constant 0.5 : f32
    %d = arith.mulf %e, %c : f32
    hpvm.tensor.yield %d : f32
  }
  hpvm.return %r : tensor<4x8xf32>
}
hpvm.internal @gelu(%in: tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  %s = hpvm.create_node @soft : !hpvm.node
  %b = hpvm.create_node @bias : !hpvm.node
  %d = hpvm.create_node @div : !hpvm.node
  %e = hpvm.create_node @erf : !hpvm.node
  %o = hpvm.create_node @one : !hpvm.node
  %h = hpvm.create_node @half : !hpvm.node
  %c = hpvm.create_node @scale : !hpvm.node
  hpvm.bind_in %in -> %s[0] : tensor<4x8xf32>
  hpvm.edge %s[0] -> %b[0] one_to_one
  hpvm.edge %b[0] -> %d[0] one_to_one
  hpvm.edge %d[0] -> %e[0] one_to_one
  hpvm.edge %e[0] -> %o[0] one_to_one
  hpvm.edge %b[0] -> %h[0] one_to_one
  hpvm.edge %o[0] -> %h[1] one_to_one
  hpvm.edge %h[0] -> %c[0] one_to_one
  hpvm.bind_out %c[0] -> 0
}

// -----

// A result that also leaves the group (bound out, or into a node that is not
// elementwise) keeps its leaf: it is needed outside. The two maps after it
// still become one leaf.
// CHECK-LABEL: hpvm.internal @escapes(
// CHECK-DAG: hpvm.create_node @first :
// CHECK-DAG: hpvm.create_node @second_third :
// CHECK-DAG: hpvm.create_node @soft :
// CHECK-NOT: hpvm.create_node
hpvm.leaf @first(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  %r = hpvm.tensor.relu %x : tensor<4x8xf32>
  hpvm.return %r : tensor<4x8xf32>
}
hpvm.leaf @second(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  %r = hpvm.tensor.tanh %x : tensor<4x8xf32>
  hpvm.return %r : tensor<4x8xf32>
}
hpvm.leaf @third(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  %r = hpvm.tensor.sigmoid %x : tensor<4x8xf32>
  hpvm.return %r : tensor<4x8xf32>
}
hpvm.leaf @soft(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  %s = hpvm.tensor.softmax %x : tensor<4x8xf32>
  hpvm.return %s : tensor<4x8xf32>
}
hpvm.internal @escapes(%in: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = hpvm.create_node @first : !hpvm.node
  %b = hpvm.create_node @second : !hpvm.node
  %c = hpvm.create_node @third : !hpvm.node
  %s = hpvm.create_node @soft : !hpvm.node
  hpvm.bind_in %in -> %a[0] : tensor<4x8xf32>
  hpvm.edge %a[0] -> %b[0] one_to_one
  hpvm.edge %a[0] -> %s[0] one_to_one
  hpvm.edge %b[0] -> %c[0] one_to_one
  hpvm.bind_out %c[0] -> 0
  hpvm.bind_out %s[0] -> 1
}

// -----

// Replicated leaves and leaves hinted for a device are left alone.
// CHECK-LABEL: hpvm.internal @left_alone(
// CHECK-DAG: hpvm.create_node @grid [
// CHECK-DAG: hpvm.create_node @grid2 [
// CHECK-DAG: hpvm.create_node @gpu :
// CHECK-DAG: hpvm.create_node @after_gpu :
// CHECK-NOT: hpvm.create_node
hpvm.leaf @grid(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  %r = hpvm.tensor.relu %x : tensor<4x8xf32>
  hpvm.return %r : tensor<4x8xf32>
}
hpvm.leaf @grid2(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  %r = hpvm.tensor.tanh %x : tensor<4x8xf32>
  hpvm.return %r : tensor<4x8xf32>
}
hpvm.leaf @gpu(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %r = hpvm.tensor.relu %x : tensor<4x8xf32>
  hpvm.return %r : tensor<4x8xf32>
}
hpvm.leaf @after_gpu(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  %r = hpvm.tensor.tanh %x : tensor<4x8xf32>
  hpvm.return %r : tensor<4x8xf32>
}
hpvm.internal @left_alone(%in: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c2 = arith.constant 2 : index
  %a = hpvm.create_node @grid [%c2] : !hpvm.node
  %b = hpvm.create_node @grid2 [%c2] : !hpvm.node
  %g = hpvm.create_node @gpu : !hpvm.node
  %h = hpvm.create_node @after_gpu : !hpvm.node
  hpvm.bind_in %in -> %a[0] : tensor<4x8xf32>
  hpvm.edge %a[0] -> %b[0] one_to_one
  hpvm.bind_out %b[0] -> 0
  hpvm.bind_in %in -> %g[0] : tensor<4x8xf32>
  hpvm.edge %g[0] -> %h[0] one_to_one
  hpvm.bind_out %h[0] -> 1
}

// -----

// A broadcast the importer made for a map (squeeze-excite's channel scale
// spread over the image) joins the map: the lowering reads the scale through
// the broadcast instead of writing the spread copy.
// CHECK-LABEL: hpvm.leaf @spread_scale(
// CHECK: linalg.generic
// CHECK: hpvm.tensor.map
// CHECK-LABEL: hpvm.internal @excite(
// CHECK-NEXT: %[[F:.*]] = hpvm.create_node @spread_scale :
// CHECK-NOT: hpvm.create_node
// CHECK: hpvm.bind_in %{{.*}} -> %[[F]][0]
// CHECK: hpvm.bind_in %{{.*}} -> %[[F]][1]
#scalar = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
#whole = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
hpvm.leaf @spread(%s: tensor<1x4x1x1xf32>) -> (tensor<1x4x8x8xf32>) {
  %e = tensor.empty() : tensor<1x4x8x8xf32>
  %b = linalg.generic {indexing_maps = [#scalar, #whole],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x4x1x1xf32>) outs(%e : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x4x8x8xf32>
  hpvm.return %b : tensor<1x4x8x8xf32>
}
hpvm.leaf @scale(%x: tensor<1x4x8x8xf32>, %y: tensor<1x4x8x8xf32>) -> (tensor<1x4x8x8xf32>) {
  %r = hpvm.tensor.map %x, %y : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  ^bb0(%e: f32, %f: f32):
    %d = arith.mulf %e, %f : f32
    hpvm.tensor.yield %d : f32
  }
  hpvm.return %r : tensor<1x4x8x8xf32>
}
hpvm.internal @excite(%s: tensor<1x4x1x1xf32>, %x: tensor<1x4x8x8xf32>) -> (tensor<1x4x8x8xf32>) {
  %a = hpvm.create_node @spread : !hpvm.node
  %b = hpvm.create_node @scale : !hpvm.node
  hpvm.bind_in %s -> %a[0] : tensor<1x4x1x1xf32>
  hpvm.bind_in %x -> %b[1] : tensor<1x4x8x8xf32>
  hpvm.edge %a[0] -> %b[0] one_to_one
  hpvm.bind_out %b[0] -> 0
}
