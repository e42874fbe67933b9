// What convert-hpvm-to-cpu does not support yet is refused with a diagnostic.
// RUN: hpvm-opt %s --split-input-file --convert-hpvm-to-cpu --verify-diagnostics

hpvm.leaf @l(%x: f32) -> (f32) {
  hpvm.return %x : f32
}
hpvm.internal @root(%x: f32) -> (f32) {
  %a = hpvm.create_node @l : !hpvm.node
  %b = hpvm.create_node @l : !hpvm.node
  hpvm.bind_in %x -> %a[0] streaming : f32
  // expected-error @+1 {{'hpvm.edge' op a non-streaming edge in a streaming graph is not supported by convert-hpvm-to-cpu yet}}
  hpvm.edge %a[0] -> %b[0] all_to_all
  hpvm.bind_out %b[0] -> 0 streaming
}
func.func @host(%x: f32) -> f32 {
  %g = hpvm.launch @root(%x) streaming : (f32) -> !hpvm.graph
  %r = hpvm.pop %g : f32
  hpvm.wait %g
  return %r : f32
}

// -----

hpvm.leaf @l(%x: f32) -> (f32) {
  hpvm.return %x : f32
}
hpvm.internal @root(%x: f32) -> (f32, f32) {
  %a = hpvm.create_node @l : !hpvm.node
  %b = hpvm.create_node @l : !hpvm.node
  hpvm.bind_in %x -> %a[0] streaming : f32
  hpvm.bind_in %x -> %b[0] streaming : f32
  hpvm.bind_out %a[0] -> 0 streaming
  // expected-error @+1 {{'hpvm.bind_out' op defining the outputs of a streaming graph in several children is not supported by convert-hpvm-to-cpu yet}}
  hpvm.bind_out %b[0] -> 1 streaming
}
func.func @host(%x: f32) -> f32 {
  %g = hpvm.launch @root(%x) streaming : (f32) -> !hpvm.graph
  %r:2 = hpvm.pop %g : f32, f32
  hpvm.wait %g
  return %r#0 : f32
}

// -----

hpvm.leaf @l(%x: f32) -> (f32) {
  hpvm.return %x : f32
}
hpvm.internal @inner(%x: f32) -> (f32) {
  %a = hpvm.create_node @l : !hpvm.node
  // expected-error @+1 {{'hpvm.bind_in' op a streaming bind below the root of a streaming graph is not supported by convert-hpvm-to-cpu yet}}
  hpvm.bind_in %x -> %a[0] streaming : f32
  hpvm.bind_out %a[0] -> 0
}

// -----

hpvm.leaf @l(%c: i1) {
  scf.if %c {
    // expected-error @+1 {{'hpvm.barrier' op inside control flow is not supported by convert-hpvm-to-cpu yet; expected it at the top level of the leaf}}
    hpvm.barrier
  }
  hpvm.return
}

// -----

hpvm.leaf @l() {
  // expected-error @+1 {{'hpvm.alloc' op memory of 'hpvm.alloc' used inside its leaf (rather than returned to the siblings that share it) is not supported by convert-hpvm-to-cpu yet}}
  %m = hpvm.alloc() : memref<4xf32>
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0] : memref<4xf32>
  hpvm.return
}

// -----

hpvm.leaf @scratch() -> (memref<4xf32>) {
  %m = hpvm.alloc() : memref<4xf32>
  hpvm.return %m : memref<4xf32>
}
hpvm.leaf @use(%m: memref<4xf32>) {
  hpvm.return
}
hpvm.internal @root(%n: index) {
  // expected-error @+1 {{'hpvm.create_node' op a replicated leaf with 'hpvm.alloc' (allocate once per tile in a single-instance leaf) is not supported by convert-hpvm-to-cpu yet}}
  %s = hpvm.create_node @scratch [%n] : !hpvm.node
  %u = hpvm.create_node @use : !hpvm.node
  hpvm.edge %s[0] -> %u[0] all_to_all
}

// -----

// expected-error @+2 {{'hpvm.leaf' op input 0 of type 'tensor<4xf32>' is not supported by convert-hpvm-to-cpu yet}}
// expected-error @+1 {{'hpvm.leaf' op output 0 of type 'tensor<4xf32>' is not supported by convert-hpvm-to-cpu yet}}
hpvm.leaf @l(%x: tensor<4xf32>) -> (tensor<4xf32>) {
  // expected-error @+1 {{'hpvm.tensor.relu' op a tensor op is not supported by convert-hpvm-to-cpu yet}}
  %r = hpvm.tensor.relu %x : tensor<4xf32>
  hpvm.return %r : tensor<4xf32>
}

// -----

// A value per instance (computed, not an input passed on) cannot also be bound
// out or feed an all_to_all edge; a value passed on may (convert-hpvm-to-cpu.mlir).
hpvm.leaf @f(%x: f32) -> (f32) {
  %y = arith.addf %x, %x : f32
  hpvm.return %y : f32
}
hpvm.leaf @g(%x: f32) -> (f32) {
  %c = arith.constant 0 : index
  hpvm.return %x : f32
}
hpvm.internal @root(%x: f32, %n: index) -> (f32) {
  %a = hpvm.create_node @f [%n] : !hpvm.node
  %b = hpvm.create_node @g [%n] : !hpvm.node
  hpvm.bind_in %x -> %a[0] : f32
  // expected-error @+1 {{'hpvm.edge' op a one_to_one edge carrying a value per instance from an output that is also bound out is not supported by convert-hpvm-to-cpu yet}}
  hpvm.edge %a[0] -> %b[0] one_to_one
  hpvm.bind_out %a[0] -> 0
}

// -----

hpvm.leaf @f(%x: f32) -> (f32) {
  %y = arith.addf %x, %x : f32
  hpvm.return %y : f32
}
hpvm.leaf @g(%x: f32) {
  hpvm.return
}
hpvm.internal @root(%x: f32, %n: index) {
  %a = hpvm.create_node @f [%n] : !hpvm.node
  %b = hpvm.create_node @g [%n] : !hpvm.node
  %c = hpvm.create_node @g : !hpvm.node
  hpvm.bind_in %x -> %a[0] : f32
  // expected-error @+1 {{'hpvm.edge' op a one_to_one edge carrying a value per instance from an output that also feeds an all_to_all edge is not supported by convert-hpvm-to-cpu yet}}
  hpvm.edge %a[0] -> %b[0] one_to_one
  hpvm.edge %a[0] -> %c[0] all_to_all
}

// -----

hpvm.leaf @l(%x: f32) -> (f32) {
  hpvm.return %x : f32
}
func.func @host(%g: !hpvm.graph) -> f32 {
  // expected-error @+1 {{'hpvm.wait' op waiting on a graph handle that is not the result of an 'hpvm.launch' in the same function is not supported by convert-hpvm-to-cpu yet}}
  %r = hpvm.wait %g : f32
  return %r : f32
}

// -----

// A barrier on one path only: the join is reached after 0 and after 1 barrier.
hpvm.leaf @l(%c: i1) {
  llvm.cond_br %c, ^bb1, ^bb2
^bb1:
  hpvm.barrier
  llvm.br ^bb2
^bb2:
  // expected-error @+1 {{is reached after 0 and after 1 barriers of leaf 'l' on different paths (a barrier in a loop or in a branch)}}
  hpvm.return
}

// -----

// The same where the join's first op has no location (clang gives some ops of imported C
// none): the error points at the first op that has one.
hpvm.leaf @l(%c: i1, %p: !llvm.ptr) {
  llvm.cond_br %c, ^bb1, ^bb2
^bb1:
  hpvm.barrier
  llvm.br ^bb2
^bb2:
  %v = llvm.mlir.constant(1 : i32) : i32 loc(unknown)
  // expected-error @+1 {{is reached after 0 and after 1 barriers of leaf 'l' on different paths}}
  llvm.store %v, %p : i32, !llvm.ptr
  hpvm.return
}

// -----

// Different barriers on the two paths.
hpvm.leaf @l(%c: i1) {
  llvm.cond_br %c, ^bb1, ^bb2
^bb1:
  // expected-error @+1 {{'hpvm.barrier' op is one of several barriers that end phase 0 on different paths}}
  hpvm.barrier
  hpvm.return
^bb2:
  hpvm.barrier
  hpvm.return
}

// -----

hpvm.leaf @l(%x: f32) -> (f32) {
  hpvm.return %x : f32
}
func.func private @keep(!hpvm.graph)
func.func @host(%x: f32) -> f32 {
  // expected-error @+1 {{'hpvm.launch' op a graph handle used other than by 'hpvm.wait' and branches is not supported by convert-hpvm-to-cpu yet}}
  %g = hpvm.launch @l(%x) : (f32) -> !hpvm.graph
  func.call @keep(%g) : (!hpvm.graph) -> ()
  %r = hpvm.wait %g : f32
  return %r : f32
}

// -----

hpvm.leaf @l(%x: f32) -> (f32) {
  hpvm.return %x : f32
}
func.func @host(%g: !hpvm.graph, %x: f32) {
  // expected-error @+1 {{'hpvm.push' op streaming into a graph handle that is not the result of an 'hpvm.launch' in the same function is not supported by convert-hpvm-to-cpu yet}}
  hpvm.push %g(%x) : f32
  return
}

// -----

hpvm.leaf @l(%x: f32) -> (f32) {
  hpvm.return %x : f32
}
hpvm.internal @inner(%x: f32) -> (f32) {
  %a = hpvm.create_node @l : !hpvm.node
  %b = hpvm.create_node @l : !hpvm.node
  hpvm.bind_in %x -> %a[0] : f32
  // expected-error @+1 {{'hpvm.edge' op a streaming edge below the root of a streaming graph is not supported by convert-hpvm-to-cpu yet}}
  hpvm.edge %a[0] -> %b[0] all_to_all streaming
  hpvm.bind_out %b[0] -> 0
}

// -----

hpvm.leaf @l(%x: f32) -> (f32) {
  hpvm.return %x : f32
}
hpvm.internal @root(%x: f32, %n: index) -> (f32) {
  %a = hpvm.create_node @l [%n] : !hpvm.node
  %b = hpvm.create_node @l [%n] : !hpvm.node
  hpvm.bind_in %x -> %a[0] streaming : f32
  // expected-error @+1 {{'hpvm.edge' op a one_to_one edge between replicated stages of a streaming graph is not supported by convert-hpvm-to-cpu yet}}
  hpvm.edge %a[0] -> %b[0] one_to_one streaming
  hpvm.bind_out %b[0] -> 0 streaming
}
func.func @host(%x: f32, %n: index) -> f32 {
  %g = hpvm.launch @root(%x, %n) streaming : (f32, index) -> !hpvm.graph
  %r = hpvm.pop %g : f32
  hpvm.wait %g
  return %r : f32
}

// -----

hpvm.leaf @l(%x: f32) -> (f32) {
  hpvm.barrier
  hpvm.return %x : f32
}
hpvm.leaf @m(%x: f32) {
  hpvm.return
}
hpvm.internal @root(%x: f32, %n: index) {
  %a = hpvm.create_node @l [%n] : !hpvm.node
  %b = hpvm.create_node @m [%n] : !hpvm.node
  hpvm.bind_in %x -> %a[0] : f32
  // expected-error @+1 {{'hpvm.edge' op a one_to_one edge carrying values into or out of a leaf with 'hpvm.barrier' is not supported by convert-hpvm-to-cpu yet}}
  hpvm.edge %a[0] -> %b[0] one_to_one
}

// -----

hpvm.leaf @scratch() -> (memref<16xf32>) {
  %m = hpvm.alloc() : memref<16xf32>
  hpvm.return %m : memref<16xf32>
}
hpvm.internal @tile() -> (memref<16xf32>) {
  %s = hpvm.create_node @scratch : !hpvm.node
  // expected-error @+1 {{'hpvm.bind_out' op binding 'hpvm.alloc' memory out of its internal node (it is freed when the internal node ends) is not supported by convert-hpvm-to-cpu yet}}
  hpvm.bind_out %s[0] -> 0
}

// -----

// A return reached before the leaf's barrier.
hpvm.leaf @l(%c: i1) {
  llvm.cond_br %c, ^bb1, ^bb2
^bb1:
  // expected-error @+1 {{'hpvm.return' op is reached after 0 of the 1 barriers of its leaf; convert-hpvm-to-cpu needs every instance to pass every barrier}}
  hpvm.return
^bb2:
  hpvm.barrier
  hpvm.return
}

// -----

hpvm.leaf @l() {
  // expected-error @+1 {{a value of type 'tensor<4xf32>' lives across 'hpvm.barrier', which the CPU backend cannot keep}}
  %t = arith.constant dense<1.0> : tensor<4xf32>
  hpvm.barrier
  %c = arith.constant 0 : index
  %v = tensor.extract %t[%c] : tensor<4xf32>
  hpvm.return
}

// -----

func.func @host(%m: memref<?xcomplex<f32>>) {
  // expected-error @+1 {{'hpvm.track' op cannot track a memref of 'complex<f32>' on the CPU backend; expected integer, float or index elements}}
  hpvm.track %m : memref<?xcomplex<f32>>
  return
}

// -----

hpvm.leaf @wide(%x: f32) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
  hpvm.return %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
}
hpvm.leaf @sink(%x: f32) {
  hpvm.return
}
hpvm.internal @root(%x: f32, %n: index) {
  %a = hpvm.create_node @wide [%n] : !hpvm.node
  %b = hpvm.create_node @sink [%n] : !hpvm.node
  hpvm.bind_in %x -> %a[0] : f32
  // expected-error @+1 {{'hpvm.edge' op a one_to_one edge on a port beyond 63 is not supported by convert-hpvm-to-cpu yet}}
  hpvm.edge %a[64] -> %b[0] one_to_one
}

// -----

// A hand-written kernel site on an internal node that is no tile: the node
// keeps its CPU version (convert-hpvm-to-gpu makes kernels of tiles only).
llvm.mlir.global internal @site() : !llvm.struct<(ptr, ptr, ptr, ptr, ptr, ptr)>
hpvm.leaf @lane() {
  hpvm.return
}
// expected-warning @+1 {{runs on the CPU: its kernel site is not usable, because it has several replicated children (a tile kernel runs one replicated leaf)}}
hpvm.internal @two_grids(%n: index) attributes {hpvm.kernel = @site} {
  %a = hpvm.create_node @lane [%n] : !hpvm.node
  %b = hpvm.create_node @lane [%n] : !hpvm.node
}
hpvm.internal @root(%n: index) {
  %t = hpvm.create_node @two_grids [%n] : !hpvm.node
  hpvm.bind_in %n -> %t[0] : index
}
func.func @run(%n: index) {
  %g = hpvm.launch @root(%n) : (index) -> !hpvm.graph
  hpvm.wait %g
  return
}

// -----

// A lane variant that does not match its leaf.
hpvm.leaf private @wrong__lanes4(%x: f32) -> i1 attributes {hpvm.lanes = 4} {
  %true = arith.constant true
  hpvm.return %true : i1
}
// expected-error @+1 {{'hpvm.vector_variant' names @wrong__lanes4, which is not a lane variant of this leaf (a leaf with 'hpvm.lanes', the same inputs, and the outputs i1 then the leaf's)}}
hpvm.leaf private @wrong(%x: !llvm.ptr) attributes {hpvm.vector_variant = @wrong__lanes4} {
  hpvm.return
}

// -----

// A block variant whose lanes differ from the lane variant's.
hpvm.leaf private @two__lanes4(%x: !llvm.ptr) -> i1 attributes {hpvm.lanes = 4} {
  %true = arith.constant true
  hpvm.return %true : i1
}
hpvm.leaf private @two__lanes8x2(%x: !llvm.ptr) -> i1 attributes {hpvm.lanes = 8, hpvm.rows = 2} {
  %true = arith.constant true
  hpvm.return %true : i1
}
// expected-error @+1 {{'hpvm.block_variant' names @two__lanes8x2, which is not a block variant of this leaf (a leaf with 'hpvm.rows' and the lanes and type of its lane variant; the leaf's outputs inputs passed on)}}
hpvm.leaf private @two(%x: !llvm.ptr) attributes {hpvm.vector_variant = @two__lanes4, hpvm.block_variant = @two__lanes8x2} {
  hpvm.return
}

// -----

// A remainder variant without the lane count input.
hpvm.leaf private @rest__lanes4(%x: !llvm.ptr) -> i1 attributes {hpvm.lanes = 4} {
  %true = arith.constant true
  hpvm.return %true : i1
}
hpvm.leaf private @rest__lanes4_masked(%x: !llvm.ptr) -> i1 attributes {hpvm.lanes = 4} {
  %true = arith.constant true
  hpvm.return %true : i1
}
// expected-error @+1 {{'hpvm.remainder_variant' names @rest__lanes4_masked, which is not a remainder variant of this leaf (a leaf with the lanes and outputs of its lane variant and its inputs then an i64 lane count)}}
hpvm.leaf private @rest(%x: !llvm.ptr) attributes {hpvm.vector_variant = @rest__lanes4, hpvm.remainder_variant = @rest__lanes4_masked} {
  hpvm.return
}

// -----

// A sums variant without its plan.
hpvm.leaf private @lone__sums(%x: !llvm.ptr, %s: !llvm.ptr, %n: i64) {
  hpvm.return
}
// expected-error @+1 {{'hpvm.contraction_variant' and 'hpvm.contraction_plan' go together: only one is here}}
hpvm.leaf private @lone(%x: !llvm.ptr) attributes {hpvm.contraction_variant = @lone__sums} {
  hpvm.return
}

// -----

// A sums variant without the buffer's inputs.
hpvm.leaf private @dot__sums(%x: !llvm.ptr) {
  hpvm.return
}
llvm.func private @dot__sums_plan(%x: !llvm.ptr, %a: i64, %b: i64, %c: i64, %d: i64) -> !llvm.ptr {
  %null = llvm.mlir.zero : !llvm.ptr
  llvm.return %null : !llvm.ptr
}
// expected-error @+1 {{'hpvm.contraction_variant' names @dot__sums, which is not a sums variant of this leaf (a leaf with its inputs, then a pointer and an i64, and its outputs; the leaf's outputs inputs passed on)}}
hpvm.leaf private @dot(%x: !llvm.ptr) attributes {hpvm.contraction_variant = @dot__sums, hpvm.contraction_plan = @dot__sums_plan} {
  hpvm.return
}

// -----

// A plan that does not take the grid's extents.
hpvm.leaf private @mm__sums(%x: !llvm.ptr, %s: !llvm.ptr, %n: i64) {
  hpvm.return
}
llvm.func private @mm__sums_plan(%x: !llvm.ptr) -> !llvm.ptr {
  %null = llvm.mlir.zero : !llvm.ptr
  llvm.return %null : !llvm.ptr
}
// expected-error @+1 {{'hpvm.contraction_plan' names @mm__sums_plan, which is not a plan of this leaf (an llvm.func of the leaf's inputs and four i64 extents returning a pointer)}}
hpvm.leaf private @mm(%x: !llvm.ptr) attributes {hpvm.contraction_variant = @mm__sums, hpvm.contraction_plan = @mm__sums_plan} {
  hpvm.return
}

// -----

// A block variant of no lane variant.
hpvm.leaf private @alone__lanes4x2(%x: !llvm.ptr) -> i1 attributes {hpvm.lanes = 4, hpvm.rows = 2} {
  %true = arith.constant true
  hpvm.return %true : i1
}
// expected-error @+1 {{'hpvm.block_variant' needs the lane variant it extends: 'hpvm.vector_variant' is missing}}
hpvm.leaf private @alone(%x: !llvm.ptr) attributes {hpvm.block_variant = @alone__lanes4x2} {
  hpvm.return
}

// -----

// A tile variant with the inputs of another leaf.
hpvm.leaf private @row__tile8(%x: f32) -> i1 attributes {hpvm.lanes = 8} {
  %true = arith.constant true
  hpvm.return %true : i1
}
// expected-error @+1 {{'hpvm.tile_variant' names @row__tile8, which is not a tile variant of this leaf (a leaf with 'hpvm.lanes', the same inputs and one i1 output; the leaf without barriers, its outputs inputs passed on)}}
hpvm.leaf private @row(%x: !llvm.ptr) attributes {hpvm.tile_variant = @row__tile8} {
  hpvm.return
}

// -----

// A tile variant of a leaf whose output is computed, not an input passed on:
// no instance of the tile variant gives it.
hpvm.leaf private @sum__tile8(%x: !llvm.ptr) -> i1 attributes {hpvm.lanes = 8} {
  %true = arith.constant true
  hpvm.return %true : i1
}
// expected-error @+1 {{'hpvm.tile_variant' names @sum__tile8, which is not a tile variant of this leaf (a leaf with 'hpvm.lanes', the same inputs and one i1 output; the leaf without barriers, its outputs inputs passed on)}}
hpvm.leaf private @sum(%x: !llvm.ptr) -> (f32) attributes {hpvm.tile_variant = @sum__tile8} {
  %f = arith.constant 1.0 : f32
  hpvm.return %f : f32
}

// -----

// A handle through a branch: the launches' blocks must have one layout.
hpvm.leaf @count(%x: f32) -> (i64) {
  %c = arith.constant 1 : i64
  hpvm.return %c : i64
}
hpvm.leaf @scaled(%x: i64) -> (i64) {
  hpvm.return %x : i64
}
func.func @host(%which: i1, %x: f32, %y: i64) -> i64 {
  cf.cond_br %which, ^count, ^scaled
^count:
  %a = hpvm.launch @count(%x) : (f32) -> !hpvm.graph
  cf.br ^join(%a : !hpvm.graph)
^scaled:
  // expected-note @+1 {{launch of @scaled}}
  %b = hpvm.launch @scaled(%y) : (i64) -> !hpvm.graph
  cf.br ^join(%b : !hpvm.graph)
^join(%g: !hpvm.graph):
  // expected-error @+1 {{'hpvm.wait' op waiting on a graph handle that may come from launches of @count and @scaled, whose inputs or outputs differ is not supported by convert-hpvm-to-cpu yet}}
  %r = hpvm.wait %g : i64
  return %r : i64
}

// -----

// A streaming handle stays where it was launched (pushes and pops need it).
hpvm.leaf @stage(%x: f32) {
  hpvm.return
}
func.func @host(%which: i1, %x: f32) {
  // expected-error @+1 {{'hpvm.launch' op a streaming graph handle used other than by 'hpvm.wait', 'hpvm.push' and 'hpvm.pop' (a branch, say) is not supported by convert-hpvm-to-cpu yet}}
  %a = hpvm.launch @stage(%x) streaming : (f32) -> !hpvm.graph
  cf.br ^join(%a : !hpvm.graph)
^join(%g: !hpvm.graph):
  hpvm.wait %g
  return
}

// -----

// A handle passed on through a branch is still only for waiting.
hpvm.leaf @l(%x: f32) {
  hpvm.return
}
func.func private @keep(!hpvm.graph)
func.func @host(%x: f32) {
  %a = hpvm.launch @l(%x) : (f32) -> !hpvm.graph
  cf.br ^join(%a : !hpvm.graph)
^join(%g: !hpvm.graph):
  // expected-error @+1 {{'func.call' op a graph handle used other than by 'hpvm.wait' and branches is not supported by convert-hpvm-to-cpu yet}}
  func.call @keep(%g) : (!hpvm.graph) -> ()
  hpvm.wait %g
  return
}

// -----

// A block argument that merges a launch's handle with the function's.
hpvm.leaf @l(%x: f32) {
  hpvm.return
}
// expected-error @+1 {{'func.func' op a graph handle in a block argument that may come from elsewhere than an 'hpvm.launch' in the same function (a function argument, say) is not supported by convert-hpvm-to-cpu yet}}
func.func @host(%x: f32, %given: !hpvm.graph, %which: i1) {
  %a = hpvm.launch @l(%x) : (f32) -> !hpvm.graph
  cf.cond_br %which, ^join(%a : !hpvm.graph), ^join(%given : !hpvm.graph)
^join(%g: !hpvm.graph):
  cf.br ^done
^done:
  return
}
