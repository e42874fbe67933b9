// One case per verifier rule of the hpvm dialect (docs/Dialect/HPVM.md); each checks
// the diagnostic says what was expected and what was found.
// RUN: hpvm-opt %s --split-input-file --verify-diagnostics

//===----------------------------------------------------------------------===//
// create_node
//===----------------------------------------------------------------------===//

hpvm.internal @root() {
  // expected-error @+1 {{'hpvm.create_node' op refers to @missing, which is not defined}}
  %n = hpvm.create_node @missing : !hpvm.node
}

// -----

func.func @not_a_node() {
  return
}
hpvm.internal @root() {
  // expected-error @+1 {{'hpvm.create_node' op refers to @not_a_node, a 'func.func'; expected a node definition (hpvm.leaf or hpvm.internal)}}
  %n = hpvm.create_node @not_a_node : !hpvm.node
}

// -----

hpvm.leaf @leaf() {
  hpvm.return
}
hpvm.internal @root(%n: index) {
  // expected-error @+1 {{'hpvm.create_node' op expects 0 to 3 replication dimensions, found 4}}
  %c = hpvm.create_node @leaf [%n, %n, %n, %n] : !hpvm.node
}

// -----

hpvm.leaf @leaf() {
  hpvm.return
}
hpvm.leaf @outer() {
  // expected-error @+1 {{'hpvm.create_node' op expects parent op 'hpvm.internal'}}
  %c = hpvm.create_node @leaf : !hpvm.node
  hpvm.return
}

// -----

//===----------------------------------------------------------------------===//
// Ports
//===----------------------------------------------------------------------===//

hpvm.leaf @producer() -> (f32, i64) {
  %f = arith.constant 1.0 : f32
  %i = arith.constant 1 : i64
  hpvm.return %f, %i : f32, i64
}
hpvm.leaf @consumer(%x: f32) {
  hpvm.return
}
hpvm.internal @root() {
  %p = hpvm.create_node @producer : !hpvm.node
  %q = hpvm.create_node @consumer : !hpvm.node
  // expected-error @+1 {{'hpvm.edge' op source port 3 out of range: @producer has 2 outputs}}
  hpvm.edge %p[3] -> %q[0] all_to_all
}

// -----

hpvm.leaf @producer() -> (f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f : f32
}
hpvm.leaf @consumer(%x: f32) {
  hpvm.return
}
hpvm.internal @root() {
  %p = hpvm.create_node @producer : !hpvm.node
  %q = hpvm.create_node @consumer : !hpvm.node
  // expected-error @+1 {{'hpvm.edge' op destination port 1 out of range: @consumer has 1 input}}
  hpvm.edge %p[0] -> %q[1] all_to_all
}

// -----

hpvm.leaf @producer() -> (f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f : f32
}
hpvm.internal @root() {
  %p = hpvm.create_node @producer : !hpvm.node
  %q = hpvm.create_node @producer : !hpvm.node
  // expected-error @+1 {{'hpvm.edge' op attribute 'dest_port' failed to satisfy constraint: 32-bit signless integer attribute whose value is non-negative}}
  hpvm.edge %p[0] -> %q[-1] all_to_all
}

// -----

hpvm.leaf @leaf(%x: f32) {
  hpvm.return
}
hpvm.internal @root(%x: f32) {
  %l = hpvm.create_node @leaf : !hpvm.node
  // expected-error @+1 {{'hpvm.bind_in' op destination port 2 out of range: @leaf has 1 input}}
  hpvm.bind_in %x -> %l[2] : f32
}

// -----

hpvm.leaf @leaf() -> (f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f : f32
}
hpvm.internal @root() -> (f32) {
  %l = hpvm.create_node @leaf : !hpvm.node
  // expected-error @+1 {{'hpvm.bind_out' op source port 1 out of range: @leaf has 1 output}}
  hpvm.bind_out %l[1] -> 0
}

// -----

hpvm.leaf @leaf() -> (f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f : f32
}
hpvm.internal @root() -> (f32) {
  %l = hpvm.create_node @leaf : !hpvm.node
  // expected-error @+1 {{'hpvm.bind_out' op output index 1 out of range: @root has 1 output}}
  hpvm.bind_out %l[0] -> 1
}

// -----

//===----------------------------------------------------------------------===//
// Types across edges and binds
//===----------------------------------------------------------------------===//

hpvm.leaf @producer() -> (f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f : f32
}
hpvm.leaf @consumer(%x: i64) {
  hpvm.return
}
hpvm.internal @root() {
  %p = hpvm.create_node @producer : !hpvm.node
  %q = hpvm.create_node @consumer : !hpvm.node
  // expected-error @+1 {{'hpvm.edge' op type mismatch: output 0 of @producer is 'f32' but input 0 of @consumer is 'i64'}}
  hpvm.edge %p[0] -> %q[0] all_to_all
}

// -----

hpvm.leaf @leaf(%x: memref<?xi32>) {
  hpvm.return
}
hpvm.internal @root(%x: memref<?xf32>) {
  %l = hpvm.create_node @leaf : !hpvm.node
  // expected-error @+1 {{'hpvm.bind_in' op type mismatch: input 0 of @root is 'memref<?xf32>' but input 0 of @leaf is 'memref<?xi32>'}}
  hpvm.bind_in %x -> %l[0] : memref<?xf32>
}

// -----

hpvm.leaf @leaf() -> (f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f : f32
}
hpvm.internal @root() -> (f64) {
  %l = hpvm.create_node @leaf : !hpvm.node
  // expected-error @+1 {{'hpvm.bind_out' op type mismatch: output 0 of @leaf is 'f32' but output 0 of @root is 'f64'}}
  hpvm.bind_out %l[0] -> 0
}

// -----

//===----------------------------------------------------------------------===//
// Uniqueness: one feeder per input, one bind per output (an output may feed
// several edges: ops.mlir)
//===----------------------------------------------------------------------===//

hpvm.leaf @producer() -> (f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f : f32
}
hpvm.leaf @consumer(%x: f32) {
  hpvm.return
}
hpvm.internal @root() {
  %p = hpvm.create_node @producer : !hpvm.node
  %p2 = hpvm.create_node @producer : !hpvm.node
  %q = hpvm.create_node @consumer : !hpvm.node
  // expected-note @+1 {{first fed here}}
  hpvm.edge %p[0] -> %q[0] all_to_all
  // expected-error @+1 {{'hpvm.edge' op input 0 of @consumer is the destination of two edges; expected exactly one edge or bind_in}}
  hpvm.edge %p2[0] -> %q[0] all_to_all
}

// -----

hpvm.leaf @leaf(%x: f32) {
  hpvm.return
}
hpvm.internal @root(%x: f32, %y: f32) {
  %l = hpvm.create_node @leaf : !hpvm.node
  // expected-note @+1 {{first fed here}}
  hpvm.bind_in %x -> %l[0] : f32
  // expected-error @+1 {{'hpvm.bind_in' op input 0 of @leaf is bound twice by hpvm.bind_in; expected exactly one edge or bind_in}}
  hpvm.bind_in %y -> %l[0] : f32
}

// -----

hpvm.leaf @producer() -> (f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f : f32
}
hpvm.leaf @consumer(%x: f32) {
  hpvm.return
}
hpvm.internal @root(%x: f32) {
  %p = hpvm.create_node @producer : !hpvm.node
  %q = hpvm.create_node @consumer : !hpvm.node
  // expected-note @+1 {{first fed here}}
  hpvm.edge %p[0] -> %q[0] all_to_all
  // expected-error @+1 {{'hpvm.bind_in' op input 0 of @consumer is fed by both an edge and a bind_in; expected exactly one edge or bind_in}}
  hpvm.bind_in %x -> %q[0] : f32
}

// -----

hpvm.leaf @leaf(%x: f32, %y: memref<?xf32>) {
  hpvm.return
}
hpvm.internal @root(%x: f32) {
  // expected-error @+1 {{'hpvm.create_node' op input 1 ('memref<?xf32>') of @leaf is never fed: expected one hpvm.edge or hpvm.bind_in to it}}
  %l = hpvm.create_node @leaf : !hpvm.node
  hpvm.bind_in %x -> %l[0] : f32
}

// -----

hpvm.leaf @leaf() -> (f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f : f32
}
hpvm.internal @root() -> (f32) {
  %l = hpvm.create_node @leaf : !hpvm.node
  %m = hpvm.create_node @leaf : !hpvm.node
  // expected-note @+1 {{first bound here}}
  hpvm.bind_out %l[0] -> 0
  // expected-error @+1 {{'hpvm.bind_out' op output 0 of @root is bound twice; expected exactly once}}
  hpvm.bind_out %m[0] -> 0
}

// -----

hpvm.leaf @leaf() -> (f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f : f32
}
// expected-error @+1 {{'hpvm.internal' op output 1 ('i64') is never bound: expected one hpvm.bind_out to it}}
hpvm.internal @root() -> (f32, i64) {
  %l = hpvm.create_node @leaf : !hpvm.node
  hpvm.bind_out %l[0] -> 0
}

// -----

//===----------------------------------------------------------------------===//
// Edge endpoints and bind sources
//===----------------------------------------------------------------------===//

hpvm.leaf @leaf(%x: f32) {
  hpvm.return
}
hpvm.internal @root(%x: f32) {
  %l = hpvm.create_node @leaf : !hpvm.node
  %c = arith.constant 1.0 : f32
  // expected-error @+1 {{'hpvm.bind_in' op expects an input (block argument) of the enclosing hpvm.internal; found a value defined by 'arith.constant'}}
  hpvm.bind_in %c -> %l[0] : f32
}

// -----

//===----------------------------------------------------------------------===//
// one_to_one edges
//===----------------------------------------------------------------------===//

hpvm.leaf @f(%x: f32) -> (f32) {
  hpvm.return %x : f32
}
hpvm.internal @root(%x: f32, %n: index) {
  %a = hpvm.create_node @f [%n] : !hpvm.node
  %b = hpvm.create_node @f [%n, %n] : !hpvm.node
  hpvm.bind_in %x -> %a[0] : f32
  // expected-error @+1 {{'hpvm.edge' op one_to_one edge joins @f (child #0) with 1 dimension to @f (child #1) with 2 dimensions; expected grids of equal rank}}
  hpvm.edge %a[0] -> %b[0] one_to_one
}

// -----

hpvm.leaf @f(%x: f32) -> (f32) {
  hpvm.return %x : f32
}
hpvm.leaf @g(%x: f32) {
  hpvm.return
}
hpvm.internal @root(%x: f32) {
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %a = hpvm.create_node @f [%c16, %c16] : !hpvm.node
  %b = hpvm.create_node @g [%c16, %c32] : !hpvm.node
  hpvm.bind_in %x -> %a[0] : f32
  // expected-error @+1 {{'hpvm.edge' op one_to_one edge joins grids of different extents: dimension 1 is 16 in @f but 32 in @g}}
  hpvm.edge %a[0] -> %b[0] one_to_one
}

// -----

//===----------------------------------------------------------------------===//
// Acyclic child graphs, no recursion
//===----------------------------------------------------------------------===//

hpvm.leaf @f(%x: f32) -> (f32) {
  hpvm.return %x : f32
}
hpvm.internal @root() {
  %a = hpvm.create_node @f : !hpvm.node
  // expected-error @+1 {{'hpvm.edge' op connects @f to itself; the child graph must be acyclic}}
  hpvm.edge %a[0] -> %a[0] all_to_all
}

// -----

hpvm.leaf @f(%x: f32) -> (f32) {
  hpvm.return %x : f32
}
hpvm.leaf @g(%x: f32) -> (f32) {
  hpvm.return %x : f32
}
hpvm.leaf @h(%x: f32) -> (f32) {
  hpvm.return %x : f32
}
hpvm.internal @root() {
  %a = hpvm.create_node @f : !hpvm.node
  %b = hpvm.create_node @g : !hpvm.node
  %c = hpvm.create_node @h : !hpvm.node
  hpvm.edge %a[0] -> %b[0] all_to_all
  hpvm.edge %b[0] -> %c[0] all_to_all
  // expected-error @+1 {{'hpvm.edge' op closes a cycle in the child graph of @root: @f -> @g -> @h -> @f; the graph must be acyclic}}
  hpvm.edge %c[0] -> %a[0] all_to_all
}

// -----

// expected-error @+1 {{'hpvm.internal' op instantiates itself: @self -> @self; the node hierarchy must not be recursive}}
hpvm.internal @self() {
  %s = hpvm.create_node @self : !hpvm.node
}

// -----

hpvm.leaf @leaf() {
  hpvm.return
}
// expected-error @+1 {{'hpvm.internal' op instantiates itself: @a -> @b -> @a; the node hierarchy must not be recursive}}
hpvm.internal @a() {
  %b = hpvm.create_node @b : !hpvm.node
}
hpvm.internal @b() {
  %a = hpvm.create_node @a : !hpvm.node
  %l = hpvm.create_node @leaf : !hpvm.node
}

// -----

//===----------------------------------------------------------------------===//
// Internal node bodies hold only structure and extent arithmetic
//===----------------------------------------------------------------------===//

hpvm.internal @root(%m: memref<?xindex>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'memref.load' op cannot appear in 'hpvm.internal' @root: an internal node holds only graph ops and side-effect-free scalar arithmetic computing child extents}}
  %n = memref.load %m[%c0] : memref<?xindex>
}

// -----

func.func private @size() -> index
hpvm.internal @root() {
  // expected-error @+1 {{'func.call' op cannot appear in 'hpvm.internal' @root: an internal node holds only graph ops}}
  %n = func.call @size() : () -> index
}

// -----

hpvm.internal @root() {
  // expected-error @+1 {{'hpvm.return' op expects parent op 'hpvm.leaf'}}
  hpvm.return
}

// -----

//===----------------------------------------------------------------------===//
// Node signatures and bodies
//===----------------------------------------------------------------------===//

hpvm.leaf @leaf() -> (f32, i64) {
  %f = arith.constant 1.0 : f32
  // expected-error @+1 {{'hpvm.return' op returns (f32) but @leaf has outputs (f32, i64)}}
  hpvm.return %f : f32
}

// -----

// expected-error @+1 {{'hpvm.leaf' op input 0 has type '!hpvm.node', but node and graph handles cannot cross node boundaries}}
hpvm.leaf @leaf(%n: !hpvm.node) {
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.internal' op output 0 has type '!hpvm.graph', but node and graph handles cannot cross node boundaries}}
hpvm.internal @root() -> (!hpvm.graph) {
}

// -----

// expected-error @+1 {{expected a body: node definitions cannot be declarations}}
hpvm.leaf @declaration()

// -----

// expected-error @+1 {{expected a non-empty body ending in 'hpvm.return'}}
hpvm.leaf @empty() {}

// -----

//===----------------------------------------------------------------------===//
// hpvm.targets and hpvm.access
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'hpvm.targets' expects at least one target, found []}}
hpvm.leaf @leaf() attributes {hpvm.targets = []} {
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.targets' lists target 'gpu' twice}}
hpvm.leaf @leaf() attributes {hpvm.targets = [#hpvm.target<gpu>, #hpvm.target<cpu>, #hpvm.target<gpu>]} {
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.targets' expects #hpvm.target attributes, found "gpu"}}
hpvm.leaf @leaf() attributes {hpvm.targets = ["gpu"]} {
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.targets' is only valid on node definitions (hpvm.leaf, hpvm.internal), found on 'func.func'}}
func.func @f() attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  return
}

// -----

// expected-error @+1 {{'hpvm.access' on argument 1 expects a memref or !llvm.ptr argument, found 'f32'}}
hpvm.leaf @leaf(%a: memref<?xf32> {hpvm.access = #hpvm.access<in>},
                %x: f32 {hpvm.access = #hpvm.access<in>}) {
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.access' of argument 0 expects #hpvm.access<in|out|inout>, found "in"}}
hpvm.leaf @leaf(%a: memref<?xf32> {hpvm.access = "in"}) {
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.access' is only valid on arguments of node definitions, found on 'func.func'}}
func.func @f(%a: memref<?xf32> {hpvm.access = #hpvm.access<in>}) {
  return
}

// -----

// expected-error @+1 {{'hpvm.dispatch' expects a node with at least two targets in 'hpvm.targets', found 1}}
hpvm.leaf @leaf() attributes {hpvm.targets = [#hpvm.target<gpu>], hpvm.dispatch} {
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.dispatch' expects a node with at least two targets in 'hpvm.targets', found 0}}
hpvm.internal @node() attributes {hpvm.dispatch} {
}

// -----

// expected-error @+1 {{'hpvm.dispatch' is a unit attribute, found "dynamic"}}
hpvm.leaf @leaf() attributes {hpvm.targets = [#hpvm.target<gpu>, #hpvm.target<cpu>], hpvm.dispatch = "dynamic"} {
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.dispatch' is only valid on node definitions (hpvm.leaf, hpvm.internal), found on 'func.func'}}
func.func @f() attributes {hpvm.dispatch} {
  return
}

// -----

// expected-error @+1 {{'hpvm.kernel' is only valid on node definitions (hpvm.leaf, hpvm.internal), found on 'func.func'}}
func.func @f() attributes {hpvm.kernel = @k} {
  return
}

// -----

// expected-error @+1 {{'hpvm.kernel_per_instance' is only valid on hpvm.leaf, found on 'hpvm.internal'}}
hpvm.internal @inner() attributes {hpvm.kernel_per_instance = array<i64: 0, 0>} {
}

// -----

// expected-error @+1 {{'hpvm.kernel_per_instance' expects array<i64: inputs, outputs> (two port masks), found array<i64: 1>}}
hpvm.leaf @leaf(%a: f32) attributes {hpvm.kernel_per_instance = array<i64: 1>} {
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.kernel_per_instance' names outputs beyond the node's 1: mask 2}}
hpvm.leaf @leaf(%a: f32) -> (f32) attributes {hpvm.kernel_per_instance = array<i64: 1, 2>} {
  hpvm.return %a : f32
}

// -----

// expected-error @+1 {{'hpvm.tensor_kernel' is only valid on hpvm.leaf, found on 'hpvm.internal'}}
hpvm.internal @inner() attributes {hpvm.tensor_kernel = []} {
}

// -----

// expected-error @+1 {{'hpvm.tensor_kernel' expects an array of symbol references (the kernel's constant tensors), found ["w"]}}
hpvm.leaf @leaf(%a: f32) attributes {hpvm.tensor_kernel = ["w"]} {
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.tensor_launch' is only valid on hpvm.leaf, found on 'hpvm.internal'}}
hpvm.internal @inner() attributes {hpvm.tensor_launch = array<i64: 1024, 256>} {
}

// -----

// expected-error @+1 {{'hpvm.tensor_launch' expects array<i64: threads, workgroup, bytes...> (threads and bytes positive, workgroup 0 or more), found array<i64: 1024, 256, 0>}}
hpvm.leaf @leaf(%a: f32) attributes {hpvm.tensor_kernel = [], hpvm.tensor_launch = array<i64: 1024, 256, 0>} {
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.tensor_launch' runs 1000 threads in work-groups of 256 (expected a multiple)}}
hpvm.leaf @leaf(%a: f32) attributes {hpvm.tensor_kernel = [], hpvm.tensor_launch = array<i64: 1000, 256>} {
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.tensor_launch' expects array<i64: threads, workgroup, bytes...> (threads and bytes positive, workgroup 0 or more), found array<i64: 4>}}
hpvm.leaf @leaf(%a: f32) attributes {hpvm.tensor_kernel = [], hpvm.tensor_launch = array<i64: 4>} {
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.tensor_launch' is only valid on a leaf with 'hpvm.tensor_kernel' (a tensor kernel's launch)}}
hpvm.leaf @leaf(%a: f32) attributes {hpvm.tensor_launch = array<i64: 1024, 256>} {
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.tensor_library' expects a dictionary (the library call), found "cudnn"}}
hpvm.leaf @leaf(%a: f32) attributes {hpvm.tensor_library = "cudnn"} {
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.kernel' expects a symbol reference (the node's kernel), found "k"}}
hpvm.leaf @leaf() attributes {hpvm.kernel = "k"} {
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.vector_variant' is only valid on hpvm.leaf, found on 'hpvm.internal'}}
hpvm.internal @inner() attributes {hpvm.vector_variant = @v} {
}

// -----

// expected-error @+1 {{'hpvm.vector_variant' expects a symbol reference (the variant leaf), found 8 : i64}}
hpvm.leaf @leaf() attributes {hpvm.vector_variant = 8} {
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.contraction_plan' is only valid on hpvm.leaf, found on 'hpvm.internal'}}
hpvm.internal @inner() attributes {hpvm.contraction_plan = @p} {
}

// -----

// expected-error @+1 {{'hpvm.contraction_plan' expects a symbol reference (the plan function), found "p"}}
hpvm.leaf @leaf() attributes {hpvm.contraction_plan = "p"} {
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.contraction_variant' expects a symbol reference (the variant leaf), found 8 : i64}}
hpvm.leaf @leaf() attributes {hpvm.contraction_variant = 8} {
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.block_variant' is only valid on hpvm.leaf, found on 'hpvm.internal'}}
hpvm.internal @inner() attributes {hpvm.block_variant = @v} {
}

// -----

// expected-error @+1 {{'hpvm.tile_variant' is only valid on hpvm.leaf, found on 'hpvm.internal'}}
hpvm.internal @inner() attributes {hpvm.tile_variant = @t} {
}

// -----

// expected-error @+1 {{'hpvm.remainder_variant' expects a symbol reference (the variant leaf), found "v"}}
hpvm.leaf @leaf() attributes {hpvm.remainder_variant = "v"} {
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.rows' expects an i64 row count of at least 2, found 1 : i64}}
hpvm.leaf @leaf() -> i1 attributes {hpvm.lanes = 8, hpvm.rows = 1} {
  %true = arith.constant true
  hpvm.return %true : i1
}

// -----

// expected-error @+1 {{'hpvm.rows' marks a block variant, which is a lane variant: 'hpvm.lanes' is missing}}
hpvm.leaf @leaf() -> i1 attributes {hpvm.rows = 4} {
  %true = arith.constant true
  hpvm.return %true : i1
}

// -----

// expected-error @+1 {{'hpvm.lanes' is only valid on hpvm.leaf, found on 'hpvm.internal'}}
hpvm.internal @inner() attributes {hpvm.lanes = 8} {
}

// -----

// expected-error @+1 {{'hpvm.lanes' expects an i64 lane count of at least 2, found 1 : i64}}
hpvm.leaf @leaf() -> i1 attributes {hpvm.lanes = 1} {
  %true = arith.constant true
  hpvm.return %true : i1
}

// -----

// expected-error @+1 {{'hpvm.lanes' marks a lane variant, whose first output is the i1 'ran all lanes'; found outputs ('f32')}}
hpvm.leaf @leaf(%a: f32) -> f32 attributes {hpvm.lanes = 8} {
  hpvm.return %a : f32
}

// -----

// expected-error @+1 {{unknown hpvm attribute 'hpvm.speed'; expected 'hpvm.targets', 'hpvm.dispatch', 'hpvm.kernel', 'hpvm.kernel_per_instance', 'hpvm.tensor_kernel', 'hpvm.tensor_launch', 'hpvm.tensor_library', 'hpvm.vector_variant', 'hpvm.lanes', 'hpvm.block_variant', 'hpvm.remainder_variant', 'hpvm.tile_variant', 'hpvm.contraction_variant', 'hpvm.contraction_plan', 'hpvm.rows', 'hpvm.knob', 'hpvm.error' or 'hpvm.parameters'}}
hpvm.leaf @leaf() attributes {hpvm.speed = 1} {
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.parameters' is only valid on a module, found on 'hpvm.leaf'}}
hpvm.leaf @leaf() attributes {hpvm.parameters = "w.params"} {
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.parameters' expects the path of a parameter archive (a non-empty string), found ""}}
module attributes {hpvm.parameters = ""} {
}

// -----

// expected-error @+1 {{#hpvm.error expects a finite l2 budget >= 0, found -0.5}}
hpvm.leaf @leaf() attributes {budget = #hpvm.error<l1 = 0.0, l2 = -0.5>} {
  hpvm.return
}

// -----

//===----------------------------------------------------------------------===//
// Leaf intrinsics: placement, dimensions and levels
//===----------------------------------------------------------------------===//

func.func @host() -> index {
  // expected-error @+1 {{'hpvm.instance_id' op expects to be nested in an 'hpvm.leaf': only leaf nodes compute; found in 'func.func'}}
  %i = hpvm.instance_id x : index
  return %i : index
}

// -----

hpvm.internal @root() {
  // expected-error @+1 {{'hpvm.barrier' op expects to be nested in an 'hpvm.leaf': only leaf nodes compute; found in 'hpvm.internal'}}
  hpvm.barrier
}

// -----

hpvm.leaf @leaf(%out: memref<?xindex>) {
  // expected-error @+1 {{'hpvm.instance_id' op refers to dimension y of @leaf, but 'hpvm.create_node @leaf' in @root gives it 1 dimension}}
  %i = hpvm.instance_id y : index
  memref.store %i, %out[%i] : memref<?xindex>
  hpvm.return
}
hpvm.internal @root(%out: memref<?xindex>, %n: index) {
  // expected-note @+1 {{instantiated here}}
  %l = hpvm.create_node @leaf [%n] : !hpvm.node
  hpvm.bind_in %out -> %l[0] : memref<?xindex>
}

// -----

hpvm.leaf @leaf(%out: memref<?xindex>) {
  // expected-error @+1 {{'hpvm.num_instances' op refers to dimension z of the ancestor 1 level above @leaf, but 'hpvm.create_node @tile' in @root gives it 2 dimensions}}
  %n = hpvm.num_instances z level 1 : index
  %c0 = arith.constant 0 : index
  memref.store %n, %out[%c0] : memref<?xindex>
  hpvm.return
}
hpvm.internal @tile(%out: memref<?xindex>) {
  %c8 = arith.constant 8 : index
  %l = hpvm.create_node @leaf [%c8, %c8, %c8] : !hpvm.node
  hpvm.bind_in %out -> %l[0] : memref<?xindex>
}
hpvm.internal @root(%out: memref<?xindex>, %n: index) {
  // expected-note @+1 {{instantiated here}}
  %t = hpvm.create_node @tile [%n, %n] : !hpvm.node
  hpvm.bind_in %out -> %t[0] : memref<?xindex>
}

// -----

// A launched root has a single instance: it has no dimension to query.
hpvm.leaf @leaf(%out: memref<?xindex>) {
  // expected-error @+1 {{'hpvm.instance_id' op refers to dimension x of @leaf, but it is launched as a root by 'hpvm.launch', which has a single instance}}
  %i = hpvm.instance_id x : index
  memref.store %i, %out[%i] : memref<?xindex>
  hpvm.return
}
func.func @host(%out: memref<?xindex>) {
  // expected-note @+1 {{instantiated here}}
  %g = hpvm.launch @leaf(%out) : (memref<?xindex>) -> !hpvm.graph
  hpvm.wait %g
  return
}

// -----

hpvm.leaf @leaf(%out: memref<?xindex>) {
  // expected-error @+1 {{'hpvm.instance_id' op refers to level 2 above @leaf, but the hierarchy above it ends earlier at a launched root}}
  %i = hpvm.instance_id x level 2 : index
  memref.store %i, %out[%i] : memref<?xindex>
  hpvm.return
}
hpvm.internal @root(%out: memref<?xindex>, %n: index) {
  %l = hpvm.create_node @leaf [%n] : !hpvm.node
  hpvm.bind_in %out -> %l[0] : memref<?xindex>
}
func.func @host(%out: memref<?xindex>, %n: index) {
  // expected-note @+1 {{the root is launched here}}
  %g = hpvm.launch @root(%out, %n) : (memref<?xindex>, index) -> !hpvm.graph
  hpvm.wait %g
  return
}

// -----

hpvm.leaf @leaf(%n: index) {
  // expected-error @+1 {{'hpvm.alloc' op expects one size per dynamic dimension of 'memref<?x?xf32>' (2), found 1}}
  %m = hpvm.alloc(%n) : memref<?x?xf32>
  hpvm.return
}

// -----

hpvm.leaf @leaf() {
  // expected-error @+1 {{'hpvm.alloc' op expects a memref with the identity layout, found 'memref<4xf32, strided<[2]>>'}}
  %m = hpvm.alloc() : memref<4xf32, strided<[2]>>
  hpvm.return
}

// -----

hpvm.leaf @leaf() {
  // expected-error @+1 {{'hpvm.instance_id' op attribute 'level' failed to satisfy constraint: 32-bit signless integer attribute whose value is non-negative}}
  %i = hpvm.instance_id x level -1 : index
  hpvm.return
}

// -----

//===----------------------------------------------------------------------===//
// Host ops: placement and agreement with the root
//===----------------------------------------------------------------------===//

hpvm.leaf @child() {
  hpvm.return
}
hpvm.leaf @leaf() {
  // expected-error @+1 {{'hpvm.launch' op is host code and must be outside node definitions; found in 'hpvm.leaf' @leaf}}
  %g = hpvm.launch @child() : () -> !hpvm.graph
  hpvm.return
}

// -----

hpvm.internal @root(%m: memref<?xf32>) {
  // expected-error @+1 {{'hpvm.track' op is host code and must be outside node definitions; found in 'hpvm.internal' @root}}
  hpvm.track %m : memref<?xf32>
}

// -----

hpvm.leaf @child() {
  hpvm.return
}
// expected-error @+1 {{'hpvm.launch' op is host code and must be inside a function; found in 'builtin.module'}}
%g = hpvm.launch @child() : () -> !hpvm.graph

// -----

func.func @host() {
  // expected-error @+1 {{'hpvm.launch' op refers to @nowhere, which is not defined}}
  %g = hpvm.launch @nowhere() : () -> !hpvm.graph
  return
}

// -----

func.func @host() {
  // expected-error @+1 {{'hpvm.launch' op refers to @host, a 'func.func'; expected a node definition (hpvm.leaf or hpvm.internal)}}
  %g = hpvm.launch @host() : () -> !hpvm.graph
  return
}

// -----

hpvm.leaf @leaf(%a: memref<?xf32>, %n: index) {
  hpvm.return
}
func.func @host(%a: memref<?xf32>) {
  // expected-error @+1 {{'hpvm.launch' op passes (memref<?xf32>) but the root @leaf expects inputs (memref<?xf32>, index)}}
  %g = hpvm.launch @leaf(%a) : (memref<?xf32>) -> !hpvm.graph
  return
}

// -----

hpvm.leaf @leaf() -> (i64) {
  %c = arith.constant 1 : i64
  hpvm.return %c : i64
}
func.func @host() {
  %g = hpvm.launch @leaf() : () -> !hpvm.graph
  // expected-error @+1 {{'hpvm.wait' op returns () but the root @leaf has outputs (i64)}}
  hpvm.wait %g
  return
}

// -----

// A wait ends its graph: a second wait on the same handle waits on freed memory.
hpvm.leaf @l(%x: f32) {
  hpvm.return
}
func.func @host(%x: f32) {
  %g = hpvm.launch @l(%x) : (f32) -> !hpvm.graph
  // expected-note @+1 {{the earlier wait}}
  hpvm.wait %g
  // expected-error @+1 {{'hpvm.wait' op waits on a graph that an earlier hpvm.wait already ended (a wait frees the launch)}}
  hpvm.wait %g
  return
}

// -----

hpvm.leaf @l(%x: f32) {
  hpvm.return
}
func.func @host(%x: f32, %again: i1) {
  %g = hpvm.launch @l(%x) : (f32) -> !hpvm.graph
  cf.br ^loop
^loop:
  // expected-error @+1 {{'hpvm.wait' op waits in a loop on a graph launched outside it: the first wait ends the graph; launch it in the loop, or wait after it}}
  hpvm.wait %g
  cf.cond_br %again, ^loop, ^done
^done:
  return
}

// -----

// A wait on another function's handle (the parser resolves the name) is
// MLIR's isolation error, not a crash of the loop check climbing past the
// module (found by the ir fuzzer).
hpvm.leaf @l(%x: f32) {
  hpvm.return
}
// expected-note @+1 {{required by region isolation constraints}}
func.func @waits(%x: f32) {
  cf.br ^join
^join:
  // expected-error @+1 {{'hpvm.wait' op using value defined outside the region}}
  hpvm.wait %g
  return
}
func.func @launches(%x: f32) {
  %first = hpvm.launch @l(%x) : (f32) -> !hpvm.graph
  cf.br ^header(%first : !hpvm.graph)
^header(%g: !hpvm.graph):
  hpvm.wait %g
  return
}

// -----

// The same in a loop op: every trip but the first waits on a freed launch.
hpvm.leaf @l(%x: f32) {
  hpvm.return
}
func.func @host(%x: f32, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %g = hpvm.launch @l(%x) : (f32) -> !hpvm.graph
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @+1 {{'hpvm.wait' op waits in a loop on a graph launched outside it: the first wait ends the graph; launch it in the loop, or wait after it}}
    hpvm.wait %g
  }
  return
}

// -----

// A handle that may come from either of two launches (through a branch):
// the wait must fit both roots.
hpvm.leaf @count() -> (i64) {
  %c = arith.constant 1 : i64
  hpvm.return %c : i64
}
hpvm.leaf @ratio() -> (f32) {
  %c = arith.constant 1.0 : f32
  hpvm.return %c : f32
}
func.func @host(%which: i1) -> i64 {
  cf.cond_br %which, ^count, ^ratio
^count:
  %a = hpvm.launch @count() : () -> !hpvm.graph
  cf.br ^join(%a : !hpvm.graph)
^ratio:
  // expected-note @+1 {{the handle may come from this launch (one of 2)}}
  %b = hpvm.launch @ratio() : () -> !hpvm.graph
  cf.br ^join(%b : !hpvm.graph)
^join(%g: !hpvm.graph):
  // expected-error @+1 {{'hpvm.wait' op returns (i64) but the root @ratio has outputs (f32)}}
  %r = hpvm.wait %g : i64
  return %r : i64
}

// -----

hpvm.leaf @leaf() -> (i64) {
  %c = arith.constant 1 : i64
  hpvm.return %c : i64
}
func.func @host() -> i64 {
  %g = hpvm.launch @leaf() streaming : () -> !hpvm.graph
  // expected-error @+1 {{'hpvm.wait' op on a streaming graph returns nothing (its outputs are popped with hpvm.pop), found 1 result}}
  %r = hpvm.wait %g : i64
  return %r : i64
}

// -----

hpvm.leaf @leaf(%x: f32) {
  hpvm.return
}
func.func @host(%x: f32) {
  // expected-note @+1 {{launched here}}
  %g = hpvm.launch @leaf(%x) : (f32) -> !hpvm.graph
  // expected-error @+1 {{'hpvm.push' op needs a streaming graph, but @leaf was launched without 'streaming'}}
  hpvm.push %g(%x) : f32
  hpvm.wait %g
  return
}

// -----

hpvm.leaf @leaf(%x: f32) {
  hpvm.return
}
func.func @host(%x: f32, %y: i32) {
  %g = hpvm.launch @leaf(%x) streaming : (f32) -> !hpvm.graph
  // expected-error @+1 {{'hpvm.push' op pushes (i32) but the root @leaf expects inputs (f32)}}
  hpvm.push %g(%y) : i32
  hpvm.wait %g
  return
}

// -----

hpvm.leaf @leaf(%x: f32) -> (f32) {
  hpvm.return %x : f32
}
func.func @host(%x: f32) -> f64 {
  %g = hpvm.launch @leaf(%x) streaming : (f32) -> !hpvm.graph
  // expected-error @+1 {{'hpvm.pop' op pops (f64) but the root @leaf has outputs (f32)}}
  %r = hpvm.pop %g : f64
  hpvm.wait %g
  return %r : f64
}

// -----

func.func @host(%p: !llvm.ptr) {
  // expected-error @+1 {{'hpvm.track' op expects a size in bytes after an !llvm.ptr buffer}}
  hpvm.track %p : !llvm.ptr
  return
}

// -----

func.func @host(%m: memref<?xf32>, %n: index) {
  // expected-error @+1 {{'hpvm.request' op takes no size for a memref, which carries its own}}
  hpvm.request %m, %n : memref<?xf32>
  return
}

// -----

func.func @host(%p: !llvm.ptr, %n: index) {
  // expected-error @+1 {{'hpvm.untrack' op takes no size}}
  hpvm.untrack %p, %n : !llvm.ptr
  return
}

// -----

func.func @host(%x: f32) {
  // expected-error @+1 {{'hpvm.track' op operand #0 must be memref of any type values or LLVM pointer, but got 'f32'}}
  hpvm.track %x : f32
  return
}

// -----

// expected-error @+1 {{'hpvm.targets' expects an array of #hpvm.target attributes, found #hpvm.target<cpu>}}
hpvm.leaf @leaf() attributes {hpvm.targets = #hpvm.target<cpu>} {
  hpvm.return
}

// -----
// expected-error @+1 {{'hpvm.access' is an argument attribute of node definitions, found on the op 'hpvm.leaf' itself}}
hpvm.leaf @leaf() attributes {hpvm.access = #hpvm.access<in>} {
  hpvm.return
}

// -----
// expected-error @+1 {{unknown hpvm argument attribute 'hpvm.acces'; expected 'hpvm.access'}}
hpvm.leaf @leaf(%a: memref<?xf32> {hpvm.acces = #hpvm.access<in>}) {
  hpvm.return
}

// -----
// expected-error @+1 {{unknown hpvm result attribute 'hpvm.access': hpvm defines no result attributes}}
hpvm.leaf @leaf() -> (i64 {hpvm.access = #hpvm.access<out>}) {
  %c = arith.constant 0 : i64
  hpvm.return %c : i64
}

// -----
// expected-error @+1 {{node arguments must be named (%name: type) because the body uses them}}
hpvm.leaf @leaf(i64) {
  hpvm.return
}

// -----
hpvm.leaf @leaf(%n: index) {
  // expected-error @+1 {{'hpvm.alloc' op expects one size in bytes for a '!llvm.ptr' allocation, found 0 sizes}}
  %p = hpvm.alloc() : !llvm.ptr
  hpvm.return
}

// -----
hpvm.leaf @leaf() {
  hpvm.return
}
func.func @host() {
  // expected-error @+1 {{'hpvm.launch' op with 'pushed' must be 'streaming'}}
  %g = hpvm.launch @leaf() pushed : () -> !hpvm.graph
  hpvm.wait %g
  return
}

// -----
hpvm.leaf @leaf(%x: f32) {
  hpvm.return
}
func.func @host(%x: f32) {
  // expected-error @+1 {{'hpvm.launch' op with 'pushed' takes its items from 'hpvm.push' and has no operands, found 1}}
  %g = hpvm.launch @leaf(%x) streaming pushed : (f32) -> !hpvm.graph
  hpvm.wait %g
  return
}

// -----

// Constant extents: no negative count, no grid beyond a signed 64-bit count
// (also through HPVM-C's index_cast of an llvm constant).
hpvm.leaf @leaf() {
  hpvm.return
}
hpvm.internal @negative() {
  %c = arith.constant -5 : index
  // expected-error @+1 {{'hpvm.create_node' op extent of dimension x is -5; expected a count of instances (0 or more)}}
  %n = hpvm.create_node @leaf [%c] : !hpvm.node
}

// -----

hpvm.leaf @leaf() {
  hpvm.return
}
hpvm.internal @negative_cast() {
  %a = llvm.mlir.constant(-7 : i64) : i64
  %i = arith.index_cast %a : i64 to index
  %one = arith.constant 1 : index
  // expected-error @+1 {{'hpvm.create_node' op extent of dimension y is -7; expected a count of instances (0 or more)}}
  %n = hpvm.create_node @leaf [%one, %i] : !hpvm.node
}

// -----

hpvm.leaf @leaf() {
  hpvm.return
}
hpvm.internal @too_many(%k: index) {
  %a = arith.constant 2147483648 : index
  %b = arith.constant 4 : index
  // expected-error @+1 {{'hpvm.create_node' op grid has more instances than a signed 64-bit count holds: its constant extents up to dimension z multiply to 2^64 or more; expected at most 2^63 - 1}}
  %n = hpvm.create_node @leaf [%a, %a, %b] : !hpvm.node
}
