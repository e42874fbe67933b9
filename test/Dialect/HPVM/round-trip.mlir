// Every hpvm op and attribute: printed, parsed and printed again (custom and
// generic form) gives the same IR.
// RUN: hpvm-opt %s | hpvm-opt | FileCheck %s
// RUN: hpvm-opt %s --mlir-print-op-generic | hpvm-opt | FileCheck %s
// RUN: hpvm-opt %s > %t.once && hpvm-opt %t.once > %t.twice && diff %t.once %t.twice
// RUN: hpvm-opt %s --mlir-print-op-generic > %t.generic && hpvm-opt %t.generic --mlir-print-op-generic | diff %t.generic -

// CHECK-LABEL: hpvm.leaf @every_attribute
// CHECK-SAME: (%{{.*}}: memref<?xf32> {hpvm.access = #hpvm.access<in>}, %{{.*}}: memref<?xf32> {hpvm.access = #hpvm.access<out>}, %{{.*}}: memref<4xi32> {hpvm.access = #hpvm.access<inout>}, %{{.*}}: !llvm.ptr {hpvm.access = #hpvm.access<in>}, %{{.*}}: i64)
// CHECK-SAME: -> (f32, i64)
// CHECK-SAME: attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<vector>, #hpvm.target<gpu>, #hpvm.target<spirv>, #hpvm.target<tensor>]}
hpvm.leaf @every_attribute(%a: memref<?xf32> {hpvm.access = #hpvm.access<in>},
                           %b: memref<?xf32> {hpvm.access = #hpvm.access<out>},
                           %c: memref<4xi32> {hpvm.access = #hpvm.access<inout>},
                           %p: !llvm.ptr {hpvm.access = #hpvm.access<in>},
                           %n: i64) -> (f32, i64)
    attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<vector>, #hpvm.target<gpu>,
                                #hpvm.target<spirv>, #hpvm.target<tensor>]} {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<?xf32>
  // CHECK: hpvm.return %{{.*}}, %{{.*}} : f32, i64
  hpvm.return %v, %n : f32, i64
}

// CHECK-LABEL: hpvm.leaf @dispatched()
// CHECK-SAME: attributes {hpvm.dispatch, hpvm.targets = [#hpvm.target<gpu>, #hpvm.target<cpu>]}
hpvm.leaf @dispatched() attributes {hpvm.dispatch, hpvm.targets = [#hpvm.target<gpu>, #hpvm.target<cpu>]} {
  hpvm.return
}

// Error budgets of nodes: one per node, and on a root the end-to-end target.
// CHECK-LABEL: hpvm.leaf @budgeted()
// CHECK-SAME: attributes {hpvm.error = #hpvm.error<l1 = 1.000000e-02, l2 = 2.000000e-02>}
hpvm.leaf @budgeted() attributes {hpvm.error = #hpvm.error<l1 = 0.01, l2 = 0.02>} {
  hpvm.return
}
// CHECK-LABEL: hpvm.internal @budgeted_root()
// CHECK-SAME: attributes {hpvm.error = #hpvm.error<l1 = 5.000000e-02, l2 = 5.000000e-02>}
hpvm.internal @budgeted_root() attributes {hpvm.error = #hpvm.error<l1 = 0.05, l2 = 0.05>} {
  %n = hpvm.create_node @budgeted : !hpvm.node
}

// CHECK-LABEL: hpvm.leaf private @private_leaf()
// CHECK-NEXT: hpvm.return
hpvm.leaf private @private_leaf() {
  hpvm.return
}

// Leaf intrinsics at every dimension and level.
// CHECK-LABEL: hpvm.leaf @intrinsics
hpvm.leaf @intrinsics(%out: memref<?xindex>) {
  // CHECK: hpvm.instance_id x : index
  // CHECK: hpvm.instance_id y : index
  // CHECK: hpvm.instance_id z : index
  // CHECK: hpvm.instance_id x level 1 : index
  // CHECK: hpvm.num_instances x : index
  // CHECK: hpvm.num_instances y level 1 : index
  // CHECK: hpvm.num_instances z level 2 : index
  %ix = hpvm.instance_id x : index
  %iy = hpvm.instance_id y level 0 : index
  %iz = hpvm.instance_id z : index
  %px = hpvm.instance_id x level 1 : index
  %nx = hpvm.num_instances x : index
  %ny = hpvm.num_instances y level 1 : index
  %nz = hpvm.num_instances z level 2 : index
  // CHECK: hpvm.barrier
  hpvm.barrier
  // CHECK: hpvm.alloc() : memref<16xf32>
  // CHECK: hpvm.alloc(%{{.*}}, %{{.*}}) : memref<?x4x?xf32>
  %s = hpvm.alloc() : memref<16xf32>
  %d = hpvm.alloc(%nx, %ny) : memref<?x4x?xf32>
  %t0 = arith.addi %ix, %iy : index
  %t1 = arith.addi %t0, %iz : index
  %t2 = arith.addi %t1, %px : index
  %t3 = arith.addi %t2, %nz : index
  memref.store %t3, %out[%ix] : memref<?xindex>
  // Intrinsics may be nested in regions of the leaf.
  // CHECK: scf.if
  // CHECK-NEXT: hpvm.barrier
  %cond = arith.cmpi eq, %ix, %iy : index
  scf.if %cond {
    hpvm.barrier
  }
  hpvm.return
}

hpvm.leaf @producer(%a: memref<?xf32>) -> (f32, i64) {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<?xf32>
  %k = arith.constant 3 : i64
  hpvm.return %v, %k : f32, i64
}

hpvm.leaf @consumer(%a: memref<?xf32>, %c: memref<?xf32>, %sum: f32) {
  hpvm.return
}

hpvm.leaf @pointwise(%x: f32) -> (f32) {
  hpvm.return %x : f32
}

// Graph ops: create_node with 0 to 3 dimensions, every edge kind, binds.
// CHECK-LABEL: hpvm.internal @graph
// CHECK-SAME: -> (i64, f32)
hpvm.internal @graph(%a: memref<?xf32>, %c: memref<?xf32>, %n: index, %x: f32) -> (i64, f32) {
  // CHECK: %[[C4:.*]] = arith.constant 4 : index
  // CHECK: %[[P:.*]] = hpvm.create_node @producer : !hpvm.node
  // CHECK: %[[Q:.*]] = hpvm.create_node @consumer [%{{.*}}] : !hpvm.node
  // CHECK: %[[F:.*]] = hpvm.create_node @pointwise [%[[C4]], %[[C4]]] : !hpvm.node
  // CHECK: %[[G:.*]] = hpvm.create_node @pointwise [%[[C4]], %[[C4]]] : !hpvm.node
  // CHECK: %[[H:.*]] = hpvm.create_node @pointwise [%[[C4]], %[[C4]], %{{.*}}] : !hpvm.node
  %c4 = arith.constant 4 : index
  %p = hpvm.create_node @producer : !hpvm.node
  %q = hpvm.create_node @consumer [%n] : !hpvm.node
  %f = hpvm.create_node @pointwise [%c4, %c4] : !hpvm.node
  %g = hpvm.create_node @pointwise [%c4, %c4] : !hpvm.node
  %h = hpvm.create_node @pointwise [%c4, %c4, %n] : !hpvm.node
  // CHECK: hpvm.bind_in %{{.*}} -> %[[P]][0] : memref<?xf32>
  // CHECK: hpvm.bind_in %{{.*}} -> %[[Q]][0] streaming : memref<?xf32>
  // CHECK: hpvm.edge %[[P]][0] -> %[[Q]][2] all_to_all
  // CHECK: hpvm.edge %[[F]][0] -> %[[G]][0] one_to_one
  // CHECK: hpvm.edge %[[G]][0] -> %[[H]][0] all_to_all streaming
  // CHECK: hpvm.bind_out %[[P]][1] -> 0
  // CHECK: hpvm.bind_out %[[H]][0] -> 1 streaming
  hpvm.bind_in %a -> %p[0] : memref<?xf32>
  hpvm.bind_in %a -> %q[0] streaming : memref<?xf32>
  hpvm.bind_in %c -> %q[1] : memref<?xf32>
  hpvm.bind_in %x -> %f[0] : f32
  hpvm.edge %p[0] -> %q[2] all_to_all
  hpvm.edge %f[0] -> %g[0] one_to_one
  hpvm.edge %g[0] -> %h[0] all_to_all streaming
  hpvm.bind_out %p[1] -> 0
  hpvm.bind_out %h[0] -> 1 streaming
}

// An internal node without children prints as an empty body.
// CHECK-LABEL: hpvm.internal @empty() {
// CHECK-NEXT: }
hpvm.internal @empty() {
}

// Host ops.
// CHECK-LABEL: func.func @host
func.func @host(%a: memref<?xf32>, %c: memref<?xf32>, %n: index, %x: f32,
                %p: !llvm.ptr, %bytes: index) -> (i64, f32) {
  // CHECK: hpvm.track %{{.*}} : memref<?xf32>
  // CHECK: hpvm.track %{{.*}}, %{{.*}} : !llvm.ptr
  hpvm.track %a : memref<?xf32>
  hpvm.track %p, %bytes : !llvm.ptr
  // CHECK: %[[G:.*]] = hpvm.launch @graph(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<?xf32>, memref<?xf32>, index, f32) -> !hpvm.graph
  // CHECK: %{{.*}}:2 = hpvm.wait %[[G]] : i64, f32
  %g = hpvm.launch @graph(%a, %c, %n, %x) : (memref<?xf32>, memref<?xf32>, index, f32) -> !hpvm.graph
  %r:2 = hpvm.wait %g : i64, f32
  // CHECK: %[[S:.*]] = hpvm.launch @graph(%{{.*}}) streaming
  // CHECK: hpvm.push %[[S]](%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : memref<?xf32>, memref<?xf32>, index, f32
  // CHECK: %{{.*}}:2 = hpvm.pop %[[S]] : i64, f32
  // CHECK: hpvm.wait %[[S]]{{$}}
  %s = hpvm.launch @graph(%a, %c, %n, %x) streaming : (memref<?xf32>, memref<?xf32>, index, f32) -> !hpvm.graph
  hpvm.push %s(%a, %c, %n, %x) : memref<?xf32>, memref<?xf32>, index, f32
  %o:2 = hpvm.pop %s : i64, f32
  hpvm.wait %s
  // CHECK: hpvm.launch @empty() : () -> !hpvm.graph
  %e = hpvm.launch @empty() : () -> !hpvm.graph
  hpvm.wait %e
  // CHECK: hpvm.request %{{.*}} : memref<?xf32>
  // CHECK: hpvm.request %{{.*}}, %{{.*}} : !llvm.ptr
  // CHECK: hpvm.untrack %{{.*}} : memref<?xf32>
  // CHECK: hpvm.untrack %{{.*}} : !llvm.ptr
  hpvm.request %c : memref<?xf32>
  hpvm.request %p, %bytes : !llvm.ptr
  hpvm.untrack %a : memref<?xf32>
  hpvm.untrack %p : !llvm.ptr
  return %r#0, %o#1 : i64, f32
}

// Host ops on a graph handle passed in as an argument (not traceable).
// CHECK-LABEL: func.func @opaque_graph
func.func @opaque_graph(%g: !hpvm.graph, %v: f32) -> f32 {
  // CHECK: hpvm.push %{{.*}}(%{{.*}}) : f32
  // CHECK: hpvm.pop %{{.*}} : f32
  hpvm.push %g(%v) : f32
  %r = hpvm.pop %g : f32
  return %r : f32
}

// Tensor ops, each with and without an error budget.
// CHECK-LABEL: hpvm.leaf @tensors
hpvm.leaf @tensors(%x: tensor<2x4x9x9xf32>, %w: tensor<8x4x3x3xf32>,
                   %dw: tensor<4x1x3x3xf32>, %bias: tensor<1x8x1x1xf32>,
                   %m: tensor<3x5xf32>, %k: tensor<5x7xf32>,
                   %bm: tensor<6x3x5xf32>, %bk: tensor<6x5x2xf32>,
                   %gamma: tensor<4xf32>, %beta: tensor<1x4x1x1xf32>,
                   %dyn: tensor<?x4x9x9xf32>, %h: tensor<2x4x9x9xf16>) {
  // CHECK: hpvm.tensor.conv2d %{{.*}}, %{{.*}} {error = #hpvm.error<l1 = 1.000000e-02, l2 = 2.000000e-02>, padding = [1, 1], strides = [2, 2]} : (tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x5x5xf32>
  %c = hpvm.tensor.conv2d %x, %w {padding = [1, 1], strides = [2, 2],
         error = #hpvm.error<l1 = 0.01, l2 = 0.02>}
         : (tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x5x5xf32>
  // CHECK: hpvm.tensor.conv2d %{{.*}}, %{{.*}} : (tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x7x7xf32>
  %c1 = hpvm.tensor.conv2d %x, %w : (tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x7x7xf32>
  // CHECK: hpvm.tensor.conv2d %{{.*}}, %{{.*}} {result_block = 4 : i64} : (tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<2x2x7x7x4xf32>
  %cb = hpvm.tensor.conv2d %x, %w {result_block = 4} : (tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<2x2x7x7x4xf32>
  // An approximation knob (hpvm-apply-knobs sets them from a configuration).
  // CHECK: hpvm.tensor.conv2d %{{.*}}, %{{.*}} {hpvm.knob = #hpvm.knob<perforate_rows, rate = 2, offset = 1>} : (tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x7x7xf32>
  %perforated = hpvm.tensor.conv2d %x, %w {hpvm.knob = #hpvm.knob<perforate_rows, rate = 2, offset = 1>}
         : (tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x7x7xf32>
  // CHECK: hpvm.knob = #hpvm.knob<sample_filter, rate = 4, offset = 3>
  %sampled = hpvm.tensor.conv2d %x, %w {hpvm.knob = #hpvm.knob<sample_filter, rate = 4, offset = 3>}
         : (tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x7x7xf32>
  // CHECK: hpvm.knob = #hpvm.knob<perforate_cols, rate = 3, offset = 0>
  %columns = hpvm.tensor.conv2d %x, %w {hpvm.knob = #hpvm.knob<perforate_cols, rate = 3, offset = 0>}
         : (tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x7x7xf32>
  // CHECK: hpvm.tensor.conv2d %{{.*}}, %{{.*}} {groups = 4 : i64} : (tensor<2x4x9x9xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x7x7xf32>
  %depthwise = hpvm.tensor.conv2d %x, %dw {groups = 4}
         : (tensor<2x4x9x9xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x7x7xf32>
  // CHECK: hpvm.tensor.conv2d %{{.*}}, %{{.*}} : (tensor<?x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<?x8x7x7xf32>
  %dc = hpvm.tensor.conv2d %dyn, %w : (tensor<?x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<?x8x7x7xf32>
  // CHECK: hpvm.tensor.add %{{.*}}, %{{.*}} : (tensor<2x8x5x5xf32>, tensor<1x8x1x1xf32>) -> tensor<2x8x5x5xf32>
  %a = hpvm.tensor.add %c, %bias : (tensor<2x8x5x5xf32>, tensor<1x8x1x1xf32>) -> tensor<2x8x5x5xf32>
  // CHECK: hpvm.tensor.add %{{.*}}, %{{.*}} {error = #hpvm.error<l1 = 0.000000e+00, l2 = 1.000000e-01>}
  %a2 = hpvm.tensor.add %bias, %c {error = #hpvm.error<l1 = 0.0, l2 = 0.1>}
         : (tensor<1x8x1x1xf32>, tensor<2x8x5x5xf32>) -> tensor<2x8x5x5xf32>
  // CHECK: hpvm.tensor.relu %{{.*}} : tensor<2x8x5x5xf32>
  // CHECK: hpvm.tensor.tanh %{{.*}} {error = #hpvm.error<l1 = 5.000000e-01, l2 = 5.000000e-01>} : tensor<2x8x5x5xf32>
  // CHECK: hpvm.tensor.sigmoid %{{.*}} : tensor<2x8x5x5xf32>
  // CHECK: hpvm.tensor.clipped_relu %{{.*}} max 6.000000e+00 : tensor<2x8x5x5xf32>
  %r = hpvm.tensor.relu %a : tensor<2x8x5x5xf32>
  %t = hpvm.tensor.tanh %r {error = #hpvm.error<l1 = 0.5, l2 = 0.5>} : tensor<2x8x5x5xf32>
  %sg = hpvm.tensor.sigmoid %t : tensor<2x8x5x5xf32>
  %cr = hpvm.tensor.clipped_relu %sg max 6.0 : tensor<2x8x5x5xf32>
  // CHECK: hpvm.tensor.pool max %{{.*}} {strides = [2, 2], window = [2, 2]} : tensor<2x8x5x5xf32> -> tensor<2x8x2x2xf32>
  // CHECK: hpvm.tensor.pool min %{{.*}} {padding = [1, 1], strides = [1, 1], window = [3, 3]} : tensor<2x8x5x5xf32> -> tensor<2x8x5x5xf32>
  // CHECK: hpvm.tensor.pool mean %{{.*}} {error = #hpvm.error<l1 = 1.000000e+00, l2 = 2.000000e+00>, strides = [1, 2], window = [1, 2]}
  // CHECK: hpvm.tensor.pool max %{{.*}} {padding_end = [1, 0], strides = [2, 2], window = [2, 2]} : tensor<2x8x5x5xf32> -> tensor<2x8x3x2xf32>
  %p = hpvm.tensor.pool max %cr {window = [2, 2], strides = [2, 2], padding = [0, 0]}
         : tensor<2x8x5x5xf32> -> tensor<2x8x2x2xf32>
  %pmin = hpvm.tensor.pool min %cr {window = [3, 3], strides = [1, 1], padding = [1, 1]}
         : tensor<2x8x5x5xf32> -> tensor<2x8x5x5xf32>
  %pmean = hpvm.tensor.pool mean %cr {window = [1, 2], strides = [1, 2],
         error = #hpvm.error<l1 = 1.0, l2 = 2.0>} : tensor<2x8x5x5xf32> -> tensor<2x8x5x2xf32>
  %pceil = hpvm.tensor.pool max %cr {window = [2, 2], strides = [2, 2], padding_end = [1, 0]}
         : tensor<2x8x5x5xf32> -> tensor<2x8x3x2xf32>
  // Channels in blocks.
  // CHECK: hpvm.tensor.to_blocked %{{.*}} {block = 4 : i64} : tensor<2x8x5x5xf32> -> tensor<2x2x5x5x4xf32>
  // CHECK: hpvm.tensor.pool max %{{.*}} {strides = [2, 2], window = [2, 2]} : tensor<2x2x5x5x4xf32> -> tensor<2x2x2x2x4xf32>
  // CHECK: hpvm.tensor.from_blocked %{{.*}} : tensor<2x2x2x2x4xf32> -> tensor<2x8x2x2xf32>
  %blk = hpvm.tensor.to_blocked %cr {block = 4} : tensor<2x8x5x5xf32> -> tensor<2x2x5x5x4xf32>
  %pblk = hpvm.tensor.pool max %blk {window = [2, 2], strides = [2, 2]}
         : tensor<2x2x5x5x4xf32> -> tensor<2x2x2x2x4xf32>
  %unblk = hpvm.tensor.from_blocked %pblk : tensor<2x2x2x2x4xf32> -> tensor<2x8x2x2xf32>
  // CHECK: hpvm.tensor.mul %{{.*}}, %{{.*}} : (tensor<3x5xf32>, tensor<5x7xf32>) -> tensor<3x7xf32>
  // CHECK: hpvm.tensor.mul %{{.*}}, %{{.*}} : (tensor<6x3x5xf32>, tensor<6x5x2xf32>) -> tensor<6x3x2xf32>
  %mm = hpvm.tensor.mul %m, %k : (tensor<3x5xf32>, tensor<5x7xf32>) -> tensor<3x7xf32>
  %bmm = hpvm.tensor.mul %bm, %bk : (tensor<6x3x5xf32>, tensor<6x5x2xf32>) -> tensor<6x3x2xf32>
  // Precision knobs take no rate or offset.
  // CHECK: hpvm.tensor.mul %{{.*}}, %{{.*}} {hpvm.knob = #hpvm.knob<fp16>} : (tensor<3x5xf32>, tensor<5x7xf32>) -> tensor<3x7xf32>
  // CHECK: hpvm.tensor.mul %{{.*}}, %{{.*}} {hpvm.knob = #hpvm.knob<bf16>} : (tensor<6x3x5xf32>, tensor<6x5x2xf32>) -> tensor<6x3x2xf32>
  %half = hpvm.tensor.mul %m, %k {hpvm.knob = #hpvm.knob<fp16>} : (tensor<3x5xf32>, tensor<5x7xf32>) -> tensor<3x7xf32>
  %brain = hpvm.tensor.mul %bm, %bk {hpvm.knob = #hpvm.knob<bf16>} : (tensor<6x3x5xf32>, tensor<6x5x2xf32>) -> tensor<6x3x2xf32>
  // CHECK: hpvm.tensor.softmax %{{.*}} : tensor<3x7xf32>
  // CHECK: hpvm.tensor.softmax %{{.*}} {axis = 0 : i64} : tensor<3x7xf32>
  %sm = hpvm.tensor.softmax %mm : tensor<3x7xf32>
  %sm0 = hpvm.tensor.softmax %mm {axis = 0} : tensor<3x7xf32>
  // CHECK: hpvm.tensor.batchnorm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f64} : (tensor<2x4x9x9xf32>, tensor<4xf32>, tensor<1x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x9x9xf32>
  %bn = hpvm.tensor.batchnorm %x, %gamma, %beta, %gamma, %gamma {epsilon = 1.0e-3}
         : (tensor<2x4x9x9xf32>, tensor<4xf32>, tensor<1x4x1x1xf32>, tensor<4xf32>,
            tensor<4xf32>) -> tensor<2x4x9x9xf32>
  // CHECK: hpvm.tensor.map %{{.*}}, %{{.*}} : (tensor<2x4x9x9xf32>, tensor<2x4x9x9xf32>) -> tensor<2x4x9x9xf32> {
  // CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32):
  // CHECK-NEXT: arith.subf
  // CHECK-NEXT: hpvm.tensor.yield %{{.*}} : f32
  %d = hpvm.tensor.map %x, %bn : (tensor<2x4x9x9xf32>, tensor<2x4x9x9xf32>) -> tensor<2x4x9x9xf32> {
  ^bb0(%u: f32, %v: f32):
    %s = arith.subf %u, %v : f32
    hpvm.tensor.yield %s : f32
  }
  // CHECK: hpvm.tensor.map %{{.*}} {error = #hpvm.error<l1 = 1.000000e-01, l2 = 1.000000e-01>} : (tensor<2x4x9x9xf16>) -> tensor<2x4x9x9xf32>
  %widen = hpvm.tensor.map %h {error = #hpvm.error<l1 = 0.1, l2 = 0.1>}
         : (tensor<2x4x9x9xf16>) -> tensor<2x4x9x9xf32> {
  ^bb0(%u: f16):
    %e = arith.extf %u : f16 to f32
    hpvm.tensor.yield %e : f32
  }
  // CHECK: hpvm.tensor.reduce %{{.*}}, %{{.*}} axis 1 : (tensor<2x4x9x9xf32>, f32) -> tensor<2x9x9xf32> {
  // CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32):
  // CHECK: hpvm.tensor.yield
  %zero = arith.constant 0.0 : f32
  %sum = hpvm.tensor.reduce %d, %zero axis 1 : (tensor<2x4x9x9xf32>, f32) -> tensor<2x9x9xf32> {
  ^bb0(%acc: f32, %e: f32):
    %s = arith.addf %acc, %e : f32
    hpvm.tensor.yield %s : f32
  }
  // Reduction sampling, on a sum and on a maximum (either operand order).
  // CHECK: hpvm.tensor.reduce %{{.*}}, %{{.*}} axis 3 {hpvm.knob = #hpvm.knob<sample_reduction, rate = 4, offset = 3>} : (tensor<2x4x9x9xf32>, f32) -> tensor<2x4x9xf32> {
  // CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32):
  // CHECK-NEXT: arith.addf
  %sampled_sum = hpvm.tensor.reduce %d, %zero axis 3 {hpvm.knob = #hpvm.knob<sample_reduction, rate = 4, offset = 3>}
         : (tensor<2x4x9x9xf32>, f32) -> tensor<2x4x9xf32> {
  ^bb0(%acc: f32, %e: f32):
    %s = arith.addf %e, %acc : f32
    hpvm.tensor.yield %s : f32
  }
  // CHECK: hpvm.tensor.reduce %{{.*}}, %{{.*}} axis 0 {hpvm.knob = #hpvm.knob<sample_reduction, rate = 2, offset = 0>} : (tensor<2x4x9x9xf32>, f32) -> tensor<4x9x9xf32> {
  // CHECK: arith.maxnumf
  %sampled_max = hpvm.tensor.reduce %d, %zero axis 0 {hpvm.knob = #hpvm.knob<sample_reduction, rate = 2, offset = 0>}
         : (tensor<2x4x9x9xf32>, f32) -> tensor<4x9x9xf32> {
  ^bb0(%acc: f32, %e: f32):
    %larger = arith.maxnumf %acc, %e : f32
    hpvm.tensor.yield %larger : f32
  }
  hpvm.return
}

// Handles through branches: a wait on either path, a launch and its wait in
// every trip of a loop, one wait for a handle from either of two launches.
hpvm.leaf @waited(%x: f32) {
  hpvm.return
}
// CHECK-LABEL: func.func @waits_on_paths
func.func @waits_on_paths(%x: f32, %which: i1, %again: i1) {
  %g = hpvm.launch @waited(%x) : (f32) -> !hpvm.graph
  cf.cond_br %which, ^a, ^b
^a:
  // CHECK: hpvm.wait %{{.*}}
  hpvm.wait %g
  cf.br ^loop
^b:
  hpvm.wait %g
  cf.br ^loop
^loop:
  %h = hpvm.launch @waited(%x) : (f32) -> !hpvm.graph
  cf.br ^wait
^wait:
  hpvm.wait %h
  cf.cond_br %again, ^loop, ^choose
^choose:
  cf.cond_br %which, ^first, ^second
^first:
  %ga = hpvm.launch @waited(%x) : (f32) -> !hpvm.graph
  cf.br ^join(%ga : !hpvm.graph)
^second:
  %gb = hpvm.launch @waited(%x) : (f32) -> !hpvm.graph
  cf.br ^join(%gb : !hpvm.graph)
// CHECK: ^{{.*}}(%[[J:.*]]: !hpvm.graph):
// CHECK-NEXT: hpvm.wait %[[J]]
^join(%j: !hpvm.graph):
  hpvm.wait %j
  return
}

// A launch and its wait in every trip of a loop op, the wait under a branch.
// CHECK-LABEL: func.func @waits_in_loop_op
func.func @waits_in_loop_op(%x: f32, %n: index, %which: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    // CHECK: hpvm.launch @waited
    %g = hpvm.launch @waited(%x) : (f32) -> !hpvm.graph
    scf.if %which {
      hpvm.wait %g
    } else {
      hpvm.wait %g
    }
  }
  return
}

// Fan-out: one output port feeds several edges (a residual block's input goes
// to its convolution and to its add), and may also be bound out.
// CHECK-LABEL: hpvm.internal @fan_out
// CHECK: hpvm.edge %[[P:.*]][0] -> %[[Q:.*]][0] all_to_all
// CHECK-NEXT: hpvm.edge %[[P]][0] -> %[[Q]][1] all_to_all
// CHECK-NEXT: hpvm.edge %[[P]][0] -> %{{.*}}[0] one_to_one
// CHECK-NEXT: hpvm.bind_out %[[P]][0] -> 0
hpvm.leaf @fan_out_source() -> (f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f : f32
}
hpvm.leaf @fan_out_sink(%x: f32, %y: f32) -> (f32) {
  %s = arith.addf %x, %y : f32
  hpvm.return %s : f32
}
hpvm.leaf @fan_out_use(%x: f32) {
  hpvm.return
}
hpvm.internal @fan_out() -> (f32, f32) {
  %p = hpvm.create_node @fan_out_source : !hpvm.node
  %q = hpvm.create_node @fan_out_sink : !hpvm.node
  %r = hpvm.create_node @fan_out_use : !hpvm.node
  hpvm.edge %p[0] -> %q[0] all_to_all
  hpvm.edge %p[0] -> %q[1] all_to_all
  hpvm.edge %p[0] -> %r[0] one_to_one
  hpvm.bind_out %p[0] -> 0
  hpvm.bind_out %q[0] -> 1
}
