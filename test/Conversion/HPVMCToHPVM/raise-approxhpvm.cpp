// What hpvm-raise-c makes of an ApproxHPVM program as the release writes it:
// no leaf declares a shape; the host's tensor calls with constant sizes give
// the root's inputs theirs (readInputBatch's batch is end - start), and the
// shapes flow down the graph, producers before consumers. A product of a 4-D
// activation by a 1x1xKxM weight flattens it; clipped_relu clips at 6 or at
// its second argument. The launch reads the tensor objects' data through
// hpvm_rt_tensor_input and returns a tensor object (hpvm_rt_tensor_output).
// RUN: hpvm-cc --emit=hpvm %s -o - | FileCheck %s
#include <hpvm.h>
#include <tensorUtils.h>

// CHECK-LABEL: hpvm.leaf private @_Z4convPvmS_m(
// CHECK-SAME: %{{.*}}: tensor<8x3x6x6xf32>, %{{.*}}: i64, %{{.*}}: tensor<4x3x3x3xf32>, %{{.*}}: i64) -> (tensor<8x4x4x4xf32>, i64)
void conv(void *t1, size_t b1, void *t2, size_t b2) {
  __hpvm__hint(hpvm::TENSOR_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__node_id(1);
  void *r = __hpvm__tensor_convolution(t1, t2, 0, 0, 1, 1);
  __hpvm__return(2, r, (size_t)0);
}

// CHECK-LABEL: hpvm.leaf private @_Z4clipPvm(
// CHECK-SAME: %[[X:.*]]: tensor<8x4x4x4xf32>, %{{.*}}: i64) -> (tensor<8x4x4x4xf32>, i64)
// CHECK: %[[A:.*]] = hpvm.tensor.clipped_relu %[[X]] max 6.0
// CHECK: hpvm.tensor.clipped_relu %[[A]] max 1.5
void clip(void *t1, size_t b1) {
  __hpvm__hint(hpvm::TENSOR_TARGET);
  __hpvm__attributes(1, t1, 0);
  void *r = __hpvm__tensor_clipped_relu(__hpvm__tensor_clipped_relu(t1), 1.5);
  __hpvm__return(2, r, (size_t)0);
}

// CHECK-LABEL: hpvm.leaf private @_Z5densePvmS_m(
// CHECK-SAME: %[[X:.*]]: tensor<8x4x4x4xf32>, %{{.*}}: i64, %[[W:.*]]: tensor<1x1x64x10xf32>, %{{.*}}: i64) -> (tensor<8x10x1x1xf32>, i64)
// CHECK: %[[FX:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0], [1, 2, 3]] : tensor<8x4x4x4xf32> into tensor<8x64xf32>
// CHECK: %[[FW:.*]] = tensor.collapse_shape %[[W]] {{\[\[}}0, 1, 2], [3]] : tensor<1x1x64x10xf32> into tensor<64x10xf32>
// CHECK: %[[M:.*]] = hpvm.tensor.mul %[[FX]], %[[FW]] : (tensor<8x64xf32>, tensor<64x10xf32>) -> tensor<8x10xf32>
// CHECK: tensor.expand_shape %[[M]] {{\[\[}}0], [1, 2, 3]] output_shape [8, 10, 1, 1]
void dense(void *t1, size_t b1, void *t2, size_t b2) {
  __hpvm__hint(hpvm::TENSOR_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  void *r = __hpvm__tensor_mul(t1, t2);
  __hpvm__return(2, r, (size_t)0);
}

// CHECK-LABEL: hpvm.internal private @_Z4rootPvmS_mS_m(
// CHECK-SAME: tensor<8x3x6x6xf32>, %{{.*}}: i64, %{{.*}}: tensor<4x3x3x3xf32>, %{{.*}}: i64, %{{.*}}: tensor<1x1x64x10xf32>, %{{.*}}: i64) -> (tensor<8x10x1x1xf32>, i64)
void root(void *input, size_t input_bytes, void *w, size_t w_bytes, void *d, size_t d_bytes) {
  __hpvm__hint(hpvm::CPU_TARGET);
  __hpvm__attributes(3, input, w, d, 0);
  void *c = __hpvm__createNodeND(0, conv);
  __hpvm__bindIn(c, 0, 0, 0);
  __hpvm__bindIn(c, 1, 1, 0);
  __hpvm__bindIn(c, 2, 2, 0);
  __hpvm__bindIn(c, 3, 3, 0);
  // Created before its producer: raised after it all the same.
  void *f = __hpvm__createNodeND(0, dense);
  void *k = __hpvm__createNodeND(0, clip);
  __hpvm__edge(c, k, 1, 0, 0, 0);
  __hpvm__edge(c, k, 1, 1, 1, 0);
  __hpvm__edge(k, f, 1, 0, 0, 0);
  __hpvm__edge(k, f, 1, 1, 1, 0);
  __hpvm__bindIn(f, 4, 2, 0);
  __hpvm__bindIn(f, 5, 3, 0);
  __hpvm__bindOut(f, 0, 0, 0);
  __hpvm__bindOut(f, 1, 1, 0);
}

typedef struct __attribute__((__packed__)) {
  void *input;
  size_t input_bytes;
  void *w;
  size_t w_bytes;
  void *d;
  size_t d_bytes;
  struct {
    void *tensor;
    size_t bytes;
  } r;
} RootIn;

const int batch_size = 8;

// CHECK-LABEL: llvm.func internal @__hpvm_launch__Z4rootPvmS_mS_m(
// CHECK: llvm.call @hpvm_rt_tensor_input(
// CHECK: llvm.call @hpvm_rt_tensor_output(
int main(int argc, char **argv) {
  void *w = readTrainedWeights("w.bin", 0, 4, 3, 3, 3);
  void *d = readTrainedWeights("d.bin", 0, 1, 1, 64, 10);
  RootIn *args = static_cast<RootIn *>(malloc(sizeof(RootIn)));
  args->input = create4DTensor(0, nchw, batch_size, 3, 6, 6);
  args->w = w;
  args->d = d;
  startMemTracking();
  for (int i = 0; i < argc; i++) {
    int start = i * batch_size, end = start + batch_size;
    args->input = readInputBatch("input.bin", nchw, start, end, 3, 6, 6);
    void *dfg = __hpvm__launch(0, root, (void *)args);
    __hpvm__wait(dfg);
    hpvm_request_tensor(args->r.tensor, 0);
    freeBatchMemory();
  }
  return 0;
}
