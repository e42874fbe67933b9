// The buffers bufferized tensor leaves return are freed by whoever receives them
// last (freeHandedOnBuffers): a leaf consuming a fresh buffer along an edge frees
// it, unless it hands it on as a view; the host frees what the root gives it.
// Buffers of the host, and leaves instantiated twice, are never freed. A buffer
// that fans out is freed by the receiver the others feed, or by whichever
// receiver finishes last (hpvm_rt_buffer_last_use).
// RUN: hpvm-opt %s --convert-hpvm-tensor-to-linalg=kernels=false | FileCheck %s

// The first leaf reads the host's buffer: never freed; its result is fresh.
// CHECK-LABEL: hpvm.leaf @first(
// CHECK-SAME: %[[IN:.*]]: memref<2x4xf32>
// CHECK-NOT: memref.dealloc %[[IN]]
// CHECK: hpvm.return
hpvm.leaf @first(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>) {
  %r = hpvm.tensor.relu %x : tensor<2x4xf32>
  hpvm.return %r : tensor<2x4xf32>
}
// A reshape: bufferization copies the view into a fresh output, but the leaf
// owns its input (the first leaf's buffer, along one edge): the view of the
// input is its output, nothing is copied, and the receiver frees it.
// CHECK-LABEL: hpvm.leaf @flatten(
// CHECK-SAME: %[[F:[^:]*]]: memref<2x4xf32>
// CHECK-NOT: memref.copy
// CHECK-NOT: memref.dealloc
// CHECK: %[[VIEW:.*]] = memref.collapse_shape %[[F]]
// CHECK-NOT: memref.copy
// CHECK-NOT: memref.dealloc
// CHECK-NEXT: hpvm.return %[[VIEW]]
hpvm.leaf @flatten(%x: tensor<2x4xf32>) -> (tensor<8xf32>) {
  %f = tensor.collapse_shape %x [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  hpvm.return %f : tensor<8xf32>
}
// The last leaf frees the reshape's buffer.
// CHECK-LABEL: hpvm.leaf @last(
// CHECK-SAME: %[[V:[^:]*]]: memref<8xf32>
// CHECK: memref.dealloc %[[V]] : memref<8xf32>
// CHECK-NEXT: hpvm.return
hpvm.leaf @last(%x: tensor<8xf32>) -> (tensor<8xf32>) {
  %t = hpvm.tensor.tanh %x : tensor<8xf32>
  hpvm.return %t : tensor<8xf32>
}
// Returns its input unchanged: bufferization returns a copy (the input is
// read-only), which is fresh; the host's buffer itself is never freed.
// CHECK-LABEL: hpvm.leaf @same(
// CHECK-NOT: memref.dealloc
// CHECK: hpvm.return
hpvm.leaf @same(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>) {
  hpvm.return %x : tensor<2x4xf32>
}
hpvm.internal @root(%x: tensor<2x4xf32>) -> (tensor<8xf32>, tensor<2x4xf32>) {
  %a = hpvm.create_node @first : !hpvm.node
  %b = hpvm.create_node @flatten : !hpvm.node
  %c = hpvm.create_node @last : !hpvm.node
  %s = hpvm.create_node @same : !hpvm.node
  hpvm.bind_in %x -> %a[0] : tensor<2x4xf32>
  hpvm.edge %a[0] -> %b[0] one_to_one
  hpvm.edge %b[0] -> %c[0] one_to_one
  hpvm.bind_out %c[0] -> 0
  hpvm.bind_in %x -> %s[0] : tensor<2x4xf32>
  hpvm.bind_out %s[0] -> 1
}
// The host frees the outputs after copying them out; never its own buffers. (Its
// destinations are not declared unaliased, so the outputs are copied; with
// `restrict` the leaves would write into them: destination-outputs.mlir.)
// CHECK-LABEL: func.func @host(
// CHECK: %[[G:.*]] = hpvm.launch @root
// CHECK: %[[R:.*]]:2 = hpvm.wait %[[G]] : memref<8xf32>, memref<2x4xf32>
// CHECK: memref.copy %[[R]]#0
// CHECK-NEXT: memref.dealloc %[[R]]#0 : memref<8xf32>
// CHECK-NEXT: memref.copy %[[R]]#1
// CHECK-NEXT: memref.dealloc %[[R]]#1 : memref<2x4xf32>
// CHECK-NEXT: return
func.func @host(%in: memref<2x4xf32>, %out: memref<8xf32>, %same: memref<2x4xf32>) {
  %t = bufferization.to_tensor %in restrict : memref<2x4xf32> to tensor<2x4xf32>
  %g = hpvm.launch @root(%t) : (tensor<2x4xf32>) -> !hpvm.graph
  %r, %s = hpvm.wait %g : tensor<8xf32>, tensor<2x4xf32>
  bufferization.materialize_in_destination %r in writable %out
      : (tensor<8xf32>, memref<8xf32>) -> ()
  bufferization.materialize_in_destination %s in writable %same
      : (tensor<2x4xf32>, memref<2x4xf32>) -> ()
  return
}

// A leaf instantiated twice keeps its buffers (which instance owns what is not
// tracked): neither consumer frees, the host frees neither output.
// CHECK-LABEL: hpvm.leaf @twice(
// CHECK-LABEL: hpvm.leaf @sink(
// CHECK-NOT: memref.dealloc
// CHECK: hpvm.return
hpvm.leaf @twice(%x: tensor<4xf32>) -> (tensor<4xf32>) {
  %r = hpvm.tensor.relu %x : tensor<4xf32>
  hpvm.return %r : tensor<4xf32>
}
hpvm.leaf @sink(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>) {
  %s = hpvm.tensor.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  hpvm.return %s : tensor<4xf32>
}
hpvm.internal @pair(%x: tensor<4xf32>) -> (tensor<4xf32>) {
  %a = hpvm.create_node @twice : !hpvm.node
  %b = hpvm.create_node @twice : !hpvm.node
  %s = hpvm.create_node @sink : !hpvm.node
  hpvm.bind_in %x -> %a[0] : tensor<4xf32>
  hpvm.bind_in %x -> %b[0] : tensor<4xf32>
  hpvm.edge %a[0] -> %s[0] one_to_one
  hpvm.edge %b[0] -> %s[1] one_to_one
  hpvm.bind_out %s[0] -> 0
}

// A graph without tensors is its author's: a buffer one leaf allocates and
// another receives is not freed by this pass.
// CHECK-LABEL: hpvm.leaf @make(
// CHECK-LABEL: hpvm.leaf @use(
// CHECK-NOT: memref.dealloc
// CHECK: hpvm.return
hpvm.leaf @make() -> (memref<4xf32>) {
  %m = memref.alloc() : memref<4xf32>
  hpvm.return %m : memref<4xf32>
}
hpvm.leaf @use(%m: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  memref.store %z, %m[%c0] : memref<4xf32>
  hpvm.return
}
hpvm.internal @plain() {
  %a = hpvm.create_node @make : !hpvm.node
  %b = hpvm.create_node @use : !hpvm.node
  hpvm.edge %a[0] -> %b[0] one_to_one
}

// A reshape of a buffer the leaf does not own (its parent's input) keeps its
// copy: the view would alias a buffer someone else frees or reuses.
// CHECK-LABEL: hpvm.leaf @flat_host(
// CHECK: memref.copy
// CHECK-NOT: memref.dealloc
// CHECK: hpvm.return
hpvm.leaf @flat_host(%x: tensor<2x4xf32>) -> (tensor<8xf32>) {
  %f = tensor.collapse_shape %x [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  hpvm.return %f : tensor<8xf32>
}
hpvm.internal @host_reshape(%x: tensor<2x4xf32>) -> (tensor<8xf32>) {
  %a = hpvm.create_node @flat_host : !hpvm.node
  hpvm.bind_in %x -> %a[0] : tensor<2x4xf32>
  hpvm.bind_out %a[0] -> 0
}

// An output that fans out (a residual block's input) is freed by the receiver
// every other receiver reaches through edges: here @skip_add, which @skip_branch
// feeds; @skip_branch frees nothing.
// CHECK-LABEL: hpvm.leaf @skip_source(
// CHECK-LABEL: hpvm.leaf @skip_branch(
// CHECK-NOT: memref.dealloc
// CHECK-NOT: hpvm_rt_buffer_last_use
// CHECK: hpvm.return
// CHECK-LABEL: hpvm.leaf @skip_add(
// CHECK-SAME: %[[SKIP:[^:]*]]: memref<4xf32>
// CHECK-NOT: hpvm_rt_buffer_last_use
// CHECK: memref.dealloc %[[SKIP]] : memref<4xf32>
// CHECK: hpvm.return
hpvm.leaf @skip_source(%x: tensor<4xf32>) -> (tensor<4xf32>) {
  %r = hpvm.tensor.relu %x : tensor<4xf32>
  hpvm.return %r : tensor<4xf32>
}
hpvm.leaf @skip_branch(%x: tensor<4xf32>) -> (tensor<4xf32>) {
  %t = hpvm.tensor.tanh %x : tensor<4xf32>
  hpvm.return %t : tensor<4xf32>
}
hpvm.leaf @skip_add(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>) {
  %s = hpvm.tensor.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  hpvm.return %s : tensor<4xf32>
}
hpvm.internal @residual(%x: tensor<4xf32>) -> (tensor<4xf32>) {
  %a = hpvm.create_node @skip_source : !hpvm.node
  %b = hpvm.create_node @skip_branch : !hpvm.node
  %c = hpvm.create_node @skip_add : !hpvm.node
  hpvm.bind_in %x -> %a[0] : tensor<4xf32>
  hpvm.edge %a[0] -> %b[0] one_to_one
  hpvm.edge %a[0] -> %c[0] one_to_one
  hpvm.edge %b[0] -> %c[1] one_to_one
  hpvm.bind_out %c[0] -> 0
}

// Two branches from one output (a downsampling block's, an inception
// module's), neither after the other: each asks the runtime whether it is the
// last of the 2 receivers done with the buffer, and that one frees it.
// CHECK-LABEL: hpvm.leaf @fork_source(
// CHECK-LABEL: hpvm.leaf @fork_left(
// CHECK-SAME: %[[L:[^:]*]]: memref<4xf32>
// CHECK: %[[LA:.*]] = memref.extract_aligned_pointer_as_index %[[L]]
// CHECK: %[[LI:.*]] = arith.index_cast %[[LA]] : index to i64
// CHECK: %[[LP:.*]] = llvm.inttoptr %[[LI]] : i64 to !llvm.ptr
// CHECK: %[[LAST:.*]] = llvm.call @hpvm_rt_buffer_last_use(%[[LP]], %c2_i64) : (!llvm.ptr, i64) -> i32
// CHECK: %[[IS:.*]] = arith.cmpi ne, %[[LAST]], %{{.*}} : i32
// CHECK: scf.if %[[IS]] {
// CHECK-NEXT: memref.dealloc %[[L]] : memref<4xf32>
// CHECK: hpvm.return
// CHECK-LABEL: hpvm.leaf @fork_right(
// CHECK-SAME: %[[R:[^:]*]]: memref<4xf32>
// CHECK: llvm.call @hpvm_rt_buffer_last_use(%{{.*}}, %c2_i64) : (!llvm.ptr, i64) -> i32
// CHECK: scf.if
// CHECK-NEXT: memref.dealloc %[[R]] : memref<4xf32>
// CHECK: hpvm.return
// The join frees both branches' outputs (one receiver each).
// CHECK-LABEL: hpvm.leaf @fork_join(
// CHECK-NOT: hpvm_rt_buffer_last_use
// CHECK-COUNT-2: memref.dealloc
// CHECK: hpvm.return
hpvm.leaf @fork_source(%x: tensor<4xf32>) -> (tensor<4xf32>) {
  %r = hpvm.tensor.relu %x : tensor<4xf32>
  hpvm.return %r : tensor<4xf32>
}
hpvm.leaf @fork_left(%x: tensor<4xf32>) -> (tensor<4xf32>) {
  %t = hpvm.tensor.tanh %x : tensor<4xf32>
  hpvm.return %t : tensor<4xf32>
}
hpvm.leaf @fork_right(%x: tensor<4xf32>) -> (tensor<4xf32>) {
  %t = hpvm.tensor.sigmoid %x : tensor<4xf32>
  hpvm.return %t : tensor<4xf32>
}
hpvm.leaf @fork_join(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>) {
  %s = hpvm.tensor.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  hpvm.return %s : tensor<4xf32>
}
hpvm.internal @fork(%x: tensor<4xf32>) -> (tensor<4xf32>) {
  %a = hpvm.create_node @fork_source : !hpvm.node
  %l = hpvm.create_node @fork_left : !hpvm.node
  %r = hpvm.create_node @fork_right : !hpvm.node
  %j = hpvm.create_node @fork_join : !hpvm.node
  hpvm.bind_in %x -> %a[0] : tensor<4xf32>
  hpvm.edge %a[0] -> %l[0] one_to_one
  hpvm.edge %a[0] -> %r[0] one_to_one
  hpvm.edge %l[0] -> %j[0] one_to_one
  hpvm.edge %r[0] -> %j[1] one_to_one
  hpvm.bind_out %j[0] -> 0
}
