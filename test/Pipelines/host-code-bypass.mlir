// hpvm-host-code-bypass alone: its lowering (here canonicalize, then cse on
// func.func) runs as a nested pipeline while the functions entirely in the
// LLVM dialect are set aside (a declaration marked hpvm_set_aside in their
// place) with the global constructors; the glue of host code (arith in an
// llvm.func) is lowered first. Afterwards everything is back in its place,
// unchanged by the lowering: the unused constant of @host stays, @lowered's
// goes.
// RUN: hpvm-opt %s --pass-pipeline='builtin.module(hpvm-host-code-bypass{lowering=builtin.module(canonicalize,func.func(cse))})' | FileCheck %s
// RUN: hpvm-opt %s --pass-pipeline='builtin.module(hpvm-host-code-bypass{lowering=builtin.module(canonicalize,func.func(cse))})' --mlir-print-ir-after-all 2>&1 >/dev/null | FileCheck %s --check-prefix=NESTED
// The lowering is an option of the pass, printed with it (crash reproducers
// rerun the pipeline from that text).
// RUN: hpvm-opt %s --hpvm-lower-to-cpu-pipeline --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRINTED
// PRINTED: hpvm-host-code-bypass{lowering={builtin.module(func.func(hpvm-expand-strided-copies),llvm.func(hpvm-expand-strided-copies),hpvm-linalg-to-loops-where-used,
// Without a lowering, the functions are set aside and put back.
// RUN: hpvm-opt %s --hpvm-host-code-bypass | FileCheck %s --check-prefix=NONE

// CHECK-LABEL: llvm.func @host(
// CHECK-NEXT: llvm.mlir.constant(7 : i32)
// CHECK-NEXT: llvm.return
// CHECK-LABEL: llvm.func @glue(
// CHECK-NEXT: llvm.add
// CHECK-LABEL: func.func @lowered(
// CHECK-NEXT: return
// CHECK: llvm.mlir.global_ctors ctors = [@host]

// NESTED: IR Dump After Canonicalizer (canonicalize)
// NESTED-NEXT: module {
// NESTED-NEXT: llvm.func @host(i32) attributes {hpvm_set_aside}
// NESTED-NEXT: llvm.func @glue(i64) -> i64 attributes {hpvm_set_aside}
// NESTED-NEXT: func.func @lowered(
// NESTED-NEXT: return
// NESTED-NOT: global_ctors
// NESTED: IR Dump After CSE (cse)
// NESTED: IR Dump After HPVMHostCodeBypass (hpvm-host-code-bypass)

// NONE-LABEL: llvm.func @host(
// NONE-NEXT: llvm.mlir.constant(7 : i32)
// NONE-LABEL: llvm.func @glue(
// NONE-NEXT: llvm.add
// NONE-LABEL: func.func @lowered(
// NONE-NEXT: arith.constant
// NONE: llvm.mlir.global_ctors ctors = [@host]

llvm.func @host(%x: i32) {
  %unused = llvm.mlir.constant(7 : i32) : i32
  llvm.return
}
llvm.func @glue(%x: i64) -> i64 {
  %0 = arith.addi %x, %x : i64
  llvm.return %0 : i64
}
func.func @lowered(%x: i32) {
  %unused = arith.constant 7 : i32
  return
}
llvm.mlir.global_ctors ctors = [@host], priorities = [0 : i32], data = [#llvm.zero]
