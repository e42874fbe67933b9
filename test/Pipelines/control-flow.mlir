// hpvm-lower-to-llvm-pipeline lowers the control-flow dialect function by
// function (in parallel), after a module pass that lowers only cf.assert,
// whose lowering declares the runtime's hpvm_rt_assert_failed in the module:
// the IR of upstream's module-wide convert-cf-to-llvm but for the failure's
// report, a walk when there is no assert.
// RUN: hpvm-opt %s --hpvm-lower-to-llvm-pipeline | FileCheck %s
// RUN: hpvm-opt %s --hpvm-lower-to-llvm-pipeline --mlir-timing 2>&1 | FileCheck %s --check-prefix=PASSES

// CHECK: llvm.func @hpvm_rt_assert_failed(!llvm.ptr, !llvm.ptr)
// CHECK-LABEL: llvm.func @count(
// CHECK: llvm.br ^[[LOOP:.*]](%{{.*}} : i32)
// CHECK: ^[[LOOP]](%[[I:.*]]: i32):
// CHECK: llvm.cond_br %{{.*}}, ^[[EXIT:.*]], ^[[BODY:[a-z0-9]*]]
// CHECK: llvm.br ^[[LOOP]](%{{.*}} : i32)
// CHECK: llvm.return %[[I]] : i32
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

// CHECK-LABEL: llvm.func @checked(
// CHECK: llvm.cond_br %{{.*}}, ^[[OK:.*]], ^[[FAIL:[a-z0-9]*]]
// CHECK: ^[[FAIL]]:
// CHECK: llvm.call @hpvm_rt_assert_failed(
// CHECK-NEXT: llvm.unreachable
// CHECK: ^[[OK]]:
// CHECK-NEXT: llvm.return
func.func @checked(%c: i1) {
  cf.assert %c, "the condition holds"
  return
}

// PASSES: HPVMAssertsToLLVM
// PASSES: HPVMControlFlowToLLVMInFunction
// PASSES-NOT: ConvertControlFlowToLLVMPass
