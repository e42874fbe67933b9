// hpvm-asserts-to-llvm alone: cf.assert becomes a branch to a block that
// reports the message and the assert's location through the runtime
// (hpvm_rt_assert_failed declared in the module: an error of the program,
// which a guarded call returns instead of ending the process) and is
// unreachable after it; the other cf ops stay for hpvm-cf-to-llvm-in-function.
// A module without an assert is unchanged.
// RUN: hpvm-opt %s --split-input-file --hpvm-asserts-to-llvm | FileCheck %s

// CHECK-DAG: llvm.func @hpvm_rt_assert_failed(!llvm.ptr, !llvm.ptr)
// CHECK-DAG: llvm.mlir.global private constant @[[MSG:__hpvm_assert_[0-9]+]]("the condition holds\00")
// CHECK-DAG: llvm.mlir.global private constant @[[AT:__hpvm_assert_[0-9]+]]("{{.*}}asserts-to-llvm.mlir:{{[0-9]+}}:3\00")
// CHECK-LABEL: func.func @checked(
// CHECK: llvm.cond_br %{{.*}}, ^[[OK:.*]], ^[[FAIL:[a-z0-9]*]]
// CHECK: ^[[FAIL]]:
// CHECK: llvm.mlir.addressof @[[MSG]]
// CHECK: llvm.mlir.addressof @[[AT]]
// CHECK: llvm.call @hpvm_rt_assert_failed(
// CHECK-NEXT: llvm.unreachable
// CHECK: ^[[OK]]:
// CHECK-NEXT: cf.br
func.func @checked(%c: i1) {
  cf.assert %c, "the condition holds"
  cf.br ^next
^next:
  return
}

// -----

// CHECK-NOT: llvm.func @hpvm_rt_assert_failed
// CHECK-LABEL: func.func @no_assert(
// CHECK: cf.br ^bb1
func.func @no_assert() {
  cf.br ^next
^next:
  return
}
