// RUN: hpvm-opt --convert-hpvm-to-cpu %s | FileCheck %s
// A graph handle that reaches its wait through branches (one of two roots
// chosen at run time, a handle carried around a loop): block arguments take
// the launch blocks, and the one wait reads whichever block arrives.

hpvm.leaf @count(%x: f32) -> (i64) {
  %c = arith.constant 1 : i64
  hpvm.return %c : i64
}
hpvm.leaf @twice(%x: f32) -> (i64) {
  %c = arith.constant 2 : i64
  hpvm.return %c : i64
}

// CHECK: llvm.mlir.global internal constant @[[WHERE:__hpvm_where[_0-9]*]]("{{.*}}merged-handles.mlir:[[@LINE+32]]:{{[0-9]+}}: running @count or @twice\00")

// CHECK-LABEL: func.func @choose(
func.func @choose(%which: i1, %x: f32) -> i64 {
  // CHECK: cf.cond_br %{{.*}}, ^[[COUNT:bb[0-9]+]], ^[[TWICE:bb[0-9]+]]
  cf.cond_br %which, ^count, ^twice
// CHECK: ^[[COUNT]]:
// CHECK: %[[A:.*]] = llvm.call @malloc
// CHECK: llvm.call @hpvm_rt_launch(%{{.*}}, %[[A]],
// CHECK: cf.br ^[[JOIN:bb[0-9]+]](%[[A]] : !llvm.ptr)
^count:
  %a = hpvm.launch @count(%x) : (f32) -> !hpvm.graph
  cf.br ^join(%a : !hpvm.graph)
// CHECK: ^[[TWICE]]:
// CHECK: %[[B:.*]] = llvm.call @malloc
// CHECK: llvm.call @hpvm_rt_launch(%{{.*}}, %[[B]],
// CHECK: cf.br ^[[JOIN]](%[[B]] : !llvm.ptr)
^twice:
  %b = hpvm.launch @twice(%x) : (f32) -> !hpvm.graph
  cf.br ^join(%b : !hpvm.graph)
// CHECK: ^[[JOIN]](%[[BLOCK:.*]]: !llvm.ptr):
// The handle is the block's first field: at the block's address.
// CHECK: %[[HANDLE:.*]] = llvm.load %[[BLOCK]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[STATUS:.*]] = llvm.call @hpvm_rt_wait(%[[HANDLE]])
// CHECK: %[[TEXT:.*]] = llvm.mlir.addressof @[[WHERE]]
// CHECK: llvm.call @hpvm_rt_check_at(%[[STATUS]], %[[TEXT]])
// CHECK: %[[OUT:.*]] = llvm.getelementptr %[[BLOCK]][0, 2]
// CHECK: %[[R:.*]] = llvm.load %[[OUT]] : !llvm.ptr -> i64
// CHECK: llvm.call @free(%[[BLOCK]])
// CHECK-NOT: hpvm_rt_wait
// CHECK: return %[[R]]
^join(%g: !hpvm.graph):
  %r = hpvm.wait %g : i64
  return %r : i64
}

// Each step waits for the previous launch and starts the next: the handle is
// carried by the loop's header.
// CHECK-LABEL: func.func @alternate(
func.func @alternate(%x: f32, %steps: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[FIRST:.*]] = llvm.call @malloc
  %first = hpvm.launch @count(%x) : (f32) -> !hpvm.graph
  // CHECK: cf.br ^[[HEADER:bb[0-9]+]](%{{.*}}, %[[FIRST]] : index, !llvm.ptr)
  cf.br ^header(%c0, %first : index, !hpvm.graph)
// CHECK: ^[[HEADER]](%{{.*}}: index, %[[CARRIED:.*]]: !llvm.ptr):
^header(%i: index, %g: !hpvm.graph):
  // CHECK: llvm.load %[[CARRIED]] : !llvm.ptr -> !llvm.ptr
  // CHECK: llvm.call @hpvm_rt_wait
  // CHECK: llvm.call @free(%[[CARRIED]])
  %r = hpvm.wait %g : i64
  %next = arith.addi %i, %c1 : index
  %more = arith.cmpi ult, %next, %steps : index
  cf.cond_br %more, ^body, ^exit
^body:
  // CHECK: %[[AGAIN:.*]] = llvm.call @malloc
  // CHECK: cf.br ^[[HEADER]](%{{.*}}, %[[AGAIN]] : index, !llvm.ptr)
  %again = hpvm.launch @twice(%x) : (f32) -> !hpvm.graph
  cf.br ^header(%next, %again : index, !hpvm.graph)
^exit:
  return
}
