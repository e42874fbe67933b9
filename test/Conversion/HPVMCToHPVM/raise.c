// What hpvm-raise-c makes of each HPVM-C construct.
// RUN: hpvm-cc --emit=hpvm %s -o - | FileCheck %s
#include <hpvm.h>
#include <stdlib.h>

typedef struct __attribute__((__packed__)) { float sum; long count; int *hist; } Stats;

// Leaves keep their C body; queries on getNode / getParentNode become levels;
// __hpvm__return's float (promoted to double by the call) is a float again.
// CHECK-LABEL: hpvm.leaf private @tile_stats(
// CHECK-SAME: %{{.*}}: !llvm.ptr {hpvm.access = #hpvm.access<in>}, %{{.*}}: i64, %{{.*}}: !llvm.ptr {hpvm.access = #hpvm.access<inout>}, %{{.*}}: i64)
// CHECK-SAME: -> (f32, i64, !llvm.ptr) attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]}
// CHECK-DAG: hpvm.instance_id x : index
// CHECK-DAG: hpvm.instance_id x level 1 : index
// CHECK-DAG: hpvm.instance_id y : index
// CHECK-DAG: hpvm.num_instances x : index
// CHECK: llvm.atomicrmw add %{{.*}}, %{{.*}} seq_cst : !llvm.ptr, i32
// CHECK: llvm.atomicrmw max %{{.*}}, %{{.*}} seq_cst : !llvm.ptr, i32
// CHECK: hpvm.return %{{.*}}, %{{.*}}, %{{.*}} : f32, i64, !llvm.ptr
Stats tile_stats(float *in, size_t bytes_in, int *hist, size_t bytes_hist) {
  __hpvm__hint(CPU_OR_GPU_TARGET);
  __hpvm__attributes(2, in, hist, 1, hist);
  void *self = __hpvm__getNode();
  long x = __hpvm__getNodeInstanceID_x(self);
  long tile = __hpvm__getNodeInstanceID_y(self) +
              __hpvm__getNodeInstanceID_x(__hpvm__getParentNode(self));
  long n = __hpvm__getNumNodeInstances_x(self);
  float v = in[tile * n + x];
  __hpvm__atomic_add(&hist[(int)v & 7], 1);
  __hpvm__atomic_max(&hist[8], (int)v);
  __hpvm__return(3, v, n, hist);
}

// Scratch memory and a barrier.
// CHECK-LABEL: hpvm.leaf private @scratch(%{{.*}}: i64) -> (!llvm.ptr, i64)
// CHECK: %[[BYTES:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: hpvm.alloc(%[[BYTES]]) : !llvm.ptr
typedef struct __attribute__((__packed__)) { float *p; size_t bytes; } Buffer;
Buffer scratch(size_t bytes) {
  void *p = __hpvm__malloc(bytes);
  __hpvm__return(2, p, bytes);
}
// CHECK-LABEL: hpvm.leaf private @reduce(
// CHECK: hpvm.barrier
void reduce(float *tmp, size_t bytes) {
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  tmp[i] = i;
  __hpvm__barrier();
  if (i == 0)
    tmp[0] += tmp[1];
}

// An internal node: its loop of binds is unrolled, its extent arithmetic kept.
// CHECK-LABEL: hpvm.internal private @tiles(
// CHECK-SAME: -> (f32, i64, !llvm.ptr)
// CHECK: %[[DIV:.*]] = llvm.sdiv %arg4, %{{.*}} : i64
// CHECK: %[[TILES:.*]] = arith.index_cast %[[DIV]] : i64 to index
// CHECK: %[[LEAF:.*]] = hpvm.create_node @tile_stats [%{{.*}}, %[[TILES]]] : !hpvm.node
// CHECK-NEXT: hpvm.bind_in %arg0 -> %[[LEAF]][0] : !llvm.ptr
// CHECK-NEXT: hpvm.bind_in %arg1 -> %[[LEAF]][1] : i64
// CHECK-NEXT: hpvm.bind_in %arg2 -> %[[LEAF]][2] : !llvm.ptr
// CHECK-NEXT: hpvm.bind_in %arg3 -> %[[LEAF]][3] : i64
// CHECK-NEXT: hpvm.bind_out %[[LEAF]][0] -> 0
// CHECK-NEXT: hpvm.bind_out %[[LEAF]][1] -> 1
// CHECK-NEXT: hpvm.bind_out %[[LEAF]][2] -> 2
Stats tiles(float *in, size_t bytes_in, int *hist, size_t bytes_hist, long n) {
  __hpvm__hint(CPU_TARGET);
  void *leaf = __hpvm__createNodeND(2, tile_stats, 16L, n / 16);
  for (int i = 0; i < 4; ++i)
    __hpvm__bindIn(leaf, i, i, HPVM_NONSTREAMING);
  for (int i = 0; i < 3; ++i)
    __hpvm__bindOut(leaf, i, i, HPVM_NONSTREAMING);
}

// CHECK-LABEL: hpvm.internal private @root(
// CHECK: hpvm.create_node @tiles [%{{.*}}] : !hpvm.node
// CHECK: hpvm.create_node @scratch : !hpvm.node
// CHECK: hpvm.create_node @reduce [%{{.*}}] : !hpvm.node
// CHECK: hpvm.edge %{{.*}}[0] -> %{{.*}}[0] all_to_all
// CHECK: hpvm.edge %{{.*}}[1] -> %{{.*}}[1] all_to_all
Stats root(float *in, size_t bytes_in, int *hist, size_t bytes_hist, long n) {
  void *t = __hpvm__createNodeND(1, tiles, 2L);
  void *s = __hpvm__createNodeND(0, scratch);
  void *r = __hpvm__createNodeND(1, reduce, 2L);
  for (int i = 0; i < 5; ++i)
    __hpvm__bindIn(t, i, i, 0);
  __hpvm__bindIn(s, 1, 0, 0);
  __hpvm__edge(s, r, HPVM_ALL_TO_ALL, 0, 0, 0);
  __hpvm__edge(s, r, 1, 1, 1, 0);
  __hpvm__bindOut(t, 0, 0, 0);
  __hpvm__bindOut(t, 1, 1, 0);
  __hpvm__bindOut(t, 2, 2, 0);
}

typedef struct __attribute__((__packed__)) {
  float *in; size_t bytes_in; int *hist; size_t bytes_hist; long n; Stats out;
} RootIn;

// Host code: the packed struct's fields are read at the launch and the
// outputs written after it by the wait.
// CHECK-LABEL: llvm.func local_unnamed_addr @main(
// CHECK: hpvm.track %{{.*}}, %{{.*}} : !llvm.ptr
// CHECK: %[[AT32:.*]] = llvm.getelementptr %[[ARGS:.*]][32] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: %[[N:.*]] = llvm.load %[[AT32]] {alignment = 1 : i64} : !llvm.ptr -> i64
// CHECK: %[[G:.*]] = hpvm.launch @root(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[N]]) : (!llvm.ptr, i64, !llvm.ptr, i64, i64) -> !hpvm.graph
// CHECK: %[[OUT:.*]]:3 = hpvm.wait %[[G]] : f32, i64, !llvm.ptr
// CHECK: %[[AT:.*]] = llvm.getelementptr %[[ARGS]][40] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: llvm.store %[[OUT]]#0, %[[AT]] {alignment = 1 : i64} : f32, !llvm.ptr
// CHECK: llvm.getelementptr %{{.*}}[44] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: llvm.getelementptr %{{.*}}[52] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: hpvm.request %{{.*}}, %{{.*}} : !llvm.ptr
// CHECK: hpvm.untrack %{{.*}} : !llvm.ptr
// CHECK-NOT: __hpvm__
int main(void) {
  long n = 64;
  RootIn *args = malloc(sizeof(RootIn));
  args->in = calloc(n * 16, sizeof(float));
  args->bytes_in = n * 16 * sizeof(float);
  args->hist = calloc(9, sizeof(int));
  args->bytes_hist = 9 * sizeof(int);
  args->n = n;
  __hpvm__init();
  llvm_hpvm_track_mem(args->in, args->bytes_in);
  void *g = __hpvm__launch(0, root, args);
  __hpvm__wait(g);
  llvm_hpvm_request_mem(args->hist, args->bytes_hist);
  llvm_hpvm_untrack_mem(args->in);
  __hpvm__cleanup();
  return args->out.count == 16 ? 0 : 1;
}
