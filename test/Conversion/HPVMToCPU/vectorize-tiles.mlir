// hpvm-vectorize tiles: which leaves get a tile variant
// (every grid with the same constant x extent, 2..128, supported ops), what
// each kind of access becomes, and tiles run on the thread running the tile.
// The variants stay functions of their own (inline-leaves=false) so that each
// can be checked apart from the range function that calls it.
// RUN: hpvm-opt %s --split-input-file --hpvm-vectorize --convert-hpvm-to-cpu=inline-leaves=false | FileCheck %s
// RUN: hpvm-opt %s --split-input-file --hpvm-vectorize=tiles=false --convert-hpvm-to-cpu | FileCheck %s --check-prefix=OFF
// OFF-NOT: __tile
// RUN: hpvm-opt %s --split-input-file --hpvm-vectorize=remarks=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// REMARK: remark: vectorized: tile rows of 16 instances run in lock-step (@contiguous__tile16)
// REMARK: remark: vectorized: tile rows of 4 instances run in lock-step (@divergent__tile4)
// REMARK: remark: vectorized: tile rows of 2 instances run in lock-step (@strided__tile2)
// OFF-NOT: vector.

// Contiguous accesses become vector loads and stores, a uniform load stays a
// scalar broadcast to the lanes; the tile runs through a direct call of its
// range function, which sends whole rows to the tile variant.
// CHECK-LABEL: func.func private @__hpvm_leaf_contiguous__tile16(
// CHECK-SAME: %[[A:[^:]*]]: memref<?xf32>, %[[C:[^:]*]]: memref<?xf32>, %[[X:[^:]*]]: index
// CHECK: %[[V:.*]] = vector.load %[[A]][%[[X]]] : memref<?xf32>, vector<16xf32>
// CHECK: %[[U:.*]] = memref.load %[[A]][%{{.*}}] : memref<?xf32>
// CHECK: %[[S:.*]] = vector.broadcast %[[U]] : f32 to vector<16xf32>
// CHECK: %[[R:.*]] = arith.addf %[[V]], %[[S]] : vector<16xf32>
// CHECK: vector.store %[[R]], %[[C]][%[[X]]] : memref<?xf32>, vector<16xf32>
// CHECK-LABEL: func.func private @__hpvm_internal_tile(
// CHECK-NOT: hpvm_rt_parallel_for
// CHECK: llvm.call @__hpvm_range_contiguous_2(
// CHECK-LABEL: llvm.func internal @__hpvm_range_contiguous_2(
// CHECK: scf.if
// CHECK: scf.for
// CHECK: func.call @__hpvm_leaf_contiguous__tile16(
// CHECK: } else {
// CHECK: func.call @__hpvm_leaf_contiguous(
hpvm.leaf @contiguous(%a: memref<?xf32>, %c: memref<?xf32>) {
  %x = hpvm.instance_id x : index
  %y = hpvm.instance_id y : index
  %v = memref.load %a[%x] : memref<?xf32>
  %u = memref.load %a[%y] : memref<?xf32>
  %s = arith.addf %v, %u : f32
  memref.store %s, %c[%x] : memref<?xf32>
  hpvm.return
}
hpvm.internal @tile(%a: memref<?xf32>, %c: memref<?xf32>) {
  %c16 = arith.constant 16 : index
  %c2 = arith.constant 2 : index
  %l = hpvm.create_node @contiguous [%c16, %c2] : !hpvm.node
  hpvm.bind_in %a -> %l[0] : memref<?xf32>
  hpvm.bind_in %c -> %l[1] : memref<?xf32>
}

// -----

// A divergent branch: both sides under masks, each run when some lane takes
// it, results selected per lane; the division sees 1 in inactive lanes.
// CHECK-LABEL: func.func private @__hpvm_leaf_divergent__tile4(
// CHECK: %[[TAKEN:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : vector<4xindex>
// CHECK: %[[NOT:.*]] = arith.xori %[[TAKEN]], %{{.*}} : vector<4xi1>
// CHECK: %[[ANY:.*]] = vector.reduction <or>, %[[TAKEN]] : vector<4xi1> into i1
// CHECK: %[[T:.*]] = scf.if %[[ANY]] -> (vector<4xf32>) {
// CHECK: vector.maskedload %{{.*}}[%{{.*}}], %[[TAKEN]], %{{.*}} : memref<?xf32>, vector<4xi1>, vector<4xf32> into vector<4xf32>
// CHECK: } else {
// CHECK: %[[ANYELSE:.*]] = vector.reduction <or>, %[[NOT]] : vector<4xi1> into i1
// CHECK: %[[E:.*]] = scf.if %[[ANYELSE]] -> (vector<4xf32>) {
// CHECK: %[[D:.*]] = arith.select %[[NOT]], %{{.*}}, %{{.*}} : vector<4xi1>, vector<4xindex>
// CHECK: arith.divui %{{.*}}, %[[D]] : vector<4xindex>
// CHECK: arith.select %[[TAKEN]], %[[T]], %[[E]] : vector<4xi1>, vector<4xf32>
hpvm.leaf @divergent(%a: memref<?xf32>, %c: memref<?xf32>, %n: index) {
  %x = hpvm.instance_id x : index
  %inside = arith.cmpi ult, %x, %n : index
  %r = scf.if %inside -> (f32) {
    %v = memref.load %a[%x] : memref<?xf32>
    scf.yield %v : f32
  } else {
    %q = arith.divui %n, %x : index
    %i = arith.index_cast %q : index to i32
    %f = arith.sitofp %i : i32 to f32
    scf.yield %f : f32
  }
  %c0 = arith.constant 0 : index
  memref.store %r, %c[%c0] : memref<?xf32>
  hpvm.return
}
hpvm.internal @tile(%a: memref<?xf32>, %c: memref<?xf32>, %n: index) {
  %c4 = arith.constant 4 : index
  %l = hpvm.create_node @divergent [%c4] : !hpvm.node
  hpvm.bind_in %a -> %l[0] : memref<?xf32>
  hpvm.bind_in %c -> %l[1] : memref<?xf32>
  hpvm.bind_in %n -> %l[2] : index
}

// -----

// Strided accesses go lane by lane: a gathered vector, scalar stores.
// CHECK-LABEL: func.func private @__hpvm_leaf_strided__tile2(
// CHECK-COUNT-2: memref.load
// CHECK: vector.from_elements %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK-COUNT-2: memref.store
hpvm.leaf @strided(%a: memref<?xf32>) {
  %x = hpvm.instance_id x : index
  %c2 = arith.constant 2 : index
  %i = arith.muli %x, %c2 : index
  %v = memref.load %a[%i] : memref<?xf32>
  %w = arith.addf %v, %v : f32
  memref.store %w, %a[%i] : memref<?xf32>
  hpvm.return
}
hpvm.internal @tile(%a: memref<?xf32>) {
  %c2 = arith.constant 2 : index
  %l = hpvm.create_node @strided [%c2] : !hpvm.node
  hpvm.bind_in %a -> %l[0] : memref<?xf32>
}

// -----

// No tile variant: a dynamic x extent, different constant extents, an
// extent of 1 or above 128, an atomic, an output.
// CHECK-LABEL: func.func private @__hpvm_leaf_dynamic(
// CHECK-NOT: __tile
hpvm.leaf @dynamic() {
  hpvm.return
}
hpvm.leaf @differing() {
  hpvm.return
}
hpvm.leaf @one() {
  hpvm.return
}
hpvm.leaf @wide() {
  hpvm.return
}
hpvm.leaf @atomic(%a: memref<?xf32>) {
  %x = hpvm.instance_id x : index
  %f = arith.constant 1.0 : f32
  %old = memref.atomic_rmw addf %f, %a[%x] : (f32, memref<?xf32>) -> f32
  hpvm.return
}
hpvm.leaf @output() -> (i32) {
  %c = arith.constant 1 : i32
  hpvm.return %c : i32
}
hpvm.internal @root(%a: memref<?xf32>, %n: index) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c256 = arith.constant 256 : index
  %d = hpvm.create_node @dynamic [%n] : !hpvm.node
  %e = hpvm.create_node @differing [%c4] : !hpvm.node
  %f = hpvm.create_node @differing [%c8] : !hpvm.node
  %g = hpvm.create_node @one [%c1] : !hpvm.node
  %h = hpvm.create_node @wide [%c256] : !hpvm.node
  %i = hpvm.create_node @atomic [%c8] : !hpvm.node
  hpvm.bind_in %a -> %i[0] : memref<?xf32>
  %j = hpvm.create_node @output [%c8] : !hpvm.node
}
