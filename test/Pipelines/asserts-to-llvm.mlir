// hpvm-asserts-to-llvm alone: cf.assert becomes a branch to a block that
// prints the message and aborts (abort and puts declared in the module); the
// other cf ops stay for hpvm-cf-to-llvm-in-function. A module without an
// assert is unchanged.
// RUN: hpvm-opt %s --split-input-file --hpvm-asserts-to-llvm | FileCheck %s

// CHECK-DAG: llvm.func @abort()
// CHECK-DAG: llvm.func @puts(!llvm.ptr)
// CHECK-LABEL: func.func @checked(
// CHECK: llvm.cond_br %{{.*}}, ^[[OK:.*]], ^[[FAIL:[a-z0-9]*]]
// CHECK: ^[[OK]]:
// CHECK-NEXT: cf.br
// CHECK: ^[[FAIL]]:
// CHECK: llvm.call @puts(
// CHECK-NEXT: llvm.call @abort()
func.func @checked(%c: i1) {
  cf.assert %c, "the condition holds"
  cf.br ^next
^next:
  return
}

// -----

// CHECK-NOT: llvm.func @abort
// CHECK-LABEL: func.func @no_assert(
// CHECK: cf.br ^bb1
func.func @no_assert() {
  cf.br ^next
^next:
  return
}
