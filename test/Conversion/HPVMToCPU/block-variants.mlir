// convert-hpvm-to-cpu with block variants (rows > 1): rows advance by whole
// blocks through the block variant (a declined block instance by instance),
// the rest of each row of a block through the remainder variant, the rows
// left one by one through the lane variant; in collapsed grids a block is
// taken where it fits in the tile and the range.
// RUN: hpvm-opt %s --hpvm-vectorize="lanes=4 rows=2" --convert-hpvm-to-cpu | FileCheck %s

// CHECK-LABEL: llvm.func internal @__hpvm_range_fill_2(
// CHECK: scf.for %[[Y:.*]] = %{{.*}} to %[[YFULL:.*]] step %c2 {
// CHECK: scf.for %[[X:.*]] = %{{.*}} to %{{.*}} step %c4 {
// CHECK: %[[RAN:.*]] = func.call @__hpvm_leaf_fill__lanes4x2(%{{.*}}, %{{.*}}, %[[X]], %[[Y]],
// CHECK: scf.if %[[RAN]] {
// CHECK: } else {
// CHECK: func.call @__hpvm_leaf_fill(
// CHECK: scf.for %[[R:.*]] = %c0{{.*}} to %c2{{.*}} step
// CHECK: %[[RY:.*]] = arith.addi %[[Y]], %[[R]] : index
// CHECK: func.call @__hpvm_leaf_fill__lanes4_masked(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[RY]],
// CHECK: func.call @__hpvm_leaf_fill(
// CHECK: scf.for %[[ROW:.*]] = %[[YFULL]] to
// CHECK: func.call @__hpvm_leaf_fill__lanes4(
// CHECK-LABEL: llvm.func internal @__hpvm_collapsed_tile_fill(
// CHECK: scf.while (%[[C:.*]] = %{{.*}}) : (index) -> index {
// CHECK: scf.condition
// CHECK: %[[NEXT:.*]] = scf.if %{{.*}} -> (index) {
// CHECK: func.call @__hpvm_leaf_fill__lanes4x2(
// CHECK: scf.yield
// CHECK: } else {
// CHECK: func.call @__hpvm_leaf_fill__lanes4(
// CHECK: scf.yield
// CHECK: scf.yield %[[NEXT]] : index
hpvm.leaf private @fill(%out: !llvm.ptr, %n: i64) {
  %zero = llvm.mlir.constant(0 : i64) : i64
  %one = llvm.mlir.constant(1 : i64) : i64
  %x = hpvm.instance_id x : index
  %y = hpvm.instance_id y : index
  %x64 = arith.index_cast %x : index to i64
  %y64 = arith.index_cast %y : index to i64
  %row = llvm.mul %y64, %n : i64
  %i = llvm.add %row, %x64 : i64
  %p = llvm.getelementptr %out[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  llvm.br ^loop(%zero, %y64 : i64, i64)
^loop(%k: i64, %acc: i64):
  %q = llvm.getelementptr %out[%k] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  %v = llvm.load %q : !llvm.ptr -> i64
  %sum = llvm.add %acc, %v : i64
  %k1 = llvm.add %k, %one : i64
  %more = llvm.icmp "slt" %k1, %n : i64
  llvm.cond_br %more, ^loop(%k1, %sum : i64, i64), ^done
^done:
  llvm.store %sum, %p : i64, !llvm.ptr
  hpvm.return
}
hpvm.internal @plane(%out: !llvm.ptr, %n: i64, %nx: index, %ny: index) {
  %node = hpvm.create_node @fill [%nx, %ny] : !hpvm.node
  hpvm.bind_in %out -> %node[0] : !llvm.ptr
  hpvm.bind_in %n -> %node[1] : i64
}
hpvm.internal @tile(%out: !llvm.ptr, %n: i64) {
  %c8 = arith.constant 8 : index
  %c4 = arith.constant 4 : index
  %node = hpvm.create_node @fill [%c8, %c4] : !hpvm.node
  hpvm.bind_in %out -> %node[0] : !llvm.ptr
  hpvm.bind_in %n -> %node[1] : i64
}
hpvm.internal @tiles(%out: !llvm.ptr, %n: i64, %tx: index, %ty: index) {
  %node = hpvm.create_node @tile [%tx, %ty] : !hpvm.node
  hpvm.bind_in %out -> %node[0] : !llvm.ptr
  hpvm.bind_in %n -> %node[1] : i64
}
