// GPU-hinted nodes that cannot become kernels say why and keep their CPU
// version (no hpvm.kernel).
// RUN: hpvm-opt %s --convert-hpvm-to-gpu --split-input-file -verify-diagnostics | FileCheck %s
// CHECK-NOT: hpvm.kernel

// An output of another kind: a vector.
// expected-warning @+1 {{runs on the CPU: no GPU kernel, because it has an output that is not a number, a memref input passed on or a pointer input passed on (kernels return integers, floats and the buffers they were given)}}
hpvm.leaf @outputs(%x: f32) -> (vector<4xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %v = vector.broadcast %x : f32 to vector<4xf32>
  hpvm.return %v : vector<4xf32>
}

// -----

// A view of an input is not the input: the host would hand on the whole.
// expected-warning @+1 {{because it has a memref output that is not one of the kernel's memref inputs passed on (kernels return the buffers they were given)}}
hpvm.leaf @view(%m: memref<?xf32>) -> (memref<2xf32, strided<[1], offset: 1>>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %v = memref.subview %m[1] [2] [1] : memref<?xf32> to memref<2xf32, strided<[1], offset: 1>>
  hpvm.return %v : memref<2xf32, strided<[1], offset: 1>>
}

// -----

// A pointer into an input is not the input: the host could not tell where
// it points.
// expected-warning @+1 {{because it has a pointer output that is neither one of its pointer inputs nor null (a kernel can only hand back what it was given)}}
hpvm.leaf @offset(%p: !llvm.ptr, %bytes: i64) -> (!llvm.ptr) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %q = llvm.getelementptr %p[1] : (!llvm.ptr) -> !llvm.ptr, f32
  hpvm.return %q : !llvm.ptr
}

// -----

// A local slot whose address escapes may be written behind the backend's back.
// expected-warning @+1 {{because a pointer output passes through memory the backend does not follow}}
hpvm.leaf @escaping(%p: !llvm.ptr, %bytes: i64, %where: !llvm.ptr, %wbytes: i64) -> (!llvm.ptr) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %one = llvm.mlir.constant(1 : i64) : i64
  %s = llvm.alloca %one x !llvm.ptr : (i64) -> !llvm.ptr
  llvm.store %p, %s : !llvm.ptr, !llvm.ptr
  llvm.store %s, %where : !llvm.ptr, !llvm.ptr
  %r = llvm.load %s : !llvm.ptr -> !llvm.ptr
  hpvm.return %r : !llvm.ptr
}

// -----

// expected-warning @+1 {{runs on the CPU: no GPU kernel, because it uses 'hpvm.alloc'}}
hpvm.leaf @allocates(%n: index) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %m = hpvm.alloc(%n) : memref<?xf32>
  hpvm.return
}

// -----

// expected-warning @+1 {{because it has a barrier across the whole grid (only the leaf of a tile may have barriers)}}
hpvm.leaf @grid_barrier() attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  hpvm.barrier
  hpvm.return
}


// -----

llvm.func @calibrate(f32) -> f32
// expected-warning @+1 {{because it calls the external function 'calibrate'}}
hpvm.leaf @external(%p: !llvm.ptr) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %v = llvm.load %p : !llvm.ptr -> f32
  %e = llvm.call @calibrate(%v) : (f32) -> f32
  llvm.store %e, %p : f32, !llvm.ptr
  hpvm.return
}

// -----

llvm.mlir.global internal @table(dense<[1.0, 2.0]> : tensor<2xf32>) : !llvm.array<2 x f32>
// expected-warning @+1 {{because it uses the global 'table', which is not a constant}}
hpvm.leaf @global(%p: !llvm.ptr) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %t = llvm.mlir.addressof @table : !llvm.ptr
  %v = llvm.load %t : !llvm.ptr -> f32
  llvm.store %v, %p : f32, !llvm.ptr
  hpvm.return
}

// -----

// Booleans travel as bytes (bool-inputs.mlir); other integers that are
// not whole bytes do not travel.
// expected-warning @+1 {{because an integer input of an odd width (input 1)}}
hpvm.leaf @odd_width(%m: memref<?xf32>, %flag: i7) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  hpvm.return
}

// -----

llvm.func internal @recurse(%v: i32) -> i32 {
  %r = llvm.call @recurse(%v) : (i32) -> i32
  llvm.return %r : i32
}
// expected-warning @+1 {{because it calls a function recursively}}
hpvm.leaf @recursive(%v: i32) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %r = llvm.call @recurse(%v) : (i32) -> i32
  hpvm.return
}

// -----

hpvm.leaf @a() {
  hpvm.return
}
// expected-warning @+1 {{because it has several replicated children (a tile kernel runs one replicated leaf)}}
hpvm.internal @two_children(%n: index) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %x = hpvm.create_node @a [%n] : !hpvm.node
  %y = hpvm.create_node @a [%n] : !hpvm.node
}

// -----

hpvm.leaf @single() {
  hpvm.return
}
// expected-warning @+1 {{because it has no replicated leaf child}}
hpvm.internal @unreplicated() attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %x = hpvm.create_node @single : !hpvm.node
}

// -----

// A C math name with another signature is no math function.
llvm.func @sqrtf(f64) -> f64
// expected-warning @+1 {{because it calls the external function 'sqrtf'}}
hpvm.leaf @odd_sqrtf(%p: !llvm.ptr) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %v = llvm.load %p : !llvm.ptr -> f64
  %e = llvm.call @sqrtf(%v) : (f64) -> f64
  llvm.store %e, %p : f64, !llvm.ptr
  hpvm.return
}

// -----

// Tiles whose single-instance children are no allocation nodes, or whose
// memory kernels cannot hold.
hpvm.leaf @lane(%s: memref<64xf32>) {
  hpvm.return
}
hpvm.leaf @writes_memory(%m: memref<?xf32>) -> (memref<64xf32>) {
  %s = hpvm.alloc() : memref<64xf32>
  %c0 = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  memref.store %f, %m[%c0] : memref<?xf32>
  hpvm.return %s : memref<64xf32>
}
// expected-warning @+1 {{because its single-instance child @writes_memory is not an allocation node: it has the operation 'memref.store', which has side effects or regions}}
hpvm.internal @side_effects(%m: memref<?xf32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %c64 = arith.constant 64 : index
  %a = hpvm.create_node @writes_memory : !hpvm.node
  %l = hpvm.create_node @lane [%c64] : !hpvm.node
  hpvm.bind_in %m -> %a[0] : memref<?xf32>
  hpvm.edge %a[0] -> %l[0] all_to_all
}

// -----

hpvm.leaf @lane(%s: memref<64xf32>) {
  hpvm.return
}
hpvm.leaf @fills(%f: f32) -> (memref<64xf32>) {
  %s = hpvm.alloc() : memref<64xf32>
  %c0 = arith.constant 0 : index
  memref.store %f, %s[%c0] : memref<64xf32>
  hpvm.return %s : memref<64xf32>
}
// expected-warning @+1 {{because its single-instance child @fills is not an allocation node: it uses the memory it allocates}}
hpvm.internal @filled(%f: f32) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %c64 = arith.constant 64 : index
  %a = hpvm.create_node @fills : !hpvm.node
  %l = hpvm.create_node @lane [%c64] : !hpvm.node
  hpvm.bind_in %f -> %a[0] : f32
  hpvm.edge %a[0] -> %l[0] all_to_all
}

// -----

hpvm.leaf @lane(%s: memref<64xindex>) {
  hpvm.return
}
hpvm.leaf @indices() -> (memref<64xindex>) {
  %s = hpvm.alloc() : memref<64xindex>
  hpvm.return %s : memref<64xindex>
}
// expected-warning @+1 {{because its allocation node allocates memref<64xindex> (work-group memory holds integers and floats of whole bytes)}}
hpvm.internal @index_memory() attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %c64 = arith.constant 64 : index
  %a = hpvm.create_node @indices : !hpvm.node
  %l = hpvm.create_node @lane [%c64] : !hpvm.node
  hpvm.edge %a[0] -> %l[0] all_to_all
}

// -----

hpvm.leaf @lane(%s: memref<64xf32>) {
  %v = memref.subview %s[0] [8] [1] : memref<64xf32> to memref<8xf32, strided<[1]>>
  hpvm.return
}
hpvm.leaf @scratch() -> (memref<64xf32>) {
  %s = hpvm.alloc() : memref<64xf32>
  hpvm.return %s : memref<64xf32>
}
// expected-warning @+1 {{because its leaf uses the tile's memory in 'memref.subview' (kernels load, store and update it)}}
hpvm.internal @viewed() attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %c64 = arith.constant 64 : index
  %a = hpvm.create_node @scratch : !hpvm.node
  %l = hpvm.create_node @lane [%c64] : !hpvm.node
  hpvm.edge %a[0] -> %l[0] all_to_all
}

// -----

hpvm.leaf @lane(%s: memref<64xf32>) -> (f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f : f32
}
hpvm.leaf @sink(%f: f32) {
  hpvm.return
}
hpvm.leaf @scratch() -> (memref<64xf32>) {
  %s = hpvm.alloc() : memref<64xf32>
  hpvm.return %s : memref<64xf32>
}
// expected-warning @+1 {{because it has an edge that does not go from an allocation node to its replicated child}}
hpvm.internal @backwards() attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %c64 = arith.constant 64 : index
  %a = hpvm.create_node @scratch : !hpvm.node
  %l = hpvm.create_node @lane [%c64] : !hpvm.node
  %s = hpvm.create_node @sink : !hpvm.node
  hpvm.edge %a[0] -> %l[0] all_to_all
  hpvm.edge %l[0] -> %s[0] all_to_all
}

// -----

// A pointer per instance: the array would hold host pointers. (A pointer
// input passed on unchanged would be one value for all instances.)
// expected-warning @+1 {{because it sends a pointer per instance (a device cannot use the host pointers in the array) (output 0)}}
hpvm.leaf @send(%p: !llvm.ptr, %bytes: i64) -> (!llvm.ptr) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %i = hpvm.instance_id x : index
  %i64 = arith.index_cast %i : index to i64
  %q = llvm.getelementptr %p[%i64] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  hpvm.return %q : !llvm.ptr
}
hpvm.leaf @receive(%p: !llvm.ptr) {
  hpvm.return
}
hpvm.internal @pair(%p: !llvm.ptr, %bytes: i64, %n: index) {
  %s = hpvm.create_node @send [%n] : !hpvm.node
  %r = hpvm.create_node @receive [%n] : !hpvm.node
  hpvm.bind_in %p -> %s[0] : !llvm.ptr
  hpvm.bind_in %bytes -> %s[1] : i64
  hpvm.edge %s[0] -> %r[0] one_to_one
}

// -----

// One kernel serves every use of a node: its uses must agree on which
// values are per instance.
// expected-warning @+1 {{because its uses exchange different values per instance with their siblings (one kernel serves them all)}}
hpvm.leaf @value(%m: memref<?xf32>) -> (f32) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0] : memref<?xf32>
  hpvm.return %v : f32
}
hpvm.leaf @sink(%v: f32) {
  hpvm.return
}
hpvm.internal @uses(%m: memref<?xf32>, %n: index) -> (f32) {
  %a = hpvm.create_node @value [%n] : !hpvm.node
  %b = hpvm.create_node @sink [%n] : !hpvm.node
  hpvm.bind_in %m -> %a[0] : memref<?xf32>
  hpvm.edge %a[0] -> %b[0] one_to_one
  %c = hpvm.create_node @value [%n] : !hpvm.node
  hpvm.bind_in %m -> %c[0] : memref<?xf32>
  hpvm.bind_out %c[0] -> 0
}

