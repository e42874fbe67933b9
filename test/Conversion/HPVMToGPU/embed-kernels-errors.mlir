// Errors of hpvm-embed-kernels and of the OpenCL address-space assignment.
// RUN: hpvm-opt %s --split-input-file --convert-hpvm-to-gpu --hpvm-embed-kernels="devices=opencl" -verify-diagnostics

// A private array whose address leaves the function: OpenCL would need a
// generic pointer.
llvm.func internal @sum(%p: !llvm.ptr) -> f32 {
  %v = llvm.load %p : !llvm.ptr -> f32
  llvm.return %v : f32
}
hpvm.leaf @private_to_call(%out: !llvm.ptr) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %one = llvm.mlir.constant(1 : i64) : i64
  %a = llvm.alloca %one x !llvm.array<4 x f32> : (i64) -> !llvm.ptr
  // expected-error @+1 {{passes a pointer to private memory (a local array) to a call or stores it: OpenCL kernels need such pointers to stay in the kernel}}
  %s = llvm.call @sum(%a) : (!llvm.ptr) -> f32
  llvm.store %s, %out : f32, !llvm.ptr
  hpvm.return
}

// -----

hpvm.leaf @private_or_global(%out: !llvm.ptr, %n: i64) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %one = llvm.mlir.constant(1 : i64) : i64
  %a = llvm.alloca %one x f32 : (i64) -> !llvm.ptr
  %c = llvm.icmp "sgt" %n, %one : i64
  // expected-error @+1 {{selects between pointers to global memory and private memory (a local array), which OpenCL kernels cannot do without generic pointers}}
  %p = llvm.select %c, %a, %out : i1, !llvm.ptr
  %v = llvm.load %p : !llvm.ptr -> f32
  llvm.store %v, %out : f32, !llvm.ptr
  hpvm.return
}

// -----

hpvm.leaf @joined(%out: !llvm.ptr, %n: i64) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %one = llvm.mlir.constant(1 : i64) : i64
  %a = llvm.alloca %one x f32 : (i64) -> !llvm.ptr
  %c = llvm.icmp "sgt" %n, %one : i64
  // expected-error @+1 {{joins pointers to global memory and private memory (a local array), which OpenCL kernels cannot do without generic pointers}}
  llvm.cond_br %c, ^use(%a : !llvm.ptr), ^use(%out : !llvm.ptr)
^use(%p: !llvm.ptr):
  %v = llvm.load %p : !llvm.ptr -> f32
  llvm.store %v, %out : f32, !llvm.ptr
  hpvm.return
}

// -----

// The tile's memory is work-group memory: it may not reach a call, nor meet
// a private pointer.
llvm.func internal @first(%p: !llvm.ptr) -> f32 {
  %v = llvm.load %p : !llvm.ptr -> f32
  llvm.return %v : f32
}
hpvm.leaf @scratch(%bytes: i64) -> (!llvm.ptr) {
  %n = arith.index_cast %bytes : i64 to index
  %p = hpvm.alloc(%n) : !llvm.ptr
  hpvm.return %p : !llvm.ptr
}
hpvm.leaf @lane(%out: !llvm.ptr, %s: !llvm.ptr) {
  // expected-error @+1 {{passes a pointer to work-group memory to a call or stores it: OpenCL kernels need such pointers to stay in the kernel}}
  %v = llvm.call @first(%s) : (!llvm.ptr) -> f32
  llvm.store %v, %out : f32, !llvm.ptr
  hpvm.return
}
hpvm.internal @tile(%out: !llvm.ptr, %bytes: i64) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %c32 = arith.constant 32 : index
  %a = hpvm.create_node @scratch : !hpvm.node
  %l = hpvm.create_node @lane [%c32] : !hpvm.node
  hpvm.bind_in %bytes -> %a[0] : i64
  hpvm.bind_in %out -> %l[0] : !llvm.ptr
  hpvm.edge %a[0] -> %l[1] all_to_all
}

// -----

hpvm.leaf @scratch(%bytes: i64) -> (!llvm.ptr) {
  %n = arith.index_cast %bytes : i64 to index
  %p = hpvm.alloc(%n) : !llvm.ptr
  hpvm.return %p : !llvm.ptr
}
hpvm.leaf @lane(%out: !llvm.ptr, %s: !llvm.ptr, %n: i64) {
  %one = llvm.mlir.constant(1 : i64) : i64
  %a = llvm.alloca %one x f32 : (i64) -> !llvm.ptr
  %c = llvm.icmp "sgt" %n, %one : i64
  // expected-error-re @+1 {{joins pointers to {{.*}} and {{.*}}, which OpenCL kernels cannot do without generic pointers}}
  llvm.cond_br %c, ^use(%a : !llvm.ptr), ^use(%s : !llvm.ptr)
^use(%p: !llvm.ptr):
  %v = llvm.load %p : !llvm.ptr -> f32
  llvm.store %v, %out : f32, !llvm.ptr
  hpvm.return
}
hpvm.internal @tile(%out: !llvm.ptr, %bytes: i64, %n: i64) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %c32 = arith.constant 32 : index
  %a = hpvm.create_node @scratch : !hpvm.node
  %l = hpvm.create_node @lane [%c32] : !hpvm.node
  hpvm.bind_in %bytes -> %a[0] : i64
  hpvm.bind_in %out -> %l[0] : !llvm.ptr
  hpvm.edge %a[0] -> %l[1] all_to_all
  hpvm.bind_in %n -> %l[2] : i64
}

// -----

// math.ipowi has no OpenCL lowering here: the kernel module does not lower.
hpvm.leaf @ipowi(%m: memref<?xi32>) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %i = hpvm.instance_id x : index
  %v = memref.load %m[%i] : memref<?xi32>
  // expected-error @+1 {{'math.ipowi' cannot be lowered for opencl kernels}}
  %e = math.ipowi %v, %v : i32
  memref.store %e, %m[%i] : memref<?xi32>
  hpvm.return
}

// -----

gpu.module @hpvm_kernels {
}
// expected-error @+1 {{names the kernel @elsewhere::@k, which is not in a gpu.module of this module}}
hpvm.leaf @stray(%m: memref<?xf32>) attributes {hpvm.kernel = @elsewhere::@k} {
  hpvm.return
}
