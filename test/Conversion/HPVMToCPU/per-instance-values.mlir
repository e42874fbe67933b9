// one_to_one edges out of a replicated node carry one value per instance: the
// producer's instances store into an array (malloc'ed by the parent, freed when
// it ends) that the consumer's instances index with their linear id. An output
// that is an input passed on unchanged, the same in every instance (%x, bound
// from the parent), is one value: no array for it.
// RUN: hpvm-opt %s --convert-hpvm-to-cpu | FileCheck %s

// CHECK-LABEL: func.func private @__hpvm_internal_root(
// CHECK-COUNT-1: llvm.call @malloc
// CHECK-NOT: llvm.call @malloc
// CHECK: llvm.call @free
// CHECK-NOT: llvm.call @free
// CHECK: return
hpvm.leaf @measure(%x: !llvm.ptr, %bytes: i64) -> (f32, !llvm.ptr) {
  %i = hpvm.instance_id x : index
  %i64 = arith.index_cast %i : index to i64
  %p = llvm.getelementptr %x[%i64] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %v = llvm.load %p : !llvm.ptr -> f32
  hpvm.return %v, %x : f32, !llvm.ptr
}
hpvm.leaf @combine(%v: f32, %out: !llvm.ptr) {
  %i = hpvm.instance_id x : index
  %i64 = arith.index_cast %i : index to i64
  %p = llvm.getelementptr %out[%i64] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %v, %p : f32, !llvm.ptr
  hpvm.return
}
hpvm.internal @root(%x: !llvm.ptr, %bytes: i64, %n: index) {
  %m = hpvm.create_node @measure [%n] : !hpvm.node
  %c = hpvm.create_node @combine [%n] : !hpvm.node
  hpvm.bind_in %x -> %m[0] : !llvm.ptr
  hpvm.bind_in %bytes -> %m[1] : i64
  hpvm.edge %m[0] -> %c[0] one_to_one
  hpvm.edge %m[1] -> %c[1] one_to_one
}
