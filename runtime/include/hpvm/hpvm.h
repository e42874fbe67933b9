/*===- hpvm.h - The HPVM-C API ---------------------------------------------===*
 *
 * Source-compatible with the public HPVM-C API: programs written for the
 * original HPVM release compile unchanged with `hpvm-cc prog.c -o prog`.
 * The functions are never defined: hpvm-cc compiles the program with clang,
 * imports the LLVM IR into MLIR, and the hpvm-raise-c pass turns every call
 * below into an op of the hpvm dialect (docs/HPVM-C.md has the mapping).
 *
 * Node functions follow the release's conventions:
 *  - inputs are the function's parameters; a pointer is followed by its size
 *    in bytes (a size_t parameter) when it is a buffer the graph moves;
 *  - outputs are the arguments of __hpvm__return, and the function's return
 *    type is a (packed) struct with one field per output;
 *  - __hpvm__launch gets a packed struct with one field per root parameter,
 *    plus a trailing field of the root's return type when the root has
 *    outputs and the launch is not streaming; __hpvm__wait fills that field.
 *===----------------------------------------------------------------------===*/
#ifndef HPVM_HPVM_H
#define HPVM_HPVM_H

/* The target a node is compiled for: `__hpvm__hint(DEVICE)` with
 * `-DDEVICE=CPU_TARGET` (hpvm-cc defines DEVICE from --target unless the
 * command line does). */
#ifndef DEVICE
#define DEVICE GPU_TARGET
#endif

#ifdef __cplusplus
namespace hpvm {
#endif
/* The values are what hpvm-raise-c reads; they are part of this header's ABI. */
enum Target {
  None = 0,
  CPU_TARGET = 1,
  GPU_TARGET = 2,
  SPIR_TARGET = 3,
  CUDNN_TARGET = 4,
  PROMISE_TARGET = 5,
  CPU_OR_GPU_TARGET = 6,
  CPU_OR_SPIR_TARGET = 7,
  FPGA_TARGET = 8,
  TENSOR_TARGET = 9,
  NUM_TARGETS
};
#ifdef __cplusplus
} /* namespace hpvm */
#endif

/* Edge kinds and stream flags, as the release's examples spell them. */
#define HPVM_ONE_TO_ONE 0
#define HPVM_ALL_TO_ALL 1
#define HPVM_NONSTREAMING 0
#define HPVM_STREAMING 1

/* A barrier is convergent: the optimizer must not make it depend on more values than the
 * source does. clang compiles leaves as plain C before hpvm-cc raises them, and without the
 * attribute it may unswitch a loop holding a barrier on a per-instance condition, so that the
 * instances of a work-group wait at different barriers: a hang on GPUs. */
#if defined(__has_attribute)
#if __has_attribute(convergent)
#define HPVM_CONVERGENT __attribute__((convergent))
#endif
#endif
#ifndef HPVM_CONVERGENT
#define HPVM_CONVERGENT
#endif

#ifdef __cplusplus
#include <cstddef>
#define HPVM_NOEXCEPT noexcept
extern "C" {
void __hpvm__hint(hpvm::Target) HPVM_NOEXCEPT;
#else
#include <stddef.h>
#define HPVM_NOEXCEPT
void __hpvm__hint(enum Target);
#endif

/* Graph description (internal nodes). */
void *__hpvm__createNodeND(unsigned dims, ...) HPVM_NOEXCEPT;
void __hpvm__bindIn(void *node, unsigned ip, unsigned ic, unsigned isStream) HPVM_NOEXCEPT;
void __hpvm__bindOut(void *node, unsigned oc, unsigned op, unsigned isStream) HPVM_NOEXCEPT;
void *__hpvm__edge(void *src, void *dst, unsigned replType, unsigned sp, unsigned dp,
                   unsigned isStream) HPVM_NOEXCEPT;

/* Every node. */
void __hpvm__attributes(unsigned nIn, ...) HPVM_NOEXCEPT;
void __hpvm__return(unsigned n, ...) HPVM_NOEXCEPT;
/* ApproxHPVM's id of a node for its tuner (the release's resnet programs
 * call it in every node); compiles to nothing here. */
void *__hpvm__node_id(int) HPVM_NOEXCEPT;

/* Host. */
void __hpvm__init(void) HPVM_NOEXCEPT;
void __hpvm__cleanup(void) HPVM_NOEXCEPT;
void *__hpvm__launch(unsigned isStream, ...) HPVM_NOEXCEPT;
void __hpvm__wait(void *graph) HPVM_NOEXCEPT;
void __hpvm__push(void *graph, void *args) HPVM_NOEXCEPT;
void *__hpvm__pop(void *graph) HPVM_NOEXCEPT;
void llvm_hpvm_track_mem(void *ptr, size_t bytes) HPVM_NOEXCEPT;
void llvm_hpvm_untrack_mem(void *ptr) HPVM_NOEXCEPT;
void llvm_hpvm_request_mem(void *ptr, size_t bytes) HPVM_NOEXCEPT;

/* Leaf nodes. */
void *__hpvm__getNode(void) HPVM_NOEXCEPT;
void *__hpvm__getParentNode(void *node) HPVM_NOEXCEPT;
long __hpvm__getNodeInstanceID_x(void *node) HPVM_NOEXCEPT;
long __hpvm__getNodeInstanceID_y(void *node) HPVM_NOEXCEPT;
long __hpvm__getNodeInstanceID_z(void *node) HPVM_NOEXCEPT;
long __hpvm__getNumNodeInstances_x(void *node) HPVM_NOEXCEPT;
long __hpvm__getNumNodeInstances_y(void *node) HPVM_NOEXCEPT;
long __hpvm__getNumNodeInstances_z(void *node) HPVM_NOEXCEPT;
HPVM_CONVERGENT void __hpvm__barrier(void) HPVM_NOEXCEPT;
void *__hpvm__malloc(long bytes) HPVM_NOEXCEPT;
void __hpvm__isNonZeroLoop(long, ...) HPVM_NOEXCEPT;

/* Atomics on int: each returns the value stored before the operation.
 * cmpxchg(p, expected, desired) stores desired when *p == expected. */
int __hpvm__atomic_cmpxchg(int *, int, int) HPVM_NOEXCEPT;
int __hpvm__atomic_add(int *, int) HPVM_NOEXCEPT;
int __hpvm__atomic_sub(int *, int) HPVM_NOEXCEPT;
int __hpvm__atomic_xchg(int *, int) HPVM_NOEXCEPT;
int __hpvm__atomic_inc(int *) HPVM_NOEXCEPT;
int __hpvm__atomic_dec(int *) HPVM_NOEXCEPT;
int __hpvm__atomic_min(int *, int) HPVM_NOEXCEPT;
int __hpvm__atomic_max(int *, int) HPVM_NOEXCEPT;
/* The release declares umin/umax on int (the comparison is unsigned): C++
 * programs pass int pointers. */
int __hpvm__atomic_umax(int *, int) HPVM_NOEXCEPT;
int __hpvm__atomic_umin(int *, int) HPVM_NOEXCEPT;
int __hpvm__atomic_and(int *, int) HPVM_NOEXCEPT;
int __hpvm__atomic_or(int *, int) HPVM_NOEXCEPT;
int __hpvm__atomic_xor(int *, int) HPVM_NOEXCEPT;

/* Special functions on float, in leaves (the math dialect's floor, rsqrt,
 * sqrt, sin, cos). */
float __hpvm__floor(float) HPVM_NOEXCEPT;
float __hpvm__rsqrt(float) HPVM_NOEXCEPT;
float __hpvm__sqrt(float) HPVM_NOEXCEPT;
float __hpvm__sin(float) HPVM_NOEXCEPT;
float __hpvm__cos(float) HPVM_NOEXCEPT;

/* Tensor intrinsics (ApproxHPVM); each returns a tensor handle.
 *
 * A tensor parameter of a leaf takes its shape from what flows into it: a tensor object the
 * host creates with ApproxHPVM's host API (<tensorUtils.h>: readTrainedWeights,
 * readInputBatch, create4DTensor) with constant sizes, or another node's tensor output. When
 * the host passes plain float arrays instead, the leaf declares each shape with compile-time
 * constants, e.g. `__hpvm__tensor_shape(t, 4, 1, 3, 32, 32)` for an NCHW image (rank 1 to 8).
 * The shapes of the results are inferred. A tensor output field receives a tensor object when
 * the launch passed tensor objects, else a malloc'd buffer holding the result, which the
 * program owns (docs/HPVM-C.md, "Tensors"). */
void __hpvm__tensor_shape(void *tensor, int rank, ...) HPVM_NOEXCEPT;
void *__hpvm__tensor_add(void *, void *) HPVM_NOEXCEPT;
void *__hpvm__tensor_mul(void *, void *) HPVM_NOEXCEPT;
void *__hpvm__tensor_relu(void *) HPVM_NOEXCEPT;
/* ReLU clipped at 6 (ReLU6), or at the constant `max` given as a second argument. */
void *__hpvm__tensor_clipped_relu(void *, ...) HPVM_NOEXCEPT;
void *__hpvm__tensor_tanh(void *) HPVM_NOEXCEPT;
void *__hpvm__tensor_sigmoid(void *) HPVM_NOEXCEPT;
void *__hpvm__tensor_softmax(void *) HPVM_NOEXCEPT;
void *__hpvm__tensor_convolution(void *input, void *filter, int vpad, int hpad, int vstride,
                                 int hstride) HPVM_NOEXCEPT;
void *__hpvm__tensor_group_convolution(void *input, void *filter, int vpad, int hpad,
                                       int vstride, int hstride, int conv_mode,
                                       int groups) HPVM_NOEXCEPT;
void *__hpvm__tensor_batchnorm(void *input, void *gamma, void *beta, void *mean,
                               void *variance, double epsilon) HPVM_NOEXCEPT;
void *__hpvm__tensor_pool_max(void *input, int winH, int winW, int vpad, int hpad,
                              int vstride, int hstride) HPVM_NOEXCEPT;
void *__hpvm__tensor_pool_mean(void *input, int winH, int winW, int vpad, int hpad,
                               int vstride, int hstride) HPVM_NOEXCEPT;
void *__hpvm__tensor_pool_min(void *input, int winH, int winW, int vpad, int hpad,
                              int vstride, int hstride) HPVM_NOEXCEPT;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HPVM_HPVM_H */
