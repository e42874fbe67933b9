// hpvm-cf-to-llvm-in-function alone, nested on functions: the branches of
// each function become llvm branches; cf.assert is left for
// hpvm-asserts-to-llvm (a module pass: its lowering declares a runtime function).
// RUN: hpvm-opt %s --pass-pipeline='builtin.module(func.func(hpvm-cf-to-llvm-in-function))' | FileCheck %s

// CHECK-NOT: llvm.func @hpvm_rt_assert_failed
// CHECK-LABEL: func.func @count(
// CHECK: llvm.br ^[[LOOP:.*]](%{{.*}} : i32)
// CHECK: ^[[LOOP]](%[[I:.*]]: i32):
// CHECK: llvm.cond_br %{{.*}}, ^[[EXIT:.*]], ^[[BODY:[a-z0-9]*]]
// CHECK: llvm.br ^[[LOOP]](%{{.*}} : i32)
// CHECK: return %[[I]] : i32
func.func @count(%n: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  cf.br ^loop(%c0 : i32)
^loop(%i: i32):
  %done = arith.cmpi sge, %i, %n : i32
  cf.cond_br %done, ^exit, ^body
^body:
  %next = arith.addi %i, %c1 : i32
  cf.br ^loop(%next : i32)
^exit:
  return %i : i32
}

// CHECK-LABEL: func.func @checked(
// CHECK: cf.assert %{{.*}}, "the condition holds"
// CHECK-NEXT: llvm.br ^bb1
func.func @checked(%c: i1) {
  cf.assert %c, "the condition holds"
  cf.br ^next
^next:
  return
}
