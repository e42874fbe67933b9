/* hpvm_rt.h - the C ABI that HPVM-compiled programs call: init, graphs, streaming, memory, GPUs. */
#ifndef HPVM_HPVM_RT_H
#define HPVM_HPVM_RT_H

/*
 * Conventions (see docs/Runtime.md for the full contract):
 *  - Every fallible call returns hpvm_status_t: NULL means success, anything else is an
 *    owned status object that the caller must hand to hpvm_status_free (or hpvm_rt_check,
 *    which prints it and exits).  Results come back through trailing out_ parameters, which
 *    are left untouched on failure unless documented otherwise.
 *  - Every hpvm_rt_* call initialises the runtime lazily, so programs that never call
 *    hpvm_rt_init still work; hpvm_rt_shutdown is optional at exit.
 *  - All calls are thread-safe unless a comment says otherwise.
 *  - Names: hpvm_rt_* is the stable ABI the compiler targets; hpvm_<module>_<object>_<verb>
 *    names inside runtime/src are internal and may change.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define HPVM_RT_EXPORT __attribute__((visibility("default")))
#define HPVM_RT_MUST_USE __attribute__((warn_unused_result))
#else
#define HPVM_RT_EXPORT
#define HPVM_RT_MUST_USE
#endif

/*===--------------------------------------------------------------------===*
 * Status
 *===--------------------------------------------------------------------===*/

/* gRPC-style status codes; the numeric values match gRPC so tools can share tables. */
typedef enum hpvm_status_code_e {
  HPVM_STATUS_OK = 0,
  HPVM_STATUS_CANCELLED = 1,           /* the operation was cancelled (stream cancel) */
  HPVM_STATUS_UNKNOWN = 2,             /* a backend error with no better mapping */
  HPVM_STATUS_INVALID_ARGUMENT = 3,    /* the caller passed a bad value (NULL, zero size, ...) */
  HPVM_STATUS_DEADLINE_EXCEEDED = 4,   /* reserved; no call times out today */
  HPVM_STATUS_NOT_FOUND = 5,           /* untracked pointer, unknown kernel name, ... */
  HPVM_STATUS_ALREADY_EXISTS = 6,      /* the pointer is already tracked */
  HPVM_STATUS_PERMISSION_DENIED = 7,   /* reserved */
  HPVM_STATUS_RESOURCE_EXHAUSTED = 8,  /* out of host or device memory, size overflow */
  HPVM_STATUS_FAILED_PRECONDITION = 9, /* call in the wrong state (push after close, ...) */
  HPVM_STATUS_ABORTED = 10,            /* the work was abandoned because another part failed */
  HPVM_STATUS_OUT_OF_RANGE = 11,       /* end of stream, or an access past a tracked object */
  HPVM_STATUS_UNIMPLEMENTED = 12,      /* the device cannot do this (e.g. CPU kernel launch) */
  HPVM_STATUS_INTERNAL = 13,           /* a runtime invariant broke: a bug, please report */
  HPVM_STATUS_UNAVAILABLE = 14,        /* the device or driver is missing or failed */
  HPVM_STATUS_DATA_LOSS = 15,          /* reserved */
} hpvm_status_code_t;

/* NULL = OK.  A non-NULL status is owned by whoever received it. */
typedef struct hpvm_status_s *hpvm_status_t;

/* The code of `status`; HPVM_STATUS_OK for NULL.  Does not consume `status`. */
HPVM_RT_EXPORT hpvm_status_code_t hpvm_status_code(hpvm_status_t status);
/* The message of `status` ("" for NULL); valid until the status is freed. */
HPVM_RT_EXPORT const char *hpvm_status_message(hpvm_status_t status);
/* The code's canonical name, e.g. "UNAVAILABLE".  Never NULL. */
HPVM_RT_EXPORT const char *hpvm_status_code_name(hpvm_status_code_t code);
/* Releases `status`; NULL is a no-op. */
HPVM_RT_EXPORT void hpvm_status_free(hpvm_status_t status);
/* Creates a status with a printf-style message.  HPVM_STATUS_OK yields NULL.  Never fails:
 * when memory is exhausted a preallocated RESOURCE_EXHAUSTED status is returned instead. */
HPVM_RT_EXPORT hpvm_status_t hpvm_status_create(hpvm_status_code_t code, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* For compiled programs: if `status` is an error, prints "hpvm: error: CODE: message" to
 * stderr, frees it and exits with status 1; otherwise returns.  Never returns on error.
 * Inside hpvm_rt_call_guarded on the same thread, it returns to the guard instead. */
HPVM_RT_EXPORT void hpvm_rt_check(hpvm_status_t status);
/* Like hpvm_rt_check but prefixes the message with `where` (e.g. the source location). */
HPVM_RT_EXPORT void hpvm_rt_check_at(hpvm_status_t status, const char *where);
/* For compiled code: a failed assertion (`cf.assert` of the program, e.g. an index a tensor
 * op checks) as an error of the program: hpvm_rt_check_at of a FAILED_PRECONDITION status with
 * `message`, so that inside hpvm_rt_call_guarded it returns to the guard instead of ending the
 * process.  Never returns. */
HPVM_RT_EXPORT void hpvm_rt_assert_failed(const char *message, const char *where);

/* For embedders (a library or an interpreter calling compiled code): calls `entry(args)`
 * and returns NULL, or, when compiled code on this thread meets an error it would exit for
 * (hpvm_rt_check_at), returns that error as a status (the caller frees it) instead of ending
 * the process.  `entry` is a guarded entry point of a compiled module
 * (`__hpvm_guarded_<function>`, which reads the function's arguments from `args`).  What the
 * interrupted call allocated is not freed.  Guards nest; the status is per thread. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_call_guarded(void (*entry)(void **),
                                                                   void **args);

/*===--------------------------------------------------------------------===*
 * Runtime lifetime
 *===--------------------------------------------------------------------===*/

/* Starts the runtime (worker pool, policy, memory tracker) if it is not running.  Reads the
 * environment: HPVM_NUM_THREADS (total threads computing: N-1 pool workers + the caller;
 * default: online CPUs), HPVM_POLICY (static-node | static-item | dynamic; default dynamic),
 * HPVM_STREAM_CAPACITY (default ring capacity, default 64).  Idempotent and thread-safe;
 * every other hpvm_rt_* call does this lazily. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_init(void);
/* Stops the runtime: joins the workers, releases devices and frees every tracked object's
 * device copies.  Outstanding launches must have been waited for.  A later hpvm_rt_* call
 * starts a fresh runtime.  Safe to call when not running. */
HPVM_RT_EXPORT void hpvm_rt_shutdown(void);
/* Number of threads that run parallel-for bodies (pool workers + the calling thread). */
HPVM_RT_EXPORT uint32_t hpvm_rt_thread_count(void);

/*===--------------------------------------------------------------------===*
 * Parallel-for over a 1-3-D instance grid (a replicated leaf node)
 *===--------------------------------------------------------------------===*/

/* The box of instances one call of the body must run: begin[d] <= id_d < end[d] for each
 * dimension d < rank (x = 0 is the innermost/fastest).  extent[] is the whole grid (the
 * node's getNumNodeInstances); dimensions >= rank have begin 0, end 1, extent 1. */
typedef struct hpvm_rt_instance_range_t {
  int64_t begin[3];
  int64_t end[3];
  int64_t extent[3];
  uint32_t rank;
  uint32_t worker_index; /* 0..hpvm_rt_thread_count()-1, stable for the call: scratch index */
} hpvm_rt_instance_range_t;

/* The outlined leaf: compiled code passes a function pointer and an opaque context (the
 * packed node arguments).  Called concurrently from several threads with disjoint boxes. */
typedef void (*hpvm_rt_parallel_for_fn_t)(void *context, const hpvm_rt_instance_range_t *range);

/* Runs `body` over every instance of the grid `extents[0..rank)` exactly once and returns when
 * all have finished (blocks; the caller runs part of the grid itself).  rank is 1..3;
 * an extent of 0 runs nothing; negative extents are INVALID_ARGUMENT.  May be called from
 * inside a body (nested parallel-for): never deadlocks, the caller helps. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_parallel_for(uint32_t rank,
                                                                   const int64_t *extents,
                                                                   hpvm_rt_parallel_for_fn_t body,
                                                                   void *context);

/*===--------------------------------------------------------------------===*
 * Buffers of compiled code (memref.alloc / memref.dealloc)
 *===--------------------------------------------------------------------===*/

/* MLIR's generic allocation functions, which the compiler's memref lowering calls. Blocks of
 * 64 KiB and more are kept for reuse when freed (size classes; at most 512 MiB in all,
 * released by hpvm_rt_shutdown): a graph run again reuses its buffers instead of faulting in
 * fresh pages. _free of a pointer these did not hand out, or of one already freed, frees
 * nothing and prints a warning. Alignments must be powers of two. */
HPVM_RT_EXPORT void *_mlir_memref_to_llvm_alloc(size_t size);
HPVM_RT_EXPORT void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size);
HPVM_RT_EXPORT void _mlir_memref_to_llvm_free(void *pointer);

/* Whether the caller is the last of `receivers` nodes that each received the buffer at `buffer`
 * and are done with it: the graph hands a buffer that fans out to several leaves to all of
 * them, and where none of them is sure to run after the others, each calls this as it
 * returns; the call that completes the count returns 1 (that receiver frees the buffer), the
 * others 0. Counted per address: a buffer is counted afresh once its count completed. The
 * calls synchronize (a mutex): every receiver's reads of the buffer happen before the last
 * call returns. receivers <= 1: 1. Without memory for the count: 0 (the buffer is kept: a
 * leak, never a use after free). */
HPVM_RT_EXPORT int32_t hpvm_rt_buffer_last_use(const void *buffer, int64_t receivers);

/*===--------------------------------------------------------------------===*
 * Tensor kernels (hpvm.tensor.mul and hpvm.tensor.conv2d on the CPU, f32)
 *===--------------------------------------------------------------------===*/

/* What the tensor kernels apply to each result element after the sum (fused epilogues). */
typedef enum hpvm_rt_tensor_activation_e {
  HPVM_RT_TENSOR_IDENTITY = 0,
  HPVM_RT_TENSOR_RELU = 1,         /* max(x, 0) */
  HPVM_RT_TENSOR_CLIPPED_RELU = 2, /* min(max(x, 0), activation_max) */
  /* 1 / (1 + exp(-x)), with the compiled code's exp (MLIR's polynomial expansion, the same
   * operations and roundings): the bits of an unfused hpvm.tensor.sigmoid. */
  HPVM_RT_TENSOR_SIGMOID = 3,
  HPVM_RT_TENSOR_SILU = 4, /* x * sigmoid(x) (SiLU, swish), sigmoid as above */
  /* x * max(min(x * (1/6) + 0.5, 1), 0) (HardSwish), each operation rounded to f32, min and
   * max keeping a NaN: the bits of the ONNX importer's hpvm.tensor.map for it. */
  HPVM_RT_TENSOR_HARDSWISH = 5,
} hpvm_rt_tensor_activation_t;

/* c[b] = act(a[b] * b[b] + bias) for each of `batch` row-major products (a: m x k, b: k x n,
 * c: m x n, the matrices of a batch one after another; bias: n values added to every row, or
 * NULL; act: an hpvm_rt_tensor_activation_t). Runs on the thread pool; never fails (without
 * memory for packing it computes unpacked). Negative sizes, NULL operands or an unknown
 * activation: nothing is computed, with a warning. */
HPVM_RT_EXPORT void hpvm_rt_tensor_matmul_f32(const float *a, const float *b, const float *bias,
                                              float *c, int64_t batch, int64_t m, int64_t n,
                                              int64_t k, int64_t activation,
                                              double activation_max);
/* hpvm_rt_tensor_matmul_f32 for a b (and bias) that never change while the program runs (the
 * program's constants; the compiler calls it for products whose right operand is one, the
 * weights of a fully connected layer or a transformer's projection): b is packed for the
 * kernel on the first call and kept, keyed by its address and the product's shape, so that
 * later calls pack only a. The same sums, bit for bit, as hpvm_rt_tensor_matmul_f32. */
HPVM_RT_EXPORT void hpvm_rt_tensor_matmul_constant_f32(const float *a, const float *b,
                                                       const float *bias, float *c,
                                                       int64_t batch, int64_t m, int64_t n,
                                                       int64_t k, int64_t activation,
                                                       double activation_max);

/* The accumulation step of a leaf's reduction loop: returns the new accumulator. */
typedef float (*hpvm_rt_contract_step_fn)(float a, float b, float acc);

/* s[y * lds + x] for x < cols, y < rows = the fold over kk = 0 .. depth - 1 of
 *   acc = step(p[y * p_row + kk * p_depth], q[x * q_col + kk * q_depth], acc), from acc = init,
 * in ascending kk, bit for bit what the sequential loop gives. Strides are in elements and may be
 * any value (negative, zero). `step` is the compiled leaf's own step, either a fused
 * multiply-add (fma(a, b, acc)) or a rounded product then a rounded sum (acc + a * b); the
 * driver calls it once on inputs that tell the two apart and then runs its own vector kernels of
 * that kind. s must not overlap p or q. Returns 0 when s holds the results (rows = 0 or cols = 0:
 * nothing to do; depth = 0: every element is init); nonzero when it computed nothing (step is
 * neither kind, invalid sizes (negative), a NULL pointer with rows, cols > 0, or lds < cols),
 * and then the caller must compute the results itself. Runs on the thread pool; without memory
 * for packing a block is folded through `step` itself, unpacked. */
HPVM_RT_EXPORT int32_t hpvm_rt_contract_f32(const float *p, int64_t p_row, int64_t p_depth,
                                            const float *q, int64_t q_col, int64_t q_depth,
                                            int64_t rows, int64_t cols, int64_t depth, float init,
                                            hpvm_rt_contract_step_fn step, float *s, int64_t lds);

/* Whether hpvm_rt_contract_f32 of this size beats the leaf's own loops: 1 when rows * cols *
 * depth (the multiply-adds) is at least HPVM_CONTRACT_MIN (read once; default 2^25, where the
 * contraction's packing and second launch stop costing more than they save on the machines
 * measured; 1 = always), 0 otherwise and for sizes below 1 or whose product overflows int64. */
HPVM_RT_EXPORT int32_t hpvm_rt_contract_pays(int64_t rows, int64_t cols, int64_t depth);

/* Storage formats of hpvm_rt_tensor_matmul_half's operands (the fp16 and bf16 knobs). */
typedef enum hpvm_rt_tensor_half_e {
  HPVM_RT_TENSOR_FP16 = 1, /* IEEE 754 binary16: 1 sign, 5 exponent, 10 fraction bits */
  HPVM_RT_TENSOR_BF16 = 2, /* bfloat16: the upper half of an f32 (8 exponent, 7 fraction bits) */
} hpvm_rt_tensor_half_t;

/* hpvm_rt_tensor_matmul_f32 with a and b stored in `format` (16-bit values, an
 * hpvm_rt_tensor_half_t): each is widened to f32 as it is packed, the products are summed in f32
 * as there, and each result (after bias and activation) is rounded to the format (to nearest,
 * ties to even) and stored in c as an f32. Products that stream their operands from memory
 * (few rows: fully connected layers) read half the bytes. An unknown format: nothing is
 * computed, with a warning. */
HPVM_RT_EXPORT void hpvm_rt_tensor_matmul_half(const uint16_t *a, const uint16_t *b,
                                               const float *bias, float *c, int64_t batch,
                                               int64_t m, int64_t n, int64_t k,
                                               int64_t activation, double activation_max,
                                               int64_t format);

/* x rounded to `format` (an hpvm_rt_tensor_half_t; to nearest, ties to even; overflow to
 * infinity, NaN stays NaN) as 16 bits, and those 16 bits widened back to an f32 (exact). */
HPVM_RT_EXPORT uint16_t hpvm_rt_tensor_to_half(float x, int64_t format);
/* out[i] = hpvm_rt_tensor_to_half(x[i], format) for i < count (an operand of
 * hpvm_rt_tensor_matmul_half that is not a constant, converted where the product runs). */
HPVM_RT_EXPORT void hpvm_rt_tensor_narrow_f32(const float *x, uint16_t *out, int64_t count,
                                              int64_t format);
HPVM_RT_EXPORT float hpvm_rt_tensor_from_half(uint16_t bits, int64_t format);

/* output[n][f][oh][ow] = act(sum over the c / groups channels of f's group and the kh x kw
 * window of input (NCHW, zero-padded by pad_h / pad_w on both sides) times filter (FCHW, C = c /
 * groups) + bias[f]) (bias NULL: none; act as for matmul). oh and ow must be (h + 2 * pad_h -
 * kh) / stride_h + 1 and likewise for w; f and c multiples of groups. Inconsistent shapes:
 * nothing is computed, with a warning. */
HPVM_RT_EXPORT void hpvm_rt_tensor_conv2d_f32(const float *input, const float *filter,
                                              const float *bias, float *output, int64_t n,
                                              int64_t c, int64_t h, int64_t w, int64_t f,
                                              int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                                              int64_t pad_h, int64_t pad_w, int64_t stride_h,
                                              int64_t stride_w, int64_t groups,
                                              int64_t activation, double activation_max);

/* hpvm_rt_tensor_conv2d_f32 for a filter and bias that never change while the program runs
 * (the program's constants; the compiler calls it for convolutions whose filter is one): their
 * packed forms are made on the first call and kept, keyed by their addresses and the
 * convolution's shape, so that later calls do not pack the weights again. */
HPVM_RT_EXPORT void hpvm_rt_tensor_conv2d_constant_f32(
    const float *input, const float *filter, const float *bias, float *output, int64_t n,
    int64_t c, int64_t h, int64_t w, int64_t f, int64_t kh, int64_t kw, int64_t oh, int64_t ow,
    int64_t pad_h, int64_t pad_w, int64_t stride_h, int64_t stride_w, int64_t groups,
    int64_t activation, double activation_max);

/* Approximation knobs of hpvm_rt_tensor_conv2d_approx_f32. */
typedef enum hpvm_rt_tensor_knob_e {
  HPVM_RT_TENSOR_KNOB_EXACT = 0,           /* hpvm_rt_tensor_conv2d_f32 itself */
  HPVM_RT_TENSOR_KNOB_PERFORATE_ROWS = 1,  /* skip output rows y with y % rate == offset */
  HPVM_RT_TENSOR_KNOB_PERFORATE_COLS = 2,  /* skip output columns x with x % rate == offset */
  HPVM_RT_TENSOR_KNOB_SAMPLE_FILTER = 3,   /* skip filter elements k with k % rate == offset */
} hpvm_rt_tensor_knob_t;

/* hpvm_rt_tensor_conv2d_f32 (the first 20 parameters mean the same) made cheaper by one
 * approximation knob of ApproxHPVM / ApproxTuner; the skipped work is not done.
 * - KNOB_EXACT: hpvm_rt_tensor_conv2d_f32 itself (rate and offset ignored).
 * - KNOB_PERFORATE_ROWS (perforated convolution): the output rows y with y % rate == offset
 *   are not computed; the others are, exactly (bias and activation included). A skipped row
 *   is then the average of the final rows y - 1 and y + 1, or a copy of its one neighbour at
 *   the first or last row; a plane of one row is computed whole.
 *   KNOB_PERFORATE_COLS: the same along x (columns x with x % rate == offset).
 * - KNOB_SAMPLE_FILTER (filter sampling): of each filter's reduction elements, flattened as
 *   k = (channel_in_group * kh + i) * kw + j, those with k % rate == offset are skipped and the
 *   others scaled by rate / (rate - 1.0); bias and activation as usual.
 * rate >= 2 and 0 <= offset < rate; otherwise, for an unknown knob, or for arguments
 * hpvm_rt_tensor_conv2d_f32 would refuse, nothing is computed, with a warning. Runs on the
 * thread pool; never fails. */
HPVM_RT_EXPORT void hpvm_rt_tensor_conv2d_approx_f32(
    const float *input, const float *filter, const float *bias, float *output, int64_t n,
    int64_t c, int64_t h, int64_t w, int64_t f, int64_t kh, int64_t kw, int64_t oh, int64_t ow,
    int64_t pad_h, int64_t pad_w, int64_t stride_h, int64_t stride_w, int64_t groups,
    int64_t activation, double activation_max, int64_t knob, int64_t rate, int64_t offset);

typedef enum hpvm_rt_tensor_pool_kind_e {
  HPVM_RT_TENSOR_POOL_MAX = 0,
  HPVM_RT_TENSOR_POOL_MIN = 1,
  HPVM_RT_TENSOR_POOL_MEAN = 2, /* divides by the window size, padding included */
} hpvm_rt_tensor_pool_kind_t;

/* output[n][c][oh][ow] = the max / min / mean of each window_h x window_w window of input
 * (NCHW; padding never wins a max or min and adds 0 to a mean), windows stride_h / stride_w
 * apart, the first at row -pad_h and column -pad_w. The image is padded by pad_h before its
 * first row and by pad_end_h after its last, where oh = (h + pad_h + pad_end_h - window_h) /
 * stride_h + 1 for some 0 <= pad_end_h < window_h (pad_end_h = pad_h: the same padding on
 * both sides; more: ceil_mode, the last window over the end of the image); likewise ow.
 * One plane per task on the thread pool. Inconsistent arguments: nothing is computed, with
 * a warning. */
HPVM_RT_EXPORT void hpvm_rt_tensor_pool_f32(const float *input, float *output, int64_t kind,
                                            int64_t n, int64_t c, int64_t h, int64_t w,
                                            int64_t window_h, int64_t window_w,
                                            int64_t stride_h, int64_t stride_w, int64_t pad_h,
                                            int64_t pad_w, int64_t oh, int64_t ow);

/* Channels in blocks ("NCHW16c"): a tensor of n images of c channels (c a multiple of
 * HPVM_RT_TENSOR_BLOCK), h x w, kept as [n][c / 16][h][w][16], the 16 channels of a block
 * consecutive at each position. The compiler keeps activations in this layout between the
 * convolutions and pools of a graph (hpvm-block-tensor-layout) and converts at its edges. */
#define HPVM_RT_TENSOR_BLOCK 16

/* Which operands of hpvm_rt_tensor_conv2d_blocked_f32 are blocked (bits of `layouts`). */
typedef enum hpvm_rt_tensor_layout_e {
  HPVM_RT_TENSOR_INPUT_BLOCKED = 1,  /* the input is [n][c / 16][h][w][16], else NCHW */
  HPVM_RT_TENSOR_OUTPUT_BLOCKED = 2, /* the output is [n][f / 16][oh][ow][16], else NCHW */
  HPVM_RT_TENSOR_FILTER_VARIABLE = 4, /* the filter and bias are not constants of the program
                                       * (they may change between calls): packed on each call,
                                       * never kept */
} hpvm_rt_tensor_layout_t;

/* out (blocked) = in (NCHW), and the reverse; c a multiple of 16, else nothing is done, with
 * a warning. On the thread pool. */
HPVM_RT_EXPORT void hpvm_rt_tensor_to_blocked_f32(const float *input, float *output, int64_t n,
                                                  int64_t c, int64_t h, int64_t w);
HPVM_RT_EXPORT void hpvm_rt_tensor_from_blocked_f32(const float *input, float *output,
                                                    int64_t n, int64_t c, int64_t h, int64_t w);

/* hpvm_rt_tensor_conv2d_constant_f32 (the first 20 parameters mean the same; filter and bias
 * constants of the program) with the input and/or the output blocked as `layouts` says (an
 * hpvm_rt_tensor_layout_t mask; a blocked operand's channels a multiple of 16); with
 * HPVM_RT_TENSOR_FILTER_VARIABLE in the mask, hpvm_rt_tensor_conv2d_f32 (filter and bias any
 * buffers, read afresh on each call). The same values bit for bit as that NCHW call on the
 * NCHW tensors. */
HPVM_RT_EXPORT void hpvm_rt_tensor_conv2d_blocked_f32(
    const float *input, const float *filter, const float *bias, float *output, int64_t n,
    int64_t c, int64_t h, int64_t w, int64_t f, int64_t kh, int64_t kw, int64_t oh, int64_t ow,
    int64_t pad_h, int64_t pad_w, int64_t stride_h, int64_t stride_w, int64_t groups,
    int64_t activation, double activation_max, int64_t layouts);

/* hpvm_rt_tensor_pool_f32 on blocked input and output (c a multiple of 16): the same values
 * bit for bit. */
HPVM_RT_EXPORT void hpvm_rt_tensor_pool_blocked_f32(const float *input, float *output,
                                                    int64_t kind, int64_t n, int64_t c,
                                                    int64_t h, int64_t w, int64_t window_h,
                                                    int64_t window_w, int64_t stride_h,
                                                    int64_t stride_w, int64_t pad_h,
                                                    int64_t pad_w, int64_t oh, int64_t ow);

/*===--------------------------------------------------------------------===*
 * Devices (targets of node versions and of GPU host code)
 *===--------------------------------------------------------------------===*/

typedef enum hpvm_rt_device_kind_e {
  HPVM_RT_DEVICE_CPU = 0,
  HPVM_RT_DEVICE_CUDA = 1,   /* CUDA driver API, libcuda.so.1 loaded with dlopen */
  HPVM_RT_DEVICE_OPENCL = 2, /* OpenCL ICD loader, libOpenCL.so.1 loaded with dlopen */
  HPVM_RT_DEVICE_KIND_COUNT = 3,
} hpvm_rt_device_kind_t;

typedef struct hpvm_device_t hpvm_rt_device_t; /* owned by the runtime; never freed by callers */

/* Returns the device of `kind`, opening its driver on first use.  UNAVAILABLE when the
 * driver library, a platform or a device is missing (the reason is in the message). */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_device_get(hpvm_rt_device_kind_t kind,
                                                                 hpvm_rt_device_t **out_device);
/* A short name for the device ("cpu", "cuda:NVIDIA H100", "opencl:pthread-..."). */
HPVM_RT_EXPORT const char *hpvm_rt_device_name(const hpvm_rt_device_t *device);

/*===--------------------------------------------------------------------===*
 * Graphs: task graphs inside a root, and launch / wait of a root
 *===--------------------------------------------------------------------===*/

/* One device version of a node.  `device` is where the policy may run it; for CPU versions
 * `device` is the CPU device.  data_item is the streaming item number, -1 otherwise. */
typedef hpvm_status_t (*hpvm_rt_node_fn_t)(void *context, hpvm_rt_device_t *device,
                                           int64_t data_item);

typedef struct hpvm_rt_node_version_t {
  hpvm_rt_device_kind_t device;
  hpvm_rt_node_fn_t fn;
} hpvm_rt_node_version_t;

typedef struct hpvm_rt_graph_t hpvm_rt_graph_t;

/* Creates an empty task graph.  `node_hint` pre-sizes it (0 is fine).  Owned by the caller. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_graph_create(uint32_t node_hint,
                                                                   hpvm_rt_graph_t **out_graph);
/* Adds a node with one or more device versions (copied).  The scheduling policy picks the
 * version per run; a CPU version is the fallback of the dynamic policy.  `name` is copied
 * (may be NULL).  Returns the node index (0, 1, ...) in out_node.  Not thread-safe against
 * other calls on the same graph. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t
hpvm_rt_graph_add_node(hpvm_rt_graph_t *graph, const char *name,
                       const hpvm_rt_node_version_t *versions, uint32_t version_count,
                       void *context, uint32_t *out_node);
/* Adds a node whose one (CPU) version is hpvm_rt_parallel_for(rank, extents, body, context): a
 * replicated leaf run as a sibling of others, without a compiled task function per leaf.  The
 * node is traced as `name` (HPVM_TRACE); an error of the parallel-for ends the program through
 * hpvm_rt_check_at(status, where), as compiled code checks every call.  `name`, `where` and
 * the extents are copied; `context` must stay valid until the graph ran.  rank is 1..3 and the
 * extents are not negative, else INVALID_ARGUMENT. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t
hpvm_rt_graph_add_grid(hpvm_rt_graph_t *graph, hpvm_rt_parallel_for_fn_t body, const char *name,
                       const char *where, uint32_t rank, const int64_t *extents, void *context,
                       uint32_t *out_node);
/* Adds a dependency: `dst` starts after `src` finished (an HPVM edge).  Cycles are
 * rejected by hpvm_rt_graph_run with INVALID_ARGUMENT. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_graph_add_edge(hpvm_rt_graph_t *graph,
                                                                     uint32_t src, uint32_t dst);
/* Runs every node once, independent nodes concurrently on the pool, respecting edges;
 * blocks until all finished (the caller helps).  The first failing node's status is
 * returned; nodes not yet started when a failure occurs are skipped (ABORTED in effect).
 * A graph may be run again after it returned.  Must not run concurrently with itself. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_graph_run(hpvm_rt_graph_t *graph);
/* Frees the graph.  NULL is a no-op.  Must not be running. */
HPVM_RT_EXPORT void hpvm_rt_graph_destroy(hpvm_rt_graph_t *graph);

/* A root node compiled to a host function: builds/runs its children (parallel-for, task
 * graphs, GPU launches) and writes its outputs into `args`.  Returns NULL or an error. */
typedef hpvm_status_t (*hpvm_rt_root_fn_t)(void *args);

typedef struct hpvm_rt_launch_t hpvm_rt_launch_t;

/* Starts `root(args)` asynchronously on the pool (HPVM launch, non-streaming).  `args` must
 * stay valid until hpvm_rt_wait returns.  Never blocks on the root's work. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_launch(hpvm_rt_root_fn_t root, void *args,
                                                             hpvm_rt_launch_t **out_launch);
/* Blocks until the launched root finished (the caller helps run pool work meanwhile), frees
 * the launch and returns the root's status.  Call exactly once per launch. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_wait(hpvm_rt_launch_t *launch);

/*===--------------------------------------------------------------------===*
 * Streaming graphs: one stage per node, bounded channels between them
 *===--------------------------------------------------------------------===*/

/* A stage body: reads one item from each input (in_items[i]) and writes one item to each
 * output (out_items[j], uninitialised memory of the output channel's element size).  Both
 * point into ring slots, valid only during the call.  data_item counts from 0 per stage.
 * Returning an error stops the pipeline: items already produced still reach the host, then
 * pop and push report the error.  A stream has fewer workers than stages when the runtime
 * has fewer threads, and a body holds its worker while it runs, so bodies must communicate
 * only through edges, never wait on the host or on another stage. */
typedef hpvm_status_t (*hpvm_rt_stage_fn_t)(void *context, hpvm_rt_device_t *device,
                                            int64_t data_item, const void *const *in_items,
                                            void *const *out_items);

typedef struct hpvm_rt_stage_version_t {
  hpvm_rt_device_kind_t device;
  hpvm_rt_stage_fn_t fn;
} hpvm_rt_stage_version_t;

typedef struct hpvm_rt_pipeline_t hpvm_rt_pipeline_t;
typedef struct hpvm_rt_stream_t hpvm_rt_stream_t;

/* Special channel endpoints for hpvm_rt_pipeline_connect. */
#define HPVM_RT_PIPELINE_HOST UINT32_MAX

/* Creates a pipeline description whose host input items are `input_size` bytes (the packed
 * root arguments, HPVM push) and whose host output items are `output_size` bytes (the packed
 * root outputs, HPVM pop; 0 = no outputs).  `capacity` is the ring capacity of every channel
 * (0 = default from HPVM_STREAM_CAPACITY, at least 16). */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_pipeline_create(size_t input_size,
                                                                      size_t output_size,
                                                                      uint32_t capacity,
                                                                      hpvm_rt_pipeline_t **out);
/* Adds a stage (a streaming node) with `input_count` inputs and `output_count` outputs whose
 * element sizes are given; versions as for graph nodes.  Returns the stage index. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_pipeline_add_stage(
    hpvm_rt_pipeline_t *pipeline, const char *name, const hpvm_rt_stage_version_t *versions,
    uint32_t version_count, void *context, uint32_t input_count, const size_t *input_sizes,
    uint32_t output_count, const size_t *output_sizes, uint32_t *out_stage);
/* Connects output `src_port` of stage `src` to input `dst_port` of stage `dst` (a streaming
 * edge).  src = HPVM_RT_PIPELINE_HOST means the host input (src_port must be 0);
 * dst = HPVM_RT_PIPELINE_HOST means the host output (dst_port 0).  An output may feed several
 * inputs (each gets a copy); every input and the host output must be fed exactly once;
 * element sizes must match. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_pipeline_connect(hpvm_rt_pipeline_t *pipeline,
                                                                       uint32_t src,
                                                                       uint32_t src_port,
                                                                       uint32_t dst,
                                                                       uint32_t dst_port);
/* Frees a pipeline description (launched streams keep their own copy).  NULL is a no-op. */
HPVM_RT_EXPORT void hpvm_rt_pipeline_destroy(hpvm_rt_pipeline_t *pipeline);

/* Validates the pipeline and starts its workers, min(stages, runtime threads) threads that
 * fire whichever stage is ready (HPVM launch, streaming). */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_stream_launch(const hpvm_rt_pipeline_t *pipeline,
                                                                    hpvm_rt_stream_t **out_stream);
/* Pushes one input item (copied).  Blocks while the input channel is full.
 * FAILED_PRECONDITION after close_input; the pipeline's error if it failed. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_stream_push(hpvm_rt_stream_t *stream,
                                                                  const void *item);
/* Pops one output item into `out_item` (output_size bytes).  Blocks until one is ready.
 * OUT_OF_RANGE at end of stream (input closed and everything drained); the pipeline's error
 * if a stage failed. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_stream_pop(hpvm_rt_stream_t *stream,
                                                                 void *out_item);
/* Marks the end of the input: stages drain what was pushed, then the output ends. */
HPVM_RT_EXPORT void hpvm_rt_stream_close_input(hpvm_rt_stream_t *stream);
/* Stops the pipeline as soon as possible: in-flight items are dropped, every blocked push/pop
 * (host or stage) returns CANCELLED.  hpvm_rt_stream_wait must still be called. */
HPVM_RT_EXPORT void hpvm_rt_stream_cancel(hpvm_rt_stream_t *stream);
/* Ends the stream: closes the input, lets every pushed item finish (outputs nobody popped are
 * discarded), joins the stages and frees the stream.  Returns the first stage error, if any.
 * Call exactly once; no other call on `stream` may run concurrently or afterwards. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_stream_wait(hpvm_rt_stream_t *stream);

/*===--------------------------------------------------------------------===*
 * Memory tracker (host / device copies of memory passed to graphs)
 *===--------------------------------------------------------------------===*/

typedef enum hpvm_rt_access_e {
  HPVM_RT_ACCESS_IN = 1,    /* read only: copy if stale, keep other copies valid */
  HPVM_RT_ACCESS_OUT = 2,   /* write only: no copy, every other copy becomes stale */
  HPVM_RT_ACCESS_INOUT = 3, /* read and write: copy if stale, other copies become stale */
} hpvm_rt_access_t;

/* Tracks the host object [ptr, ptr+size); the host copy is valid.  Threads share an object:
 * another thread's track of the same [ptr, ptr+size) adds a hold (launches from several
 * threads with one read-only input), and while several threads hold it a device request for
 * writing is FAILED_PRECONDITION.  ALREADY_EXISTS if this thread holds `ptr` already or it is
 * tracked with another size, INVALID_ARGUMENT if it overlaps a tracked object or size is 0. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_track(void *ptr, size_t size);
/* Drops one hold of the object starting at `ptr` (this thread's, else another's): copies a
 * newer device copy back to the host first; the last hold also frees every device copy.
 * NOT_FOUND for unknown pointers. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_untrack(void *ptr);
/* Stops tracking the object starting at `ptr` and frees its device copies without copying
 * anything back: for memory about to be freed (the arrays of values per instance that
 * kernels exchange).  Of a shared object it drops one hold, and the last one frees.
 * NOT_FOUND for unknown pointers. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_discard(void *ptr);
/* Makes the host copy of the tracked object containing [ptr, ptr+size) valid, copying from a
 * device only when the host copy is stale; with OUT/INOUT the device copies become stale
 * (the host will write).  size 0 = to the end of the object.  NOT_FOUND if untracked,
 * OUT_OF_RANGE if the range leaves the object. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_request_host(void *ptr, size_t size,
                                                                   hpvm_rt_access_t access);
/* Makes `device`'s copy of the tracked object containing `ptr` valid for `access` (allocating
 * it on first use) and returns its handle: a CUdeviceptr for CUDA, a cl_mem for OpenCL, the
 * host address for the CPU, always as uint64_t; `out_offset` is ptr's offset inside it.
 * The handle stays valid until untrack. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_request_device(void *ptr, size_t size,
                                                                     hpvm_rt_device_t *device,
                                                                     hpvm_rt_access_t access,
                                                                     uint64_t *out_handle,
                                                                     size_t *out_offset);

/*===--------------------------------------------------------------------===*
 * GPU host code: modules, kernels, device memory
 *===--------------------------------------------------------------------===*/

typedef enum hpvm_rt_image_format_e {
  HPVM_RT_IMAGE_PTX = 1,          /* CUDA: NUL-terminated or sized PTX text, JIT-compiled */
  HPVM_RT_IMAGE_CUBIN = 2,        /* CUDA: cubin or fatbin */
  HPVM_RT_IMAGE_SPIRV = 3,        /* OpenCL: OpenCL-flavoured (Kernel capability) SPIR-V */
  HPVM_RT_IMAGE_SPIR_BITCODE = 4, /* OpenCL: SPIR 1.2 LLVM bitcode (cl_khr_spir) */
} hpvm_rt_image_format_t;

/* A CUDA image may hold, beside each kernel K, the same kernel with 32-bit index arithmetic,
 * K followed by this suffix (same parameters): hpvm_rt_kernel_run launches it when the grid
 * has fewer than 2^31 instances and every buffer parameter fewer than 2^31 bytes. */
#define HPVM_RT_NARROW_KERNEL_SUFFIX "__i32"

/* A device code image.  For SPIRV, `fallback` may hold the same module as SPIR 1.2 bitcode
 * (llvm-spirv -r), used when the OpenCL device lacks IL support; without one the runtime runs
 * the translator named by HPVM_LLVM_SPIRV (default: llvm-spirv-15, then llvm-spirv). */
typedef struct hpvm_rt_module_image_t {
  hpvm_rt_image_format_t format;
  const void *data;
  size_t size;
  const void *fallback_data; /* optional SPIR 1.2 bitcode for SPIRV images */
  size_t fallback_size;
} hpvm_rt_module_image_t;

typedef struct hpvm_device_module_t hpvm_rt_module_t;
typedef struct hpvm_device_kernel_t hpvm_rt_kernel_t;

/* Grid of work-groups/blocks and the work-group/block size, 3-D (unused dims = 1). */
typedef struct hpvm_rt_launch_dims_t {
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t shared_memory_bytes; /* dynamic workgroup memory (CUDA only) */
} hpvm_rt_launch_dims_t;

/* One kernel argument: `size` bytes at `value` (a buffer handle is 8 bytes: pass &handle).
 * On OpenCL devices a NULL `value` is passed to clSetKernelArg as it is: `size` bytes of
 * __local memory per work-group for a __local parameter (a null buffer for a __global one). */
typedef struct hpvm_rt_kernel_arg_t {
  size_t size;
  const void *value;
} hpvm_rt_kernel_arg_t;

/* Loads a module on `device` (cuModuleLoadData / clCreateProgramWith{IL,Binary}+build).
 * INVALID_ARGUMENT when the format does not fit the device; the build log is in the
 * message on failure. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_module_load(hpvm_rt_device_t *device,
                                                                  const hpvm_rt_module_image_t *image,
                                                                  hpvm_rt_module_t **out_module);
/* Unloads a module and every kernel obtained from it.  NULL is a no-op. */
HPVM_RT_EXPORT void hpvm_rt_module_unload(hpvm_rt_module_t *module);
/* Looks up kernel `name`; NOT_FOUND if absent.  The kernel lives as long as its module. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_kernel_get(hpvm_rt_module_t *module,
                                                                 const char *name,
                                                                 hpvm_rt_kernel_t **out_kernel);
/* Launches `kernel` and waits for it to finish.  Thread-safe (per-kernel serialisation of
 * argument setting on OpenCL; no global lock). */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_kernel_launch(hpvm_rt_kernel_t *kernel,
                                                                    const hpvm_rt_launch_dims_t *dims,
                                                                    const hpvm_rt_kernel_arg_t *args,
                                                                    uint32_t arg_count);
/* Device memory: allocate `size` bytes (handle as for hpvm_rt_request_device), free, and
 * blocking copies with byte offsets into the device buffer. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_device_alloc(hpvm_rt_device_t *device,
                                                                   size_t size,
                                                                   uint64_t *out_handle);
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_device_free(hpvm_rt_device_t *device,
                                                                  uint64_t handle);
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_device_copy_to_device(
    hpvm_rt_device_t *device, uint64_t dst_handle, size_t dst_offset, const void *src, size_t size);
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_device_copy_to_host(
    hpvm_rt_device_t *device, void *dst, uint64_t src_handle, size_t src_offset, size_t size);
/* Waits for all work queued on the device. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_device_synchronize(hpvm_rt_device_t *device);

/*===--------------------------------------------------------------------===*
 * Kernel versions of nodes (what convert-hpvm-to-gpu's host code calls)
 *===--------------------------------------------------------------------===*/
typedef enum hpvm_rt_kernel_param_kind_e {
  HPVM_RT_PARAM_VALUE = 0,  /* `size` bytes at `value`, passed as they are */
  HPVM_RT_PARAM_BUFFER = 1, /* host memory at `host`: the kernel gets the device's copy */
  HPVM_RT_PARAM_WORKGROUP = 2, /* `size` bytes of memory per work-group (a tile's hpvm.alloc):
                                  OpenCL: a __local argument; CUDA: the byte offset (u64) of
                                  the buffer in the launch's dynamic shared memory */
} hpvm_rt_kernel_param_kind_t;

/* Or'ed into a BUFFER parameter's OUT access: the kernel writes every byte of the range, so
 * a tracked object's device copy need not start from the host data (no copy in).  Without it
 * OUT is copied in like INOUT, since a kernel may write only part of an out buffer. */
#define HPVM_RT_PARAM_WRITES_ALL 0x100u

typedef struct hpvm_rt_kernel_param_t {
  uint32_t kind;     /* hpvm_rt_kernel_param_kind_t */
  uint32_t access;   /* BUFFER: hpvm_rt_access_t, OUT possibly | HPVM_RT_PARAM_WRITES_ALL */
  uint64_t size;     /* VALUE: bytes at value (1..64); BUFFER: bytes from host the kernel may
                        touch (0: the rest of the tracked object containing host);
                        WORKGROUP: bytes per work-group (0 is taken as 1) */
  const void *value; /* VALUE */
  void *host;        /* BUFFER: host address; NULL is passed as a null device pointer */
} hpvm_rt_kernel_param_t;

/* A tensor node whose whole computation is one library call (cuDNN, cuBLAS) and the epilogue
 * the libraries do: act(conv2d(x, W) + bias) or act(x * W + bias), f32, bias and act optional.
 * convert-hpvm-to-gpu describes such nodes; on CUDA the runtime calls the library instead of
 * launching the node's generated kernel when the library loads (docs/GPUBackend.md). */
typedef enum hpvm_rt_tensor_library_op_e {
  HPVM_RT_TENSOR_LIBRARY_CONV2D = 1, /* cudnnConvolutionForward, NCHW x by FCHW W */
  HPVM_RT_TENSOR_LIBRARY_MATMUL = 2, /* cublasSgemm: [batch] M x K by K x N, row-major */
} hpvm_rt_tensor_library_op_t;

/* The activation applied last (the first three as hpvm_rt_tensor_activation_t). */
typedef enum hpvm_rt_tensor_library_activation_e {
  HPVM_RT_TENSOR_LIBRARY_IDENTITY = 0,
  HPVM_RT_TENSOR_LIBRARY_RELU = 1,
  HPVM_RT_TENSOR_LIBRARY_CLIPPED_RELU = 2, /* min(max(x, 0), clip) */
  HPVM_RT_TENSOR_LIBRARY_TANH = 3,
  HPVM_RT_TENSOR_LIBRARY_SIGMOID = 4,
} hpvm_rt_tensor_library_activation_t;

typedef struct hpvm_rt_tensor_library_call_t {
  uint32_t op;         /* hpvm_rt_tensor_library_op_t */
  uint32_t activation; /* hpvm_rt_tensor_library_activation_t */
  double clip;         /* CLIPPED_RELU: the upper bound */
  int64_t sizes[4];    /* CONV2D: the input's N C H W; MATMUL: batch M N K */
  int64_t filter[3];   /* CONV2D: F KH KW (W is F x C/groups x KH x KW); MATMUL: 0 */
  int64_t padding[2];  /* CONV2D: along H, W; MATMUL: 0 */
  int64_t strides[2];  /* CONV2D: along H, W; MATMUL: 0 */
  int64_t groups;      /* CONV2D: >= 1; MATMUL: 0 */
  int64_t output[4];   /* the result's sizes, padded with leading 1s to four */
  int64_t bias[4];     /* the bias's sizes likewise, each 1 or the result's; 0s: no bias */
  /* Where each tensor is in the node's parameter array (hpvm_rt_kernel_run's `params`): the
   * index of the first of its memref parameters (allocated pointer, aligned pointer, offset,
   * sizes, strides); bias_param -1 without a bias. */
  int32_t x_param;
  int32_t w_param;
  int32_t bias_param;
  int32_t output_param;
  /* The node's scalar outputs (HPVM-C's byte counts), constants: the buffer parameter of their
   * struct (-1: none) and its `scalars_size` bytes, which the runtime stores there after the
   * call (the generated kernel's first thread stores them otherwise). */
  int32_t scalars_param;
  const void *scalars;
  uint64_t scalars_size;
} hpvm_rt_tensor_library_call_t;

typedef struct hpvm_rt_kernel_site_t {
  const char *node;                     /* the node's name (traces, errors) */
  const char *kernel;                   /* the entry point's name in every image */
  const hpvm_rt_module_image_t *cuda;   /* PTX or cubin, or NULL */
  const hpvm_rt_module_image_t *opencl; /* SPIR-V (optionally with SPIR 1.2 fallback), or NULL */
  void *state;                          /* runtime-owned; the compiler zero-initialises it */
  /* The library call that computes the node on CUDA instead of the kernel, or NULL. */
  const hpvm_rt_tensor_library_call_t *library;
} hpvm_rt_kernel_site_t;

/* Runs the kernel version of a node over `grid` instances (per dimension; unused = 1) in
 * work-groups of `block` instances (all 0: the runtime picks; the kernel guards partial
 * work-groups itself), on the device the policy picks.  *out_ran = 1 when it ran there.
 * *out_ran = 0 with an OK status means the caller must run the CPU version (no device, no
 * image for it, HPVM_DEVICE=cpu, or the kernel could not start there: the reason is traced,
 * and warned once on stderr when it is not simply a missing device).  An error status means
 * the kernel failed after it started (the program's data may be partly written). */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_kernel_run(hpvm_rt_kernel_site_t *site,
                                                                 const int64_t grid[3],
                                                                 const int64_t block[3],
                                                                 const hpvm_rt_kernel_param_t *params,
                                                                 uint32_t param_count,
                                                                 int32_t *out_ran);
/* hpvm_rt_kernel_run for a leaf whose CPU version is `body` over a grid of `rank` dimensions
 * (the `context` and body hpvm_rt_parallel_for would get): when the leaf is `hinted` for the
 * CPU and a device (CPU_OR_GPU_TARGET, CPU_OR_SPIR_TARGET) and HPVM_SPLIT is unset, or when
 * HPVM_SPLIT=1, and a device can run the kernel, the grid is split: a contiguous range of its
 * outermost dimension runs on the device and the rest on the CPU's threads at the same time,
 * outputs written in place, the split following the measured speed of each side (see
 * docs/Runtime.md); *out_ran = 1 then.  Otherwise exactly hpvm_rt_kernel_run. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_kernel_run_split(
    hpvm_rt_kernel_site_t *site, const int64_t grid[3], const int64_t block[3],
    const hpvm_rt_kernel_param_t *params, uint32_t param_count, int32_t hinted, uint32_t rank,
    hpvm_rt_parallel_for_fn_t body, void *context, int32_t *out_ran);
/* The error of a node that no device ran and that has no CPU version (the compiler could not
 * make one: `reason`): FAILED_PRECONDITION naming both.  Compiled programs check it. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_no_cpu_version(const char *node,
                                                                     const char *reason);
/* NULL when a grid of `extent` instances along dimension `dim` (0: x, 1: y, 2: z) of node
 * `node` fits dimension `axis` of input `input`, an array of `size` elements that every
 * instance indexes by its id along `dim`; else OUT_OF_RANGE naming them (the last instances
 * would read or write past the array).  Compiled programs check it before running a grid. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_grid_fits(const char *node, int32_t dim,
                                                                int64_t extent, int32_t input,
                                                                int32_t axis, int64_t size);
/* The data of tensor input `input` of a launched tensor graph compiled for a tensor of `rank`
 * sizes `dims`: `tensor` is a tensor object of ApproxHPVM's host API (approxhpvm/tensor.h),
 * whose sizes must be `dims` (or, for another rank, hold as many elements), or else a plain
 * pointer to the data, returned as it is. A NULL tensor or other sizes stop the program with
 * an error naming the input and both shapes (hpvm_rt_check_at: a guarded call returns it);
 * so does a freed tensor object (named with the call that freed it) and one whose struct
 * Tensor the program changed. */
HPVM_RT_EXPORT void *hpvm_rt_tensor_input(void *tensor, int32_t rank, const int64_t *dims,
                                          int32_t input);
/* What a launched tensor graph returns in a tensor output field, for a tensor of `rank` sizes
 * `dims`, with its data (uninitialized) in *out_data. `objects` nonzero (at least one tensor
 * input of the launch was a tensor object): a new tensor object, which the program frees with
 * freeTensor, or which the next freeBatchMemory frees when made after startMemTracking.
 * Zero (plain data pointers only): a malloc'd buffer the program frees with free(). Out of
 * memory stops the program as hpvm_rt_tensor_input does. */
HPVM_RT_EXPORT void *hpvm_rt_tensor_output(int32_t rank, const int64_t *dims, void **out_data,
                                           int32_t objects);
/* With HPVM_TRACE=1 in the environment (read once), prints "hpvm-trace: <node> on <device>\n"
 * on stderr (device NULL = "cpu"); otherwise does nothing (one load of a cached flag).  With
 * device NULL and HPVM_PROFILE=1 (read once) it also starts timing a CPU run of `node` on this
 * thread, which hpvm_rt_trace_node_done ends. */
HPVM_RT_EXPORT void hpvm_rt_trace_node(const char *node, const char *device);
/* With HPVM_PROFILE=1 in the environment (read once; 0, unset or empty: off; anything else
 * stops the program naming the variable, as hpvm_rt_check_at does), ends the innermost run of
 * `node` that hpvm_rt_trace_node(node, NULL) started on this thread and adds its wall time to
 * the node's total.  At exit the runtime prints on stderr one line per node, largest total
 * first, "hpvm-profile: <total ms> <runs> <ms per run> <share>% <node>", then
 * "hpvm-profile: total <ms> ms in <runs> runs of <nodes> nodes".  Compiled programs call it
 * after each CPU run of a leaf.  Profiling off, it does nothing (one load of a cached flag). */
HPVM_RT_EXPORT void hpvm_rt_trace_node_done(const char *node);

/*===--------------------------------------------------------------------===*
 * Scheduling policy
 *===--------------------------------------------------------------------===*/

typedef enum hpvm_rt_policy_kind_e {
  HPVM_RT_POLICY_STATIC_NODE = 0, /* each node always runs the version chosen for it */
  HPVM_RT_POLICY_STATIC_ITEM = 1, /* streaming item k runs version k mod #versions */
  HPVM_RT_POLICY_DYNAMIC = 2,     /* preferred device if present, healthy and idle, else CPU */
} hpvm_rt_policy_kind_t;

/* Replaces the runtime's policy.  Takes effect for nodes started afterwards. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_policy_set(hpvm_rt_policy_kind_t kind);
/* For the static-node policy: node name `node_name` runs on `device` (when it has such a
 * version).  Nodes without an assignment run their first version. */
HPVM_RT_EXPORT HPVM_RT_MUST_USE hpvm_status_t hpvm_rt_policy_assign(const char *node_name,
                                                                    hpvm_rt_device_kind_t device);

/*===--------------------------------------------------------------------===*
 * MLIR gpu-to-llvm wrappers (the mgpu* symbols generated host code calls)
 *===--------------------------------------------------------------------===*/
/* Implemented over the dlopen'ed CUDA driver with the signatures of MLIR 22's
 * CudaRuntimeWrappers.cpp.  They return no status: on an error they print it and exit(1),
 * as hpvm_rt_check does.  Handles are the CUDA driver's (CUmodule, CUfunction, CUstream, ...). */
HPVM_RT_EXPORT void *mgpuModuleLoad(void *data, size_t size);
HPVM_RT_EXPORT void *mgpuModuleLoadJIT(void *data, int opt_level, size_t size);
HPVM_RT_EXPORT void mgpuModuleUnload(void *module);
HPVM_RT_EXPORT void *mgpuModuleGetFunction(void *module, const char *name);
HPVM_RT_EXPORT void mgpuLaunchKernel(void *function, intptr_t grid_x, intptr_t grid_y,
                                     intptr_t grid_z, intptr_t block_x, intptr_t block_y,
                                     intptr_t block_z, int32_t shared_memory_bytes, void *stream,
                                     void **params, void **extra, size_t param_count);
HPVM_RT_EXPORT void mgpuLaunchClusterKernel(void *function, intptr_t cluster_x, intptr_t cluster_y,
                                            intptr_t cluster_z, intptr_t grid_x, intptr_t grid_y,
                                            intptr_t grid_z, intptr_t block_x, intptr_t block_y,
                                            intptr_t block_z, int32_t shared_memory_bytes,
                                            void *stream, void **params, void **extra,
                                            size_t param_count);
HPVM_RT_EXPORT void *mgpuStreamCreate(void);
HPVM_RT_EXPORT void mgpuStreamDestroy(void *stream);
HPVM_RT_EXPORT void mgpuStreamSynchronize(void *stream);
HPVM_RT_EXPORT void mgpuStreamWaitEvent(void *stream, void *event);
HPVM_RT_EXPORT void *mgpuEventCreate(void);
HPVM_RT_EXPORT void mgpuEventDestroy(void *event);
HPVM_RT_EXPORT void mgpuEventSynchronize(void *event);
HPVM_RT_EXPORT void mgpuEventRecord(void *event, void *stream);
HPVM_RT_EXPORT void *mgpuMemAlloc(uint64_t size, void *stream, bool is_host_shared);
HPVM_RT_EXPORT void mgpuMemFree(void *ptr, void *stream);
HPVM_RT_EXPORT void mgpuMemcpy(void *dst, void *src, size_t size, void *stream);
HPVM_RT_EXPORT void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream);
HPVM_RT_EXPORT void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream);
HPVM_RT_EXPORT void mgpuSetDefaultDevice(int32_t device);

#ifdef __cplusplus
}
#endif

#endif /* HPVM_HPVM_RT_H */
