// convert-hpvm-to-cpu inlines a leaf function into its caller when it has only
// one (inline-leaves, on by default), its body is one block in the dialects the
// LLVM pipeline lowers everywhere, and it allocates nothing on the stack (in a
// range loop, an alloca would grow the stack with every instance).
// RUN: hpvm-opt %s --convert-hpvm-to-cpu | FileCheck %s
// RUN: hpvm-opt %s --convert-hpvm-to-cpu=inline-leaves=false | FileCheck %s --check-prefix=OFF
// The inlined program still lowers all the way to the llvm dialect.
// RUN: hpvm-opt %s --hpvm-lower-to-llvm-pipeline | FileCheck %s --check-prefix=LLVM
// LLVM-NOT: unrealized_conversion_cast
// LLVM: llvm.func internal @__hpvm_range_once_1(

// Kept: the leaf run as a 1-D and as a 2-D grid (two callers: its two range
// functions), the leaf with an alloca and
// the leaf whose body branches; gone: the leaf run once.
// CHECK-NOT: func.func private @__hpvm_leaf_once(
// CHECK-DAG: func.func private @__hpvm_leaf_twice(
// CHECK-DAG: func.func private @__hpvm_leaf_scratch(
// CHECK-DAG: func.func private @__hpvm_leaf_branches(
// OFF-DAG: func.func private @__hpvm_leaf_once(
// OFF-DAG: func.func private @__hpvm_leaf_twice(
// OFF-DAG: func.func private @__hpvm_leaf_scratch(
// OFF-DAG: func.func private @__hpvm_leaf_branches(
// OFF-DAG: func.call @__hpvm_leaf_once(

hpvm.leaf @once(%a: memref<?xf32>) {
  %i = hpvm.instance_id x : index
  %v = memref.load %a[%i] : memref<?xf32>
  %w = arith.mulf %v, %v : f32
  memref.store %w, %a[%i] : memref<?xf32>
  hpvm.return
}

hpvm.leaf @twice(%a: memref<?xf32>) {
  %i = hpvm.instance_id x : index
  %v = memref.load %a[%i] : memref<?xf32>
  %c = arith.constant 1.0 : f32
  %w = arith.addf %v, %c : f32
  memref.store %w, %a[%i] : memref<?xf32>
  hpvm.return
}

hpvm.leaf @scratch(%a: memref<?xf32>) {
  %i = hpvm.instance_id x : index
  %s = memref.alloca() : memref<4xf32>
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%i] : memref<?xf32>
  memref.store %v, %s[%c0] : memref<4xf32>
  %w = memref.load %s[%c0] : memref<4xf32>
  memref.store %w, %a[%i] : memref<?xf32>
  hpvm.return
}

hpvm.leaf @branches(%a: memref<?xf32>, %n: index) {
  %i = hpvm.instance_id x : index
  %inside = arith.cmpi ult, %i, %n : index
  cf.cond_br %inside, ^write, ^done
^write:
  %c = arith.constant 2.0 : f32
  memref.store %c, %a[%i] : memref<?xf32>
  cf.br ^done
^done:
  hpvm.return
}

// Siblings run concurrently, each on its own buffer.
hpvm.internal @first(%a: memref<?xf32>, %b: memref<?xf32>, %n: index) {
  %o = hpvm.create_node @once [%n] : !hpvm.node
  hpvm.bind_in %a -> %o[0] : memref<?xf32>
  %t = hpvm.create_node @twice [%n] : !hpvm.node
  hpvm.bind_in %b -> %t[0] : memref<?xf32>
}

hpvm.internal @second(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>, %n: index) {
  %t = hpvm.create_node @twice [%n, %n] : !hpvm.node
  hpvm.bind_in %a -> %t[0] : memref<?xf32>
  %s = hpvm.create_node @scratch [%n] : !hpvm.node
  hpvm.bind_in %b -> %s[0] : memref<?xf32>
  %r = hpvm.create_node @branches [%n] : !hpvm.node
  hpvm.bind_in %c -> %r[0] : memref<?xf32>
  hpvm.bind_in %n -> %r[1] : index
}

// The range function of @once runs the leaf's body in its loop, the
// instance id being the loop's variable.
// CHECK-LABEL: llvm.func internal @__hpvm_range_once_1(
// CHECK: %[[DATA:.*]] = builtin.unrealized_conversion_cast
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: %[[V:.*]] = memref.load %[[DATA]][%[[I]]] : memref<?xf32>
// CHECK-NEXT: %[[W:.*]] = arith.mulf %[[V]], %[[V]] : f32
// CHECK-NEXT: memref.store %[[W]], %[[DATA]][%[[I]]] : memref<?xf32>
// CHECK-NEXT: }
// CHECK-NOT: func.call
// CHECK: llvm.return
// The others call their leaf function.
// CHECK-LABEL: llvm.func internal @__hpvm_range_twice_1(
// CHECK: func.call @__hpvm_leaf_twice(
// CHECK: llvm.return
// CHECK-LABEL: llvm.func internal @__hpvm_range_twice_2(
// CHECK: func.call @__hpvm_leaf_twice(
// CHECK: llvm.return
// CHECK-LABEL: llvm.func internal @__hpvm_range_scratch_1(
// CHECK: func.call @__hpvm_leaf_scratch(
// CHECK-LABEL: llvm.func internal @__hpvm_range_branches_1(
// CHECK: func.call @__hpvm_leaf_branches(

func.func @run(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>, %n: index) {
  %g = hpvm.launch @first(%a, %b, %n) : (memref<?xf32>, memref<?xf32>, index) -> !hpvm.graph
  hpvm.wait %g
  %h = hpvm.launch @second(%a, %b, %c, %n) : (memref<?xf32>, memref<?xf32>, memref<?xf32>, index) -> !hpvm.graph
  hpvm.wait %h
  return
}
