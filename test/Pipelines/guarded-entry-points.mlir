// hpvm-guarded-entry-points alone: each defined C interface function gets
// __hpvm_guarded_<f>(args), which loads the arguments through args[i]
// (pointers as they are, scalars through the pointer), calls it and stores
// the result through args[n]. Declarations and entry points that exist
// already are left alone.
// RUN: hpvm-opt %s --hpvm-guarded-entry-points | FileCheck %s

llvm.func @_mlir_ciface_scale(%p: !llvm.ptr, %x: f32) -> i32 {
  %0 = llvm.mlir.constant(0 : i32) : i32
  llvm.return %0 : i32
}
llvm.func @_mlir_ciface_external(!llvm.ptr)
llvm.func @_mlir_ciface_done(%p: !llvm.ptr) {
  llvm.return
}
llvm.func @__hpvm_guarded_done(%args: !llvm.ptr) {
  llvm.return
}

// CHECK-NOT: @__hpvm_guarded_external
// CHECK-LABEL: llvm.func @__hpvm_guarded_done(
// CHECK-NEXT: llvm.return
// CHECK: llvm.func @__hpvm_guarded_scale(%[[ARGS:.*]]: !llvm.ptr) {
// CHECK: %[[A0:.*]] = llvm.getelementptr %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P:.*]] = llvm.load %[[A0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[A1:.*]] = llvm.getelementptr %[[ARGS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[XP:.*]] = llvm.load %[[A1]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[X:.*]] = llvm.load %[[XP]] : !llvm.ptr -> f32
// CHECK: %[[R:.*]] = llvm.call @_mlir_ciface_scale(%[[P]], %[[X]]) : (!llvm.ptr, f32) -> i32
// CHECK: %[[A2:.*]] = llvm.getelementptr %[[ARGS]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[RP:.*]] = llvm.load %[[A2]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.store %[[R]], %[[RP]] : i32, !llvm.ptr
// CHECK: llvm.return
// CHECK-NOT: @__hpvm_guarded_external
